"""Final regret and speed of the Winner Stays benchmarks SCB and QSA on the datasets of the WS figures.

    python benchmarks/bench_ws_benchmarks.py --algorithm scb --params tie_margin=0.02 \
        --datasets sushi16 mslr5 --runs 20 [--prepared data/prepared] [--json out.json]

Runs the production cell path (``run_cell``, same seeds as the default config: base_seed 20240601, runs
0..n−1) and prints, per dataset, mean ± s.e. of every regret metric at T, the CPU seconds of all runs
and the kernel's ns/step (warm: the compile/cache load is timed separately by run_cell).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from banditrepro.cell import run_cell
from banditrepro.datasets.catalog import load_prepared
from banditrepro.layout import DEFAULT_BASE_SEED


def parse_params(items: list[str]) -> dict:
    """key=value strings; the algorithm's parameter schema coerces the values."""
    return dict(item.split("=", 1) for item in items)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algorithm", required=True)
    ap.add_argument("--params", nargs="*", default=[])
    ap.add_argument("--datasets", nargs="+", default=["sushi16", "mslr5"])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--base-seed", type=int, default=DEFAULT_BASE_SEED)
    ap.add_argument("--prepared", default="data/prepared")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    params = parse_params(args.params)
    report = []
    for ds in args.datasets:
        inst = load_prepared(Path(args.prepared) / f"{ds}.json")
        finals: dict[str, list[float]] = {}
        wall = 0.0
        cpu0 = time.process_time()
        for run in range(args.runs):
            res = run_cell(args.algorithm, params, inst, args.horizon, run, args.base_seed)
            wall += res.wall_seconds
            for m, c in res.curves.items():
                finals.setdefault(m, []).append(float(c[-1]))
        cpu = time.process_time() - cpu0
        row = {"algorithm": args.algorithm, "params": params, "dataset": ds, "runs": args.runs,
               "kernel_seconds": wall, "cpu_seconds": cpu,
               "ns_per_step": 1e9 * wall / (args.runs * args.horizon)}
        for m, v in finals.items():
            a = np.array(v)
            row[m] = (float(a.mean()), float(a.std(ddof=1) / np.sqrt(len(a))))
        report.append(row)
        metrics = "  ".join(f"{m}={row[m][0]:.1f}±{row[m][1]:.1f}" for m in finals)
        print(f"{args.algorithm} {params} {ds}: {metrics}  kernel {wall:.2f} s "
              f"({row['ns_per_step']:.0f} ns/step), cpu {cpu:.2f} s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
