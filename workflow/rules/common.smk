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

from banditrepro import ReproError, leaderboard
from banditrepro.workflow import (
    batches,
    digests,
    engine,
    jobs,
    publish,
    software,
    stop,
    warmup,
)
from banditrepro.workflow.config import fail
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


def probed():
    """Wait for the optional datasets' probes (checkpoints), then name the figures and what reads them by
    what the probes found: every job past the summaries asks for its inputs through this, so none runs
    under, or reads by, a name computed before the probes ran (a first run)."""
    for dataset in PLAN.optional_datasets():
        checkpoints.probe_dataset.get(dataset=dataset)
    PLAN.rename_outputs()


def drawn_inputs():
    """What claims and the report read: the figures' tables and, beside them, the summaries and prepared
    files the figures drew (declared, so that one deleted by hand is made again first, never read as missing).
    """
    return sorted(
        {
            t
            for fig in PLAN.figures
            for t in [
                *STORE.figure_outputs(fig.paper, fig.id),
                *PLAN.figure_inputs(fig.paper, fig.id, get_dataset_status),
            ]
        }
    )


def get_claims_inputs(wildcards):
    probed()
    PLAN.check_key("claims", None, wildcards.key)
    return drawn_inputs()


def get_report_inputs(wildcards):
    """The report's inputs by the names the probes settled (never an entry named before them)."""
    probed()
    PLAN.check_key("report", None, wildcards.key)
    return {
        "drawn": drawn_inputs(),
        "claims": STORE.claims_csv,
        "runtime": STORE.runtime_csv,
        "software": STORE.software_json,
        "leaderboards": leaderboard.tables(PLAN.figures, STORE),
    }


def get_leaderboard_inputs(wildcards):
    probed()
    PLAN.check_key("leaderboard", wildcards.paper, wildcards.key)
    return leaderboard.inputs(PLAN.figures, STORE, wildcards.paper)


def get_dataset_status(dataset):
    """For optional datasets: the probe's verdict (evaluated after the checkpoint ran)."""
    from banditrepro.probes import probe_verdict

    path = checkpoints.probe_dataset.get(dataset=dataset).output[0]
    return path, probe_verdict(path).available


def get_figure_inputs(wildcards):
    probed()
    PLAN.check_key("figure", (wildcards.paper, wildcards.figure), wildcards.key)
    return PLAN.figure_inputs(wildcards.paper, wildcards.figure, get_dataset_status)


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
    """What rule ``all`` asks for first (Plan.first_targets); with ``first_run`` set, an optional dataset's
    batches only where its probe found it (offline, Yahoo30 is probed, never fetched).
    """
    return PLAN.first_targets(get_dataset_status)


def get_published_targets(wildcards):
    """Every store entry the run publishes, asked for once the optional datasets' probes have run."""
    if PLAN.partial:  # first_run set: shards only
        return []
    probed()
    return PLAN.all_targets() + leaderboard.targets(PLAN.figures, STORE)
