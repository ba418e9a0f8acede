# banditrepro: reproduction pipeline for three bandit papers (see README.md).
from snakemake.utils import min_version

min_version("8.0")


# the default config lives beside this file, so `--directory` elsewhere still finds it
configfile: f"{workflow.basedir}/config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/report.smk"


onstart:
    attach_progress_line()
    coalesce_reevaluation_timers(workflow.scheduler)


rule all:
    default_target: True
    input:
        all_targets(),
