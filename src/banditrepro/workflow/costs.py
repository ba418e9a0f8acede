"""What a run will cost in CPU: the forecast of ``banditrepro estimate`` (docs/performance.md, "Cost in runs, and
the forecast").

The forecast has its own cost model, apart from the kernels' ``ns_per_step`` (banditrepro/jobsize.py). Those
numbers size shards and batches, so changing them moves every shard boundary and SLURM submission
(docs/decisions.md#forecast-costs); as a forecast they are off by a factor of a few per cell, because a
kernel's cost per step depends on the dataset (its arms) and the horizon, not only on the algorithm.

**Kernels.** A cell's kernel CPU-seconds per run are, in this order:

1. measured here: the mean of ``kernel_cpu_seconds`` over the sidecars (``runs*.json``) in the cell's own
   shard folder, ``plan.cell_folder(cell)`` (one listing, sidecars only: no shard is read). That folder's
   key covers the algorithm id, the cell's code, data, horizon, base seed, shard format and numerics stack
   (banditrepro/workflow/names.py), so what it holds was measured with the code, data and stack the plan
   runs. Its sibling folders (other keys of the same ``<dataset>/T<h>/<algo>``) are not read: a sidecar does
   not record which code wrote it, so another seed's folder cannot be told from an older kernel's, whose
   speed may differ. The price: a config whose seed changed is forecast from the table below until its own
   first shards exist; the common case, more runs or a stopped run resumed, is measured;
2. else the reference table shipped with the package (``kernel_costs.csv``): the same mean, measured on
   the reference machine (a 2-core VM) from a warm default run, so another machine is forecast at the
   reference machine's speed until its results folder holds sidecars of its own. Regenerate it with
   ``python benchmarks/calibrate_costs.py RESULTS_DIR`` after a warm default run;
3. else the kernel's ``ns_per_step`` × horizon (plugins, cells of a config of one's own).

**The rest of the pipeline** (the simulate jobs beyond their kernels, summaries, figures, claims, report,
Snakemake itself) is a fixed part, paid once when anything is to be done, plus a part per shard computed
and one per run computed (``PIPELINE_*`` below, measured on warm default runs at runs = 20, 100, 200).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from pathlib import Path

from banditrepro import jobsize
from banditrepro.layout import SHARD_STEM, SIDECAR_SUFFIX

REFERENCE = Path(__file__).with_name("kernel_costs.csv")
CALIBRATE = "python benchmarks/calibrate_costs.py RESULTS_DIR"  # what regenerates REFERENCE
FIELDS = ("algorithm_id", "dataset", "horizon", "runs", "kernel_cpu_seconds_per_run")

# The pipeline's CPU-seconds beyond the kernels (whole process tree of a local `snakemake --cores 2`, jobs in
# process), measured on the reference machine (2-core 24 GiB VM, 2026-12-06) on warm default runs (kernels
# cached, data prepared) at runs = 20, 100, 200: 196, 292, 444 shards of 9,180, 21,900, 37,800 runs, 23.6,
# 29.2, 31.6 CPU-s beyond the kernels, split by the job logs' `body CPU seconds`
# (docs/performance.md#cost-in-runs-and-the-forecast-issue-31-point-4).
# Fixed: the jobs that run once whatever the runs (19 figures 12.0-12.5, claims 0.9-1.7, run-time table
# 0.4-0.9, report 0.2-0.3 CPU-s), the summaries' base (0.9 CPU-s for 189) and Snakemake itself (start, DAG,
# scheduling: 4.4-5.4 CPU-s, the run's CPU less the kernels and every job body).
PIPELINE_FIXED = 20.0
# Per shard: the simulate bodies beyond their kernels took 3.2, 6.3, 8.8 CPU-s; least squares: 14 ms per shard
# (the kernel's one-step load, the shard's files synced, and then its lease and its batch's receipt, both gone
# since session 14: so on the high side) and 0.08 ms per run.
PIPELINE_PER_SHARD = 0.014
# Per run: those 0.08 ms and the summaries' reading, 0.07 ms (1.6, 2.4, 3.7 CPU-s for 189 summaries).
PIPELINE_PER_RUN = 0.00015

SOURCES = ("measured", "reference", "ns_per_step")


def _kernel_totals(sidecars, algo: str, dataset: str, horizon: int) -> tuple[float, int]:
    """Sum of ``kernel_cpu_seconds`` and runs counted over ``sidecars`` (paths) that describe this cell; a
    sidecar unreadable, of another cell or without kernel times counts nothing."""
    total, n = 0.0, 0
    for path in sidecars:
        try:
            with open(path) as f:
                side = json.load(f)
            if (side["algorithm_id"], side["instance"], int(side["horizon"])) != (algo, dataset, horizon):
                continue
            times = [float(t) for t in side["kernel_cpu_seconds"] if t is not None]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        times = [t for t in times if math.isfinite(t) and t >= 0]
        total, n = total + sum(times), n + len(times)
    return total, n


SIDECAR = re.compile(SHARD_STEM.pattern + re.escape(SIDECAR_SUFFIX))


def cell_sidecars(folder) -> list[str]:
    """The shard sidecars in a cell's shard folder (``Plan.cell_folder``); [] if it does not exist."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, n) for n in names if SIDECAR.fullmatch(n))


def measured(folder, algo: str, dataset: str, horizon: int) -> float | None:
    """Mean kernel CPU-seconds per run of a cell, from the sidecars in its shard folder (None: none there)."""
    total, n = _kernel_totals(cell_sidecars(folder), algo, dataset, horizon)
    return total / n if n else None


def load_reference(path=REFERENCE) -> dict[tuple[str, str, int], float]:
    """(algorithm id, dataset, horizon) -> kernel CPU-seconds per run of the reference table ({} if absent)."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    except FileNotFoundError:
        return {}
    return {(r["algorithm_id"], r["dataset"], int(r["horizon"])): float(r["kernel_cpu_seconds_per_run"])
            for r in rows}


class KernelCosts:
    """Kernel CPU-seconds per run of a plan's cells, each from the first source that has it (module doc)."""

    def __init__(self, plan, reference=None):
        self.plan = plan
        self.reference = load_reference() if reference is None else reference
        self._cache: dict[str, tuple[float, str]] = {}

    def lookup(self, cell: str) -> tuple[float, str]:
        """(seconds per run, source) of a cell key; source is one of ``SOURCES``."""
        if cell not in self._cache:
            from banditrepro.workflow.plan import split_key

            dataset, horizon, algo = split_key(cell)
            here = measured(self.plan.cell_folder(cell), algo, dataset, horizon)
            if here is not None:
                self._cache[cell] = (here, "measured")
            elif (algo, dataset, horizon) in self.reference:
                self._cache[cell] = (self.reference[algo, dataset, horizon], "reference")
            else:
                self._cache[cell] = (jobsize.kernel_seconds(algo, horizon), "ns_per_step")
        return self._cache[cell]


def pipeline_seconds(shards: int, runs: int) -> float:
    """CPU-seconds of the pipeline beyond the kernels for ``shards`` new shards holding ``runs`` runs (0 when
    there is nothing to compute: then only the summaries, figures and report that are missing run)."""
    if not shards:
        return 0.0
    return PIPELINE_FIXED + PIPELINE_PER_SHARD * shards + PIPELINE_PER_RUN * runs


def calibrate(plan) -> list[dict]:
    """Rows of the reference table from the sidecars in the shard folders of ``plan``'s cells (their current
    keys: the code, data and stack the plan runs; a folder of older code measured other kernels): per
    (algorithm id, dataset, horizon), the runs measured and their mean kernel CPU-seconds."""
    from banditrepro.workflow.plan import split_key

    rows = []
    for cell in sorted(plan.cell_runs):
        dataset, horizon, algo = split_key(cell)
        total, n = _kernel_totals(cell_sidecars(plan.cell_folder(cell)), algo, dataset, horizon)
        if n:
            rows.append({"algorithm_id": algo, "dataset": dataset, "horizon": horizon, "runs": n,
                         "kernel_cpu_seconds_per_run": f"{total / n:.6g}"})
    return rows


def write_reference(rows: list[dict], out=REFERENCE, note: str = "") -> None:
    """The reference table: a comment line (where it was measured), then the rows as CSV."""
    with open(out, "w", newline="") as f:
        if note:
            f.write("".join(f"# {line}\n" for line in note.splitlines()))
        w = csv.DictWriter(f, FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
