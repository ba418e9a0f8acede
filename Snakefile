# banditrepro: reproduction pipeline for three bandit papers (see README.md). Every rule file is included
# here; their Python lives in the package (src/banditrepro/workflow/).
from snakemake.utils import min_version

min_version("9.0")


# the default config lives beside this file, so `--directory` elsewhere still finds it
configfile: f"{workflow.basedir}/config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/leaderboard.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/software.smk"


# a quiet dry run prints its job table once (Snakemake internals: soft, banditrepro/workflow/engine.py)
engine.at_parse(workflow)


onstart:
    # before any job (never in a dry run): cluster mode without SLURM stops here with one line; then the
    # progress line and the scheduler patch, each skipped with a warning line if Snakemake changed
    engine.at_start(workflow, PLAN.config)
    # Ctrl-C and SIGTERM reach the in-process batches too (banditrepro/workflow/stop.py)
    stop.install()
    # kernels not cached yet compile in background processes beside the data jobs (a first run)
    warmup.on_start(PLAN, workflow)


onerror:
    # a failed run's last line: the fixed paths were not updated and which config they still show
    # (banditrepro/workflow/publish.py)
    publish.on_error(PLAN)


rule all:
    # the last step of every run that is not a dry run (a rule with a body and no output always runs): every
    # store entry of this config published at its fixed path where the bytes differ, whatever
    # --rerun-triggers or Snakemake's records say (banditrepro/workflow/publish.py)
    default_target: True
    input:
        # the summaries first, so that the simulation starts while a first run's probes run (first_run set:
        # the batches' ends, and nothing after them)
        get_first_targets,
        get_published_targets,
    log:
        PLAN.log("publish"),
    run:
        jobs.publish(PLAN, input, log)
