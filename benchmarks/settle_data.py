"""Realistic paired per-run final regrets for the confidence-sequence benchmark (docs/settle.md).

Runs the engine's kernels (banditrepro.cell.run_cells) on small instances shaped like the papers' claims —
a 6-arm utility-model dueling matrix (C2B, RUCB, WS-S, WS-W: the C2B and Winner Stays claims) and 5 Bernoulli
arms (DP-TS-UCB(α = 0) vs M-TS-Gaussian: the DP-TS-UCB claims) — and saves, per line, the final regret of
every run in run-index order, with the a-priori per-step regret bound of the metric (the largest entry of
the instance's regret table). Usage: python benchmarks/settle_data.py OUT.npz [RUNS] [HORIZON]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from banditrepro import cell
from banditrepro.instances import BernoulliArms, PreferenceMatrix, utility_preferences
from banditrepro.regret import regret_table

BASE_SEED = 7


def main(out: str, runs: int = 640, horizon: int = 4000) -> None:
    duel = PreferenceMatrix(utility_preferences(np.linspace(1.0, 0.3, 6)), name="u6")
    mab = BernoulliArms(np.array([0.9, 0.8, 0.7, 0.6, 0.5]), name="b5")
    lines = [("duel", "c2b", None), ("duel", "rucb", None), ("duel", "ws-s", None), ("duel", "ws-w", None),
             ("mab", "dp-ts-ucb", {"alpha": 0.0}), ("mab", "m-ts-gaussian", {"b": 0, "c": 1.0})]
    data = {"horizon": np.int64(horizon)}
    for kind, inst in (("duel", duel), ("mab", mab)):
        names, tab = regret_table(inst)
        per_step = tab.reshape(len(names), -1).max(axis=1)
        for m, g in zip(names, per_step):
            data[f"{kind}/max_step/{m}"] = np.float64(g)
    for kind, algo, params in lines:
        inst = duel if kind == "duel" else mab
        t = time.perf_counter()
        res = cell.run_cells(algo, params, inst, horizon, range(runs), BASE_SEED)
        for m in res[0].curves:
            data[f"{kind}/{algo}/{m}"] = np.array([r.curves[m][-1] for r in res], dtype=np.float64)
        print(f"{algo}: {runs} runs in {time.perf_counter() - t:.1f} s", flush=True)
    np.savez(out, **data)


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
