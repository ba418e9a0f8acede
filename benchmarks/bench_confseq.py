"""Which confidence sequence settles the claims, and is it valid: the numbers of docs/settle.md (issue 45).

1. Widths: on realistic paired per-run statistics (engine runs, ``benchmarks/settle_data.py``, 1,280 runs per
   line, T = 20,000) with the a-priori bounds a claim gets (T × the largest per-step regret), the half-width
   of each CS at n = 20, 40, …, 1280, at the per-part level α = 0.05/33 (Bonferroni over the 33 claims), and
   the fixed-n normal half-width for scale; the round at which each CS decides.
2. False decisions: at a mean exactly on the boundary, the share of 2,000+ replications in which "rounds 20,
   40, …, 1280, stop when the interval excludes the boundary" decides, per shape (settle_sim.SHAPES plus an
   ``empirical`` shape resampling each measured statistic, centred) and per CS, and for the naive percentile
   bootstrap. Level α = 0.05; margin 3 binomial standard errors.

Usage: python benchmarks/bench_confseq.py [--data /tmp/settle_data_1280.npz] [--reps 2000] [--seed 45]
(generates the data file first if it is missing: about 20 s of kernels).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from banditrepro import confseq as cs
from banditrepro import settle_sim as ss

NS = (20, 40, 80, 160, 320, 640, 1280)


def statistics(d) -> dict[str, tuple[np.ndarray, float, float]]:
    """name: (per-run paired statistic in run order, a-priori lo, hi), shaped like the manifest's claims."""
    T = float(d["horizon"])
    g = {k.split("/")[-1] + "@" + k.split("/")[0]: float(d[k]) for k in d.files if "/max_step/" in k}
    out = {}
    gd = g["regret@duel"]
    out["C2B / RUCB ≤ 1.5 (comparable, dueling regret)"] = (
        d["duel/c2b/regret"] - 1.5 * d["duel/rucb/regret"], -1.5 * T * gd, T * gd)
    gw = g["weak_regret_binary@duel"]
    out["WS-S / RUCB < 1 (weak binary)"] = (
        d["duel/ws-s/weak_regret_binary"] - d["duel/rucb/weak_regret_binary"], -T * gw, T * gw)
    gu = g["strong_regret_utility@duel"]
    out["WS-W / RUCB < 1 (strong utility)"] = (
        d["duel/ws-w/strong_regret_utility"] - d["duel/rucb/strong_regret_utility"], -T * gu, T * gu)
    gm = g["regret@mab"]
    out["M-TS-G / DP-TS-UCB ≤ 1.5 (slightly better)"] = (
        d["mab/m-ts-gaussian/regret"] - 1.5 * d["mab/dp-ts-ucb/regret"], -1.5 * T * gm, T * gm)
    out["DP-TS-UCB / M-TS-G < 1"] = (
        d["mab/dp-ts-ucb/regret"] - d["mab/m-ts-gaussian/regret"], -T * gm, T * gm)
    return out


def widths(stats, alpha: float) -> None:
    print(f"\n## Half-widths (two-sided, α = {alpha:.2e} per part) and the round each CS decides\n")
    print("| statistic | mean | sd | a-priori range | CS | " + " | ".join(f"n={n}" for n in NS) + " | decides at |")
    print("|---|---|---|---|---|" + "---|" * len(NS) + "---|")
    for name, (x, lo, hi) in stats.items():
        x = x[: max(NS)]
        rows = []
        for m in cs.METHODS:
            kw = {"times": list(NS)} if m == "betting" else {}
            s = cs.sequence(m, x, lo, hi, alpha, **kw)
            half = [(s.upper[n - 1] - s.lower[n - 1]) / 2 for n in NS]
            dec = next((n for n in NS if s.excludes(0.0)[n - 1]), None)
            rows.append((m, half, dec))
        fixed = [1.96 * x[:n].std(ddof=1) / np.sqrt(n) for n in NS]
        dec = next((n for n, h in zip(NS, fixed) if abs(x[:n].mean()) > h), None)
        rows.append(("fixed-n normal 95 % (one look)", fixed, dec))
        for k, (m, half, dec) in enumerate(rows):
            head = (f"| {name} | {x.mean():.4g} | {x.std(ddof=1):.3g} | [{lo:.3g}, {hi:.3g}] " if k == 0
                    else "| | | | ")
            print(head + f"| {m} | " + " | ".join(f"{h:.3g}" for h in half) + f" | {dec or '—'} |")


def false_decisions(stats, rng: np.random.Generator, reps: int, alpha: float, n_boot: int) -> None:
    margin = ss.binomial_margin(alpha, reps)
    print(f"\n## False-decision rate at the boundary ({reps} replications, rounds {', '.join(map(str, ss.ROUNDS))}; "
          f"α = {alpha}, margin 3 s.e. = {margin:.4f}, so a valid procedure shows ≤ {alpha + margin:.4f})\n")
    print("| shape | " + " | ".join(cs.METHODS) + f" | naive bootstrap ({n_boot} resamples) |")
    print("|---|" + "---|" * (len(cs.METHODS) + 1))
    n = max(ss.ROUNDS)
    cases = [(s, ss.draw(s, rng, reps, n), *ss.SHAPES[s]) for s in ss.SHAPES]
    for name, (x, lo, hi) in stats.items():  # resample the measured statistic, centred on its mean
        c = x - x.mean()
        cases.append((f"empirical: {name}", c[rng.integers(0, c.size, (reps, n))], lo - x.mean(), hi - x.mean()))
    for name, x, lo, hi in cases:
        rates = [ss.cs_decides(m, x, lo, hi, alpha).mean() for m in cs.METHODS]
        boot = ss.bootstrap_decides(x, rng, n_boot, 1 - alpha).mean()
        print(f"| {name} | " + " | ".join(f"{r:.4f}" for r in rates) + f" | {boot:.4f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/tmp/settle_data_1280.npz")
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--claims", type=int, default=33, help="claims sharing α (Bonferroni)")
    args = ap.parse_args()
    if not Path(args.data).exists():
        import settle_data  # benchmarks/settle_data.py, beside this file

        settle_data.main(args.data, 1280, 20000)
    d = np.load(args.data)
    stats = statistics(d)
    t = time.perf_counter()
    widths(stats, 0.05 / args.claims)
    false_decisions(stats, np.random.default_rng(args.seed), args.reps, 0.05, args.boot)
    print(f"\n({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
