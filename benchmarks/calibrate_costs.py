"""Regenerate the forecast's reference table of kernel costs from a results folder.

    python benchmarks/calibrate_costs.py RESULTS_DIR [--project DIR] [--configfile F ...] [--config K=V ...]
                                         [--out src/banditrepro/workflow/kernel_costs.csv]

RESULTS_DIR: the results folder of a warm default run (kernels cached, data prepared: e.g. the copy
``benchmarks/bench_first_run.py --keep`` leaves, ``<copy>/project/results``), on an otherwise idle machine,
made by the code of this checkout. ``--project``: the folder the run ran in (default: RESULTS_DIR's parent);
``--configfile``/``--config``: as that run's (default: config/config.yaml; results_dir is RESULTS_DIR).
The config is planned as the workflow plans it, and per cell of it the sidecars in the cell's shard folder
(its current key: this code, that data, seed and numerics stack; banditrepro/workflow/costs.py) give the
runs measured and their mean ``kernel_cpu_seconds``. ``banditrepro estimate`` uses the table for the cells
whose own shard folder holds no sidecars; tests/workflow/test_forecast.py checks it covers every cell of the
default config.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

from banditrepro.workflow import costs

ROOT = Path(__file__).resolve().parents[1]


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
    ap.add_argument("--project", type=Path, help="the folder the run ran in (default: RESULTS_DIR's parent)")
    ap.add_argument("--configfile", nargs="+", default=[], type=Path, help="as the run's snakemake --configfile")
    ap.add_argument("--config", nargs="+", default=[], metavar="KEY=VALUE", help="as the run's snakemake --config")
    ap.add_argument("--out", type=Path, default=costs.REFERENCE)
    args = ap.parse_args()
    from banditrepro.workflow.config import load_config
    from banditrepro.workflow.plan import build_plan

    results = args.results_dir.resolve()
    project = (args.project or results.parent).resolve()
    rel = os.path.relpath(results, project)
    if rel.startswith(".."):
        sys.exit(f"{results} is not inside the project folder {project}")
    config = load_config(ROOT, [f.resolve() for f in args.configfile], [*args.config, f"results_dir={rel}"])
    os.chdir(project)  # the plan's paths are relative to the folder the run ran in
    rows = costs.calibrate(build_plan(config, ROOT, scan=False))
    if not rows:
        sys.exit(f"no shard sidecars of the current code in {results}/cells/ (the cells' current key folders: "
                 "was the run made by this checkout's code, config and numerics stack?)")
    note = (f"kernel CPU-seconds per run (mean of the sidecars' kernel_cpu_seconds), regenerate: {costs.CALIBRATE}\n"
            f"measured {datetime.date.today().isoformat()} on {machine()}; "
            f"{len(rows)} cells, {sum(r['runs'] for r in rows):,} runs")
    costs.write_reference(rows, args.out, note)
    print(f"{args.out}: {len(rows)} cells, {sum(r['runs'] for r in rows):,} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
