"""Verdicts decided by intervals, never by point means.

A claim test measures one quantity (a difference or ratio of mean final regrets, a late-growth share, an
optimum's position, a formula value) with a 95 % interval and compares the interval with the boundary the
claim draws:

- ``reproduced``: the whole interval lies on the claim's side of the boundary;
- ``not reproduced``: the whole interval lies on the other side;
- ``inconclusive``: the interval straddles the boundary (``runs_to_settle`` estimates how many runs would
  move it off, from the observed spread);
- ``vacuous``: the claim's premise never occurs (e.g. "where X wins …" and X never wins);
- ``not run``: the data could not be produced (why is said in ``measured``).

Intervals over runs are percentile bootstraps. Cells share their random streams across algorithms
(common random numbers, docs/decisions.md#seeds-and-runs), so two algorithms' runs with the same index
are paired and resampled together. Every bootstrap takes an explicit integer seed: the same inputs always
give the same interval.

>>> a = np.array([10.0, 11, 9, 10, 12, 8, 10, 11]); b = a + 5
>>> iv = diff_ci(a, b, seed=1)
>>> round(iv.estimate, 6), decide(iv, 0.0, "below")
(-5.0, 'reproduced')
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
VACUOUS = "vacuous"
NOT_RUN = "not run"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, VACUOUS, NOT_RUN)

LEVEL = 0.95  # every interval of the claims table is a 95 % interval
N_BOOT = 4000  # percentile-bootstrap resamples: the 2.5 % quantile's Monte-Carlo error is ≈ 0.3 % of the s.e.


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{_g(self.estimate)} [{_g(self.low)}, {_g(self.high)}]"

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


@dataclass(frozen=True)
class Outcome:
    """What a claim test returns: the test in words, what it measured, the interval it decided on."""

    test: str
    measured: str
    verdict: str
    ci_low: float = math.nan
    ci_high: float = math.nan

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r} (one of {', '.join(VERDICTS)})")


def _g(x: float) -> str:
    return f"{x:.4g}"


def seed_of(*parts) -> int:
    """A stable integer bootstrap seed from what is compared (figure, claim, dataset, lines), never Python's
    salted hash(): CRC-32 of the parts joined by "/"."""
    return zlib.crc32("/".join(str(p) for p in parts).encode())


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(int(seed)))


def bootstrap(stat: Callable[..., np.ndarray], *samples: np.ndarray, seed: int, paired: bool | None = None,
              n_boot: int = N_BOOT, level: float = LEVEL) -> Interval:
    """Percentile bootstrap of ``stat(*resampled_means_or_samples)``.

    ``stat`` receives one array per sample, each of shape (n_boot, n_i) (resampled runs), and returns
    (n_boot,) values; the point estimate is ``stat`` on the original samples (shape (1, n_i)).
    ``paired`` (default: all samples have the same length) resamples the same run indices in every sample.
    """
    xs = [np.asarray(s, dtype=float).ravel() for s in samples]
    if any(x.size == 0 for x in xs):
        raise ValueError("bootstrap: empty sample")
    if paired is None:
        paired = len({x.size for x in xs}) == 1
    rng = _rng(seed)
    est = float(np.asarray(stat(*[x[None, :] for x in xs])).ravel()[0])
    if paired:
        idx = rng.integers(0, xs[0].size, size=(n_boot, xs[0].size))
        boots = stat(*[x[idx] for x in xs])
    else:
        boots = stat(*[x[rng.integers(0, x.size, size=(n_boot, x.size))] for x in xs])
    boots = np.asarray(boots, dtype=float)
    a = (1 - level) / 2
    lo, hi = np.quantile(boots, [a, 1 - a])
    return Interval(est, float(lo), float(hi))


def diff_ci(a, b, *, seed: int) -> Interval:
    """mean(a) − mean(b), paired by run index when both have the same runs."""
    return bootstrap(lambda u, v: u.mean(axis=1) - v.mean(axis=1), a, b, seed=seed)


def ratio_ci(a, b, *, seed: int) -> Interval:
    """mean(a) / mean(b) (b's mean must be positive)."""
    return bootstrap(lambda u, v: u.mean(axis=1) / np.maximum(v.mean(axis=1), 1e-300), a, b, seed=seed)


def exact(value: float) -> Interval:
    """A deterministic quantity (a formula value): its interval is the point."""
    return Interval(float(value), float(value), float(value))


def argmin_interval(finals: np.ndarray, *, seed: int, n_boot: int = 4000, level: float = 0.95):
    """finals: (runs, lines) paired by run. Returns (argmin of the mean, interval low, high, share of bootstrap
    resamples won by each line). Low/high are grid indices: the percentile interval of the bootstrap argmin,
    read on the grid order (``inverted_cdf``, so both ends are grid points)."""
    finals = np.asarray(finals, dtype=float)
    n, m = finals.shape
    idx = _rng(seed).integers(0, n, size=(n_boot, n))
    arg = finals[idx].mean(axis=1).argmin(axis=1)  # (n_boot,)
    a = (1 - level) / 2
    lo, hi = np.quantile(arg, [a, 1 - a], method="inverted_cdf")
    share = np.bincount(arg, minlength=m) / n_boot
    return int(finals.mean(axis=0).argmin()), int(lo), int(hi), share


def decide(iv: Interval, bound: float, side: str) -> str:
    """Verdict for the claim "quantity is ``side`` ``bound``" (side: "below" or "above")."""
    if side == "below":
        if iv.high < bound:
            return REPRODUCED
        if iv.low > bound:
            return NOT_REPRODUCED
    elif side == "above":
        if iv.low > bound:
            return REPRODUCED
        if iv.high < bound:
            return NOT_REPRODUCED
    else:
        raise ValueError(f"side must be 'below' or 'above', not {side!r}")
    return INCONCLUSIVE


def decide_within(iv: Interval, low: float, high: float) -> str:
    """Verdict for "quantity lies in [low, high]" (e.g. a ratio within a tolerance)."""
    if low <= iv.low and iv.high <= high:
        return REPRODUCED
    if iv.high < low or iv.low > high:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def runs_to_settle(iv: Interval, bound: float, runs: int) -> int | None:
    """Roughly how many runs would move the interval off ``bound``: the half-width shrinks like 1/√n, so
    n' ≈ n·(h / |estimate − bound|)². None if the estimate sits on the boundary, or the half-width is too large
    for any run count to be named (no run count settles it)."""
    gap = abs(iv.estimate - bound)
    if gap == 0 or not math.isfinite(iv.half_width):
        return None
    try:
        needed = runs * (iv.half_width / gap) ** 2
    except OverflowError:  # a finite but huge half-width (a ratio whose denominator nearly vanishes)
        return None
    return max(runs + 1, int(math.ceil(needed))) if math.isfinite(needed) else None


def runs_to_settle_anytime(estimate: float, sd: float, bound: float, runs: int, *, alpha: float,
                           method: str = "asymptotic", lo: float = 0.0, hi: float = 1.0,
                           max_runs: int = 1 << 20) -> int | None:
    """The anytime-valid analogue of ``runs_to_settle``: the smallest run count n > ``runs`` at which the chosen
    confidence sequence's half-width, at the current mean ``estimate`` and standard deviation ``sd`` of the
    per-run statistic, falls below |estimate − bound| (``confseq.planned_half_width``; the sequence's width
    shrinks like √(log n / n), not 1/√n, so this is more than the fixed-n estimate). ``lo``/``hi``: the
    statistic's a-priori bounds (used by the bounded sequences). None if the estimate sits on the boundary or
    no n ≤ ``max_runs`` suffices. For sizing the next settle round; the verdict is the sequence's own."""
    from banditrepro import confseq

    gap = abs(estimate - bound)
    if gap == 0 or not (math.isfinite(gap) and math.isfinite(sd)):
        return None
    lo_n, hi_n = max(int(runs), 1) + 1, int(max_runs)
    if lo_n > hi_n or confseq.planned_half_width(hi_n, sd, alpha, method, lo, hi)[0] >= gap:
        return None
    # the planned half-width decreases in n past the mixture's first few runs: bisect on n
    while lo_n < hi_n:
        mid = (lo_n + hi_n) // 2
        if confseq.planned_half_width(mid, sd, alpha, method, lo, hi)[0] < gap:
            hi_n = mid
        else:
            lo_n = mid + 1
    return lo_n


def combine(verdicts: Iterable[str]) -> str:
    """All parts must hold: one contradiction decides; otherwise any open part leaves it inconclusive."""
    vs = [v for v in verdicts if v not in (NOT_RUN, VACUOUS)]
    if not vs:
        return NOT_RUN
    if NOT_REPRODUCED in vs:
        return NOT_REPRODUCED
    if INCONCLUSIVE in vs:
        return INCONCLUSIVE
    return REPRODUCED


def settle_note(iv: Interval, bound: float, runs: int) -> str:
    n = runs_to_settle(iv, bound, runs)
    return "estimate on the boundary" if n is None else f"≈{n:,} runs would settle it"
