# Parse time: validate the config and plan the run (banditrepro.workflow.plan: cells, runs, the name of every
# stored result, shards, batches of the missing shards), then wildcard constraints and the input functions the
# rules call. Every path comes from the plan's Layout (banditrepro/layout.py): results are stored under names
# that cover everything their bytes depend on (banditrepro/workflow/names.py), so a file under its name is
# current whatever Snakemake's records say, and the plan reads and writes nothing (a dry run is read-only).
# The job bodies: banditrepro.workflow.jobs.
import sys
from pathlib import Path

# Parse time and in-process jobs import the package from this checkout even if it is not installed;
# shell jobs run `python -m banditrepro` from the installed package (README, envs/banditrepro.yaml).
SRC = str(Path(workflow.basedir) / "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)

from banditrepro import ReproError
from banditrepro.workflow import (
    batches,
    engine,
    jobs,
    publish,
    stop,
    warmup,
)
from banditrepro.workflow.config import fail
from banditrepro.workflow.inputs import Inputs
from banditrepro.workflow.plan import build_plan

try:
    # cluster mode: the SLURM profile's `set-resources: simulate: batch_minutes`, which no --configfile or
    # --config replaces (docs/decisions.md#cluster-mode); Snakemake passes it on to every job step
    PLAN = build_plan(
        config, workflow.basedir, cluster_minutes=engine.profile_minutes(workflow)
    )
except (ReproError, ValueError) as exc:
    fail(exc)
# the fixed paths a reader opens (written only by rule `all`, workflow/publish.py)
LAYOUT = PLAN.layout
STORE = PLAN.store  # every job's outputs, named by what they derive from
# what each rule past the summaries reads, asked for once the optional datasets' probes ran (workflow/inputs.py)
INPUTS = Inputs(PLAN, checkpoints)


# Under a cluster executor only the simulation is submitted (in batches, workflow/rules/simulate.smk): the
# rest runs in the Snakemake process on the submitting host. Downloads need its network; the others read
# and write small files (a summary ~20 ms, a figure ~1 s) and would cost a node two Snakemake start-ups each.
localrules:
    all,
    fetch_raw,
    probe_dataset,
    prepare_dataset,
    batch_spec,
    summarize_cell,
    runtime_table,
    figure,
    claims,
    report_md,


wildcard_constraints:
    dataset=r"[a-z0-9][a-z0-9-]*",
    horizon=r"\d+",
    algo=r"[a-z0-9][^/]*",
    run=r"\d+",
    batch=batches.NAME_PATTERN,
    paper=r"[a-z0-9-]+",
    figure=r"[a-z0-9-]+",
    key=r"[0-9a-f]{16}",


# --- input functions (and params computed per job) ------------------------------------------------------


def get_batch_inputs(wildcards):
    """A batch's prepared dataset and, in cluster mode, its spec (what its node computes)."""
    inputs = {"prepared": PLAN.batch_prepared(wildcards.batch)}
    if PLAN.cluster:
        inputs["spec"] = LAYOUT.batch_spec(wildcards.batch)
    return inputs


def get_batch_runtime(wildcards, attempt):
    """Minutes SLURM gives a batch: 3 x its estimate + 5, doubled on each retry (Snakemake's `attempt`)."""
    return PLAN.batch_runtime(wildcards.batch, attempt)


def get_cell_inputs(wildcards):
    PLAN.check_key(
        "summary",
        (wildcards.dataset, int(wildcards.horizon), wildcards.algo),
        wildcards.key,
    )
    return PLAN.cell_inputs(wildcards.dataset, wildcards.horizon, wildcards.algo)


def get_runtime_inputs(wildcards):
    return PLAN.runtime_inputs()


def get_claims_inputs(wildcards):
    return INPUTS.claims(wildcards.key)


def get_report_inputs(wildcards):
    return INPUTS.report(wildcards.key)


def get_leaderboard_inputs(wildcards):
    return INPUTS.leaderboard(wildcards.paper, wildcards.key)


def get_figure_inputs(wildcards):
    return INPUTS.figure(wildcards.paper, wildcards.figure, wildcards.key)


def get_figure_caption(wildcards):
    return PLAN.figure_caption(wildcards.paper, wildcards.figure)


def get_raw_inputs(wildcards):
    PLAN.check_key("data", wildcards.dataset, wildcards.key)
    return [LAYOUT.raw_file(s) for s in PLAN.catalog.raw_inputs(wildcards.dataset)]


def get_fallback_inputs(wildcards):
    return [
        LAYOUT.prepared_file(d) for d in PLAN.catalog.dataset_inputs(wildcards.dataset)
    ]


def get_user_file(wildcards):
    return [f for f in [PLAN.declared_file(wildcards.dataset)] if f]


def get_first_targets(wildcards):
    return INPUTS.first()


def get_published_targets(wildcards):
    return INPUTS.published()
