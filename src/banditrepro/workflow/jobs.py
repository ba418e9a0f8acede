"""Bodies of the in-process jobs (`run:` blocks of workflow/rules/*.smk; the default profile runs them on
threads of the Snakemake process, so a job costs its work, not an interpreter start and imports).

Every body takes the ``Plan`` first and Snakemake's ``log`` last, and returns its log text; ``logged``
writes that text and the CPU seconds the body took on its thread (benchmarks/bench_pipeline.py sums them).
"""

from __future__ import annotations

import functools
import threading
import time
from pathlib import Path

from banditrepro.workflow.plan import cell_key

# Figures share matplotlib's global font and text caches: draw one at a time (cells keep the other cores).
_DRAW_LOCK = threading.Lock()


def logged(body):
    """A job body returning its log text, ``log`` its last argument: the log gets that text, then
    ``body CPU seconds: x`` (what the job cost besides Snakemake's own bookkeeping)."""

    @functools.wraps(body)
    def job(*args):
        cpu0 = time.thread_time()
        text = body(*args)
        Path(args[-1][0]).write_text(f"{text.rstrip()}\nbody CPU seconds: {time.thread_time() - cpu0:.4f}\n")

    return job


@logged
def simulate(plan, wildcards, input, output, log):
    """A batch (rule `simulate`, wildcard ``batch``): its shards not complete yet, then its receipt."""
    from banditrepro.warmup import preload
    from banditrepro.workflow.batches import run_batch

    batch = plan.batch(wildcards.batch)
    # a first run's warm-up may be compiling this batch's kernel: wait for it rather than compile it twice
    preload(cell.split("/")[2] for cell, _, _ in batch.shards)
    return run_batch(plan, batch, input[0], output[0])


@logged
def summarize(plan, wildcards, input, output, log):
    """A cell's summary from its shards (the plan's list; the inputs are the receipts of their batches). A
    shard gone or corrupt since the plan checked the receipts (docs/decisions.md#receipts-checked): its
    batches' receipts are removed too, so the same command again computes that shard alone. An I/O error or
    MemoryError deletes nothing (docs/decisions.md#only-corruption-deletes)."""
    from banditrepro import ReproError
    from banditrepro.aggregate import CorruptRemoved, write_summary

    runs = plan.runs_of(wildcards.dataset, wildcards.horizon, wildcards.algo)
    cell = cell_key(wildcards.dataset, int(wildcards.horizon), wildcards.algo)
    shards = [(cell, a, b) for a, b in plan.cell_shards[cell]]
    paths = [plan.shard(*s) for s in shards]
    gone = [s for s, p in zip(shards, paths) if not Path(p).is_file()]
    if gone:
        plan.forget_batches_of(gone)
        raise ReproError(f"shard {plan.shard(*gone[0])} is missing (deleted after its batch ran?): "
                         "run the same command again to compute it")
    try:
        write_summary(paths, output[0], runs)
    except CorruptRemoved:  # only corruption deletes (docs/decisions.md#only-corruption-deletes)
        plan.forget_batches_of([s for s, p in zip(shards, paths) if not Path(p).is_file()])
        raise
    return f"{runs} runs of {len(paths)} shards summarized\n"


@logged
def figure(plan, wildcards, output, log):
    """One manifest figure and its table (CSV, Markdown, LaTeX)."""
    from banditrepro.figures import build_figure

    lay = plan.layout
    fig = plan.figure(wildcards.paper, wildcards.figure)
    with _DRAW_LOCK:
        build_figure(fig, lay, output.png, output.pdf, output.table)
    return f"{fig.stem}: wrote {output.png}, {output.pdf}, {output.table}\n"


@logged
def claims(plan, output, log):
    from banditrepro.claims import write_claims

    lay = plan.layout
    lines = write_claims(plan.figures, lay, output[0])
    return "\n".join(lines) + "\n"


@logged
def runtime_table(plan, input, output, log):
    from banditrepro.aggregate import write_runtime_table

    write_runtime_table(list(input), output[0])
    return f"{len(input)} summaries\n"


@logged
def report(plan, input, output, log):
    """report.md (every figure, table and claim) and reproduction.md (claims and deviations); the leaderboards
    of papers no challenger joins any more are removed, as a fresh run would not have them."""
    from banditrepro.challengers import remove_stale_leaderboards
    from banditrepro.report import build_report, build_reproduction

    lay = plan.layout
    build_report(plan.figures, lay, input.claims, input.runtime, output[0])
    build_reproduction(plan.figures, lay, input.claims, plan.deviations_file(), output.reproduction)
    removed = remove_stale_leaderboards(plan.figures, lay)
    return f"wrote {output[0]}, {output.reproduction}\n" + "".join(f"removed stale {p}\n" for p in removed)
