"""Proof by simulation (issue 45, point 3): how often "add runs in rounds, stop when the interval excludes the
boundary" decides when the true mean sits exactly on the boundary — for the confidence sequences of
``banditrepro.confseq`` and for the naive procedure (a percentile bootstrap 95 % interval after each round).
Used by tests/core/test_confseq.py and benchmarks/bench_confseq.py; every draw comes from the
``np.random.Generator`` passed in.

Shapes (bounded, mean exactly 0, a-priori bounds = the support):

- ``two_point``: −1 with probability 4/5, +4 with probability 1/5 (skewed);
- ``beta``: Beta(2, 5) − 2/7 on [−2/7, 5/7];
- ``rare``: −1 with probability 0.95, +19 with probability 0.05 — a rare bad run (an algorithm stuck on a wrong
  arm accrues linear regret) that 20 runs miss with probability 0.95^20 ≈ 36 %;
- ``pareto``: min(Pareto(tail index 1.2, scale 1), 1000) minus its exact mean — heavy-tailed but bounded,
  the hardest case for a CS that plugs in a sample variance (a few runs carry most of the mean).
- ``empirical`` (benchmark only): resampling a measured paired statistic, centred on its mean.
"""

from __future__ import annotations

import math

import numpy as np

from banditrepro import confseq as cs

ROUNDS = (20, 40, 80, 160, 320, 640, 1280)
PARETO_TAIL, PARETO_CAP = 1.2, 1000.0
# E[min(X, M)] for Pareto(a, 1): 1 + ∫_1^M x^{-a} dx = 1 + (1 − M^{1−a})/(a − 1)
PARETO_MEAN = 1.0 + (1.0 - PARETO_CAP ** (1.0 - PARETO_TAIL)) / (PARETO_TAIL - 1.0)
SHAPES = {  # name: (a-priori lo, hi)
    "two_point": (-1.0, 4.0),
    "beta": (-2.0 / 7.0, 5.0 / 7.0),
    "rare": (-1.0, 19.0),
    "pareto": (1.0 - PARETO_MEAN, PARETO_CAP - PARETO_MEAN),
}


def draw(shape: str, rng: np.random.Generator, reps: int, n: int) -> np.ndarray:
    """(reps, n) i.i.d. draws of ``shape``, mean exactly 0."""
    if shape == "two_point":
        return np.where(rng.random((reps, n)) < 0.2, 4.0, -1.0)
    if shape == "beta":
        return rng.beta(2.0, 5.0, (reps, n)) - 2.0 / 7.0
    if shape == "rare":
        return np.where(rng.random((reps, n)) < 0.05, 19.0, -1.0)
    if shape == "pareto":
        u = 1.0 - rng.random((reps, n))  # (0, 1]
        return np.minimum(u ** (-1.0 / PARETO_TAIL), PARETO_CAP) - PARETO_MEAN
    raise ValueError(f"unknown shape {shape!r} (one of {', '.join(SHAPES)})")


def cs_decides(method: str, x: np.ndarray, lo: float, hi: float, alpha: float,
               rounds=ROUNDS) -> np.ndarray:
    """Boolean (reps,): the procedure "read the CS after each round, stop when it excludes 0" decides (it never
    should: the mean is 0). ``betting`` uses the capital at 0 alone (``confseq.betting_excludes``: the same
    event as the bisected bounds excluding 0, at O(n))."""
    looks = np.asarray([r for r in rounds if r <= x.shape[-1]]) - 1
    if method == "betting":
        above, below = cs.betting_excludes(x, 0.0, lo, hi, alpha)
        return (above | below)[:, looks].any(axis=1)
    seq = cs.sequence(method, x, lo, hi, alpha)
    return seq.excludes(0.0)[:, looks].any(axis=1)


def bootstrap_decides(x: np.ndarray, rng: np.random.Generator, n_boot: int = 1000, level: float = 0.95,
                      rounds=ROUNDS) -> np.ndarray:
    """Boolean (reps,): the naive procedure decides — after each round n, the percentile bootstrap ``level``
    interval of the mean of the first n runs (``n_boot`` resamples, as verdicts.bootstrap) excludes 0.
    Each round draws ``n_boot`` multinomial resample counts shared by all replications (every replication's
    resamples are still uniform draws with replacement; sharing only correlates replications), so the
    resampled means are one matrix product."""
    reps, n_all = x.shape
    decided = np.zeros(reps, dtype=bool)
    a = (1.0 - level) / 2.0
    for n in (r for r in rounds if r <= n_all):
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)  # (B, n)
        means = x[:, :n] @ counts.T / n  # (reps, B)
        lo, hi = np.quantile(means, [a, 1.0 - a], axis=1)
        decided |= (lo > 0.0) | (hi < 0.0)
    return decided


def binomial_margin(alpha: float, reps: int, k: float = 3.0) -> float:
    """k standard errors of a rate α estimated from ``reps`` replications: √(α(1 − α)/reps)·k."""
    return k * math.sqrt(alpha * (1.0 - alpha) / reps)


def false_decision_rates(rng: np.random.Generator, reps: int = 2000, alpha: float = 0.05, n_boot: int = 1000,
                         shapes=tuple(SHAPES), methods=cs.METHODS, rounds=ROUNDS) -> dict:
    """{(shape, method or "bootstrap"): share of replications that decided} for data at the boundary."""
    out = {}
    n = max(rounds)
    for shape in shapes:
        x = draw(shape, rng, reps, n)
        lo, hi = SHAPES[shape]
        for m in methods:
            out[(shape, m)] = float(cs_decides(m, x, lo, hi, alpha, rounds).mean())
        if n_boot:
            out[(shape, "bootstrap")] = float(bootstrap_decides(x, rng, n_boot, 1 - alpha, rounds).mean())
    return out
