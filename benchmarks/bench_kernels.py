"""Speed benchmark: ns per step of every kernel, and the fixed cost of a cell job.

    python benchmarks/bench_kernels.py [--horizon 1000000] [--algorithms rucb rmed1 ...] [--json out.json]

Kernels are timed after a warm-up call (compile or cache load excluded) on the instances the papers
use: a 16-arm dueling instance (sushi16-like utility model) and the 5 Bernoulli arms of DP-TS-UCB.
The fixed cost of a job is measured as a fresh `python -m banditrepro simulate` process on a tiny
horizon (interpreter start, imports, numba cache load).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from banditrepro import ReproError, algorithms
from banditrepro.grid import regret_grid
from banditrepro.instances import BernoulliArms, PreferenceMatrix
from banditrepro.regret import regret_table
from banditrepro.seeds import cell_generator

# parameters at which the papers run each algorithm where the default is not it
PAPER_PARAMS = {"m-ts-gaussian": {"b": 1, "c": 1.18}, "dp-ts-ucb": {"alpha": 0.0}}


def duel_instance(K: int) -> PreferenceMatrix:
    u = np.sort(np.random.default_rng(K).random(K))[::-1]
    return PreferenceMatrix((1 + u[:, None] - u[None, :]) / 2, name=f"utility{K}")


def time_kernel(name: str, K: int, T: int, repeats: int = 3) -> dict:
    spec = algorithms.get(name)
    inst = duel_instance(K) if spec.problem == "duel" else BernoulliArms([0.95, 0.75, 0.55, 0.35, 0.15])
    params = spec.resolve(PAPER_PARAMS.get(name, {}))
    _, tab = regret_table(inst)
    grid = regret_grid(T)
    spec.run(inst, 10, tab, regret_grid(10), np.random.default_rng(0), **params)  # compile / load
    best = np.inf
    for r in range(repeats):
        rng = cell_generator(1, inst.name, r)
        t0 = time.perf_counter()
        spec.run(inst, T, tab, grid, rng, **params)
        best = min(best, time.perf_counter() - t0)
    return {"algorithm": name, "K": inst.n_arms, "T": T, "ns_per_step": best / T * 1e9,
            "steps_per_second": T / best}


def job_overhead(repeats: int = 3) -> float:
    with tempfile.TemporaryDirectory() as d:
        m = Path(d) / "m.txt"
        np.savetxt(m, duel_instance(6).P)
        cmd = [sys.executable, "-m", "banditrepro", "simulate", "--algorithm", "rucb", "--matrix", str(m),
               "--horizon", "10", "--out", str(Path(d) / "c.npz")]
        subprocess.run(cmd, check=True, capture_output=True)  # warm the numba cache
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--horizon", type=int, default=1_000_000)
    p.add_argument("--K", type=int, default=16, help="arms of the dueling instance")
    p.add_argument("--algorithms", nargs="*", default=algorithms.names())
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    for name in args.algorithms:
        try:
            row = time_kernel(name, args.K, args.horizon)
        except ReproError as exc:
            print(f"{name:18} skipped: {exc}")
            continue
        rows.append(row)
        print(f"{name:18} K={row['K']:3d}  {row['ns_per_step']:8.1f} ns/step  "
              f"{row['steps_per_second'] / 1e6:8.2f} M steps/s")
    overhead = job_overhead()
    print(f"fixed cost of one `banditrepro simulate` process (start-up, imports, cache load): {overhead:.2f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"kernels": rows, "process_overhead_seconds": overhead}, indent=2))


if __name__ == "__main__":
    main()
