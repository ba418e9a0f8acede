"""How many runs of a cell one shard holds, i.e. one workflow job computes (config ``cells_per_job: auto``).

Snakemake spends tens of ms of CPU per job on its own bookkeeping here, more than the work of most cells
(a C2B-KL run at T = 1e5 is ~1 ms of kernel plus ~4 ms of cell-file writing). ``auto`` groups a cell's
runs into jobs of about ``target_seconds`` of estimated work, so the bookkeeping stays a small share,
while long cells keep one run per job for parallelism. A kernel's cost (ns per step) is its spec's
``ns_per_step`` (medians over the default run's cells with T >= 1e5, 2 cores under load: estimates, a factor
of a few either way moves a job between ~0.1 and ~2 s, which neither the overhead share nor the load balance
notices); a plugin without one counts as ``algorithms.base.DEFAULT_NS_PER_STEP``. The grouping never changes
a run's bytes: each run has its own seed key, whichever shard holds it. These estimates size the work only:
``banditrepro estimate``'s CPU forecast has its own, measured costs (banditrepro/workflow/costs.py).
"""

from __future__ import annotations

import math

RUN_SECONDS = 0.004  # per run besides the kernel: generator, recorder, writing the .npz and its sidecar
# Snakemake costs tens of ms per job: 0.5 s gave 716 jobs for the default config, 2 s 432 run files in
# 238 shards; 5 s gives 211 shards (1,966 at runs=1000, so a local run writes < 10,000 files)
TARGET_SECONDS = 5.0
# round shard sizes (once one workflow rule per size; now only readable runs<a>-<b> boundaries)
SIZES = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def kernel_seconds(algorithm: str, horizon: int) -> float:
    """A run's kernel seconds by the kernel's ``ns_per_step`` (its spec, or the default for a plugin)."""
    from banditrepro import algorithms

    return horizon * algorithms.get(algorithm.split("+")[0]).cost_ns_per_step * 1e-9


def run_seconds(algorithm: str, horizon: int) -> float:
    """Estimated seconds of one run of ``algorithm`` (name or id) at ``horizon``."""
    return RUN_SECONDS + kernel_seconds(algorithm, horizon)


def runs_per_job(algorithm: str, horizon: int, runs: int, target_seconds: float = TARGET_SECONDS) -> int:
    """Largest size of the series ``SIZES`` whose job stays within ``target_seconds`` (at least 1)."""
    fit = max(1, math.floor(target_seconds / run_seconds(algorithm, horizon)))
    k = max(s for s in SIZES if s <= fit)
    return min(k, runs)


def chunks(runs: int, k: int) -> list[tuple[int, int]]:
    """Inclusive run ranges [(first, last), ...] of ``runs`` runs, ``k`` per job (the last may be short)."""
    return [(a, min(a + k, runs) - 1) for a in range(0, runs, k)]
