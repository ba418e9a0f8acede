"""Bodies of the in-process jobs (`run:` blocks of workflow/rules/*.smk; the default profile runs them on
threads of the Snakemake process, so a job costs its work, not an interpreter start and imports).

Every body takes the ``Plan`` first and Snakemake's ``log`` last, and returns its log text; ``logged``
writes that text and the CPU seconds the body took on its thread (benchmarks/bench_pipeline.py sums them).
Every body writes store entries (``plan.store``: paths named by what they derive from); ``publish`` (rule
``all``) copies them to the fixed paths a reader opens.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

from banditrepro.workflow.cells import algorithm_of, cell_key


def declared(input, paths, job: str) -> None:
    """A job reads only files Snakemake made before it: every path it is about to read by the plan's names must
    be among its declared inputs, whatever order the scheduler chose (a name computed before a first run's
    probes ran would otherwise be read while another job may still be writing it, or never)."""
    from banditrepro import ReproError

    missing = sorted(set(paths) - set(input))
    if missing:
        raise ReproError(f"{job} would read {missing[0]}, which is not among its inputs (named before the "
                         "probes ran?): run snakemake again")


def logged(body):
    """A job body returning its log text, ``log`` its last argument: the log gets that text, then
    ``body CPU seconds: x`` (what the job cost besides Snakemake's own bookkeeping)."""

    @functools.wraps(body)
    def job(*args):
        cpu0 = time.thread_time()
        text = body(*args)
        Path(args[-1][0]).parent.mkdir(parents=True, exist_ok=True)
        Path(args[-1][0]).write_text(f"{text.rstrip()}\nbody CPU seconds: {time.thread_time() - cpu0:.4f}\n")

    return job


@logged
def batch_spec(plan, wildcards, output, log):
    """Cluster mode: what a batch computes, written before it is submitted (its node reads it)."""
    from banditrepro.workflow.batches import write_spec

    batch = plan.batch(wildcards.batch)
    write_spec(output[0], batch, [plan.shard_id(*s) for s in batch.shards])
    return f"{batch.name}: {len(batch.shards)} shards\n"


@logged
def simulate(plan, wildcards, input, output, log):
    """A batch (rule `simulate`, wildcard ``batch``): its shards whose files do not exist, then its end. A node
    (cluster mode) takes the batch from its spec, the main process from its plan."""
    from banditrepro.workflow.batches import check_names, read_spec, run_batch
    from banditrepro.workflow.warmup import preload

    name = wildcards.batch
    if "spec" in input.keys():
        batch = read_spec(input.spec, name)
        check_names(plan, batch)
    else:
        batch = plan.batch(name)
    # a first run's warm-up may be compiling this batch's kernel: wait for it rather than compile it twice
    preload(algorithm_of(cell) for cell, _, _ in batch.shards)
    return run_batch(plan, batch, input.prepared, output[0])


@logged
def summarize(plan, wildcards, input, output, log):
    """A cell's summary from its shards. A shard missing here (its batch's end outlived it: the run was stopped
    before this summary, and the shard was deleted since) is computed here first, as its batch would have.
    An I/O error or MemoryError deletes nothing (docs/decisions.md#only-corruption-deletes)."""
    from banditrepro.aggregate import write_summary
    from banditrepro.workflow.batches import compute_shard, log_computed

    runs = plan.runs_of(wildcards.dataset, wildcards.horizon, wildcards.algo)
    cell = cell_key(wildcards.dataset, int(wildcards.horizon), wildcards.algo)
    shards = [(cell, a, b) for a, b in plan.cell_shards[cell]]
    lines = []
    for s in shards:
        if not Path(plan.shard(*s)).is_file():
            compute_shard(plan, s, plan.prepared_of_cell(cell))
            log_computed(plan.layout.shards_log, plan.shard_id(*s))
            lines.append(f"{plan.shard_id(*s)}: missing, computed")
    write_summary([plan.shard(*s) for s in shards], output[0], runs)
    return "".join(f"{x}\n" for x in lines) + f"{runs} runs of {len(shards)} shards summarized\n"


@logged
def figure(plan, wildcards, output, log):
    """One manifest figure and its table (CSV, Markdown, LaTeX), into the store."""
    from banditrepro.figures import build_figure
    from banditrepro.plotting import DRAW_LOCK

    fig = plan.figure(wildcards.paper, wildcards.figure)
    with DRAW_LOCK:
        build_figure(fig, plan.store, output.png, output.pdf, output.table)
    return f"{fig.stem}: wrote {output.png}, {output.pdf}, {output.table}\n"


@logged
def claims(plan, input, output, log):
    from banditrepro.claims import write_claims

    declared(input, [t for f in plan.figures for t in plan.store.figure_outputs(f.paper, f.id)], "claims")
    lines = write_claims(plan.figures, plan.store, output[0])
    return "\n".join(lines) + "\n"


@logged
def leaderboard(plan, wildcards, output, log):
    """A paper's leaderboard (only with challengers): drawn under the figures' lock, since matplotlib's font
    and text caches are global."""
    from banditrepro.leaderboard import build
    from banditrepro.plotting import DRAW_LOCK

    with DRAW_LOCK:
        df = build(plan.figures, plan.store, wildcards.paper, output.csv, output.md, output.png, output.pdf)
    return f"{wildcards.paper}: {df.algorithm.nunique()} lines, {len(df)} rows\n"


@logged
def runtime_table(plan, input, output, log):
    from banditrepro.aggregate import write_runtime_table

    write_runtime_table(list(input), output[0])
    return f"{len(input)} summaries\n"


@logged
def report(plan, input, output, log):
    """report.md (every figure, table and claim) and reproduction.md (claims and deviations)."""
    from banditrepro import leaderboard
    from banditrepro.report import build_report, build_reproduction

    st = plan.store
    declared(input, [st.claims_csv, st.runtime_csv, *leaderboard.tables(plan.figures, st)], "report")
    build_report(plan.figures, st, input.claims, input.runtime, output[0])
    build_reproduction(plan.figures, st, input.claims, plan.deviations_file(), output.reproduction)
    return f"wrote {output[0]}, {output.reproduction}\n"


@logged
def software(plan, output, log):
    from banditrepro.workflow import software

    software.write(output[0])
    return f"wrote {output[0]}\n"


@logged
def publish(plan, input, log):
    """Rule ``all``: every store entry of this config copied to its fixed path where the bytes differ, and
    published files this config does not make removed, or nothing and a STALE line (workflow/publish.py)."""
    from banditrepro.workflow.publish import announce
    from banditrepro.workflow.publish import publish as publish_all

    text = publish_all(plan)
    announce(text)
    return text
