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

from banditrepro import ReproError
from banditrepro.workflow.plan import split_key

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
def simulate(plan, input, output, log):
    """Every shard in ``output`` (one for rule `simulate`, a bin's for `simulate_bin_a_b`), in order."""
    from banditrepro.cell import simulate_shard

    lines = []
    for path in output:
        cell, first, last = plan.parse_shard(path)
        _, horizon, algo = split_key(cell)
        try:
            results = simulate_shard(algo, plan.prepared_of_cell(cell), horizon, first, last,
                                     plan.config["base_seed"], path)
        except ReproError:
            raise
        except Exception as exc:  # a kernel that raises (a plugin, a challenger): its job fails naming it
            raise ReproError(f"algorithm {algo!r} failed on {cell} (runs {first}-{last}): "
                             f"{type(exc).__name__}: {exc}") from None
        lines += [r.describe() for r in results]
    return "\n".join(lines) + "\n"


@logged
def summarize(plan, wildcards, input, output, log):
    from banditrepro.aggregate import write_summary

    runs = plan.runs_of(wildcards.dataset, wildcards.horizon, wildcards.algo)
    write_summary(list(input), output[0], runs)
    return f"{runs} runs of {len(input)} shards summarized\n"


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
    """report.md (every figure, table and claim) and reproduction.md (claims and deviations)."""
    from banditrepro.report import build_report, build_reproduction

    lay = plan.layout
    build_report(plan.figures, lay, input.claims, input.runtime, output[0])
    build_reproduction(plan.figures, lay, input.claims, plan.deviations_file(), output.reproduction)
    return f"wrote {output[0]}, {output.reproduction}\n"
