"""Regenerate the forecast's reference table of kernel costs from a results folder.

    python benchmarks/calibrate_costs.py RESULTS_DIR [--out src/banditrepro/workflow/kernel_costs.csv]

RESULTS_DIR: the results folder of a warm default run (kernels cached, data prepared: e.g. the copy
``benchmarks/bench_first_run.py --keep`` leaves, ``<copy>/project/results``), on an otherwise idle machine.
Writes, per (algorithm id, dataset, horizon) of the cells found there, the runs measured and the mean
``kernel_cpu_seconds`` of their sidecars (banditrepro/workflow/costs.py: only the code folders the current
code writes, every base seed). ``banditrepro estimate`` uses the table for the cells its own results folder
has no sidecars of; tests/workflow/test_forecast.py checks it covers every cell of the default config.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

from banditrepro.workflow import costs


def machine() -> str:
    cores = os.cpu_count()
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        mem_text = f", {mem:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        mem_text = ""
    return f"{cores} cores{mem_text}, {platform.system()} {platform.machine()}, Python {platform.python_version()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results_dir", type=Path)
    ap.add_argument("--out", type=Path, default=costs.REFERENCE)
    args = ap.parse_args()
    rows = costs.calibrate(str(args.results_dir))
    if not rows:
        sys.exit(f"no shard sidecars of the current code under {args.results_dir}/cells/seed*/")
    note = (f"kernel CPU-seconds per run (mean of the sidecars' kernel_cpu_seconds), regenerate: {costs.CALIBRATE}\n"
            f"measured {datetime.date.today().isoformat()} on {machine()}; "
            f"{len(rows)} cells, {sum(r['runs'] for r in rows):,} runs")
    costs.write_reference(rows, args.out, note)
    print(f"{args.out}: {len(rows)} cells, {sum(r['runs'] for r in rows):,} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
