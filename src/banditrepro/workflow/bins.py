"""Cluster submissions sized by work: the missing shards packed into bins of about ``job_minutes``.

Why bins and not Snakemake group jobs: the SLURM plugin runs each connected component of a group job
through its own ``srun snakemake`` on the node (group settings are not passed to the job step), and a
group's ``run:`` jobs each in a Snakemake subprocess of their own (``--force-use-threads`` is not passed
to groups), so a group of n shards costs n Snakemake start-ups (~3 s each here) on the node. A bin is one
ordinary job (rule ``simulate_bin_<a>_<b>``) whose body computes its shards in one process: one
submission, two Snakemake start-ups, whatever the number of shards (docs/decisions.md#cluster-bins).

A bin writes exactly the files the per-shard rule ``simulate`` writes, and Snakemake records the same
things for them (one prepared dataset as input, no params, the same job body), so a shard written by a bin
is up to date for a later local run and the other way round. Hence a bin holds shards of one dataset.

Bins are named by a range [a, b] of indices into ``Plan.all_shards`` (every shard of every chain, in a
fixed order): the chains, and so the indices, stay the same while shards get written, and the shards of a
range that are missing are the same for the main process and for the node that computes them, so a node
plans the bin it was sent from its command line (``--target-jobs simulate_bin_<a>_<b>``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from banditrepro import ReproError

RULE = re.compile(r"simulate_bin_(\d+)_(\d+)$")
# A bin's SLURM time limit: the estimate (jobsize: ns/step medians, right within a factor of a few) times
# SAFETY, plus START_MINUTES for the node's two Snakemake start-ups, the kernels' numba cache loads and a
# slow shared file system. Too short a limit kills a job near its end; too long only queues it later.
SAFETY = 3.0
START_MINUTES = 5


@dataclass(frozen=True)
class Bin:
    first: int  # index range into Plan.all_shards
    last: int
    shards: tuple  # ((cell, first run, last run), ...): the missing shards of the range
    seconds: float  # estimated work

    @property
    def name(self) -> str:
        return f"simulate_bin_{self.first}_{self.last}"

    @property
    def minutes(self) -> int:
        return requested_minutes(self.seconds)


def requested_minutes(seconds: float) -> int:
    """SLURM runtime (minutes) of a job of ``seconds`` estimated work."""
    return START_MINUTES + math.ceil(seconds * SAFETY / 60)


def ranges_from_argv(argv) -> list[tuple[int, int]] | None:
    """The bins a cluster node was started for (``--target-jobs simulate_bin_a_b ...``), or None when the
    command line targets no bin (the main process, which packs the bins itself)."""
    args = list(argv)
    if "--target-jobs" not in args:
        return None
    found = []
    for spec in args[args.index("--target-jobs") + 1:]:
        if spec.startswith("-"):
            break
        m = RULE.match(spec.partition(":")[0])
        if m:
            found.append((int(m.group(1)), int(m.group(2))))
    return found


def pack(shards, missing, seconds, dataset_of, target_seconds: float, ranges=None) -> list[Bin]:
    """Bins of the ``missing`` shards among ``shards`` (Plan.all_shards order), each of one dataset and of
    about ``target_seconds`` of ``seconds(*shard)``: a dataset's n = ceil(work / target) bins get equal
    shares of its work, cut greedily in order. ``ranges``: the bins a node was sent, taken as they are."""
    if ranges is not None:
        held = [(a, b, tuple(s for s in shards[a:b + 1] if s in missing)) for a, b in ranges]
        return [Bin(a, b, todo, sum(seconds(*s) for s in todo)) for a, b, todo in held]
    todo = [(i, s) for i, s in enumerate(shards) if s in missing]
    by_dataset: dict[str, list] = {}
    for i, s in todo:
        by_dataset.setdefault(dataset_of(s[0]), []).append((i, s))
    out = []
    for items in by_dataset.values():
        total = sum(seconds(*s) for _, s in items)
        share = total / max(1, math.ceil(total / target_seconds))
        current, work = [], 0.0
        for i, s in items:
            current.append((i, s))
            work += seconds(*s)
            if work >= share * (1 - 1e-9):
                out.append(_bin(current, seconds))
                current, work = [], 0.0
        if current:
            out.append(_bin(current, seconds))
    return out


def _bin(items, seconds) -> Bin:
    return Bin(items[0][0], items[-1][0], tuple(s for _, s in items), sum(seconds(*s) for _, s in items))


def check_limit(bins, partition_minutes) -> None:
    """A bin longer than the partition allows would be refused or killed by SLURM: stop at parse time."""
    if partition_minutes is None or not bins:
        return
    longest = max(bins, key=lambda b: b.minutes)
    if longest.minutes > partition_minutes:
        raise ReproError(
            f"configuration error: partition_minutes: a bin asks for {longest.minutes} min "
            f"(job_minutes plus margin, banditrepro/workflow/bins.py) but the partition allows "
            f"{partition_minutes}; lower job_minutes")
