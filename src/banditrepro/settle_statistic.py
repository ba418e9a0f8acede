"""Each claim's deciding quantity as the mean of a per-run paired statistic with bounds known before any run,
decided by a confidence sequence (``banditrepro.confseq``) valid at every number of runs (issue 45, point 2;
design and numbers: docs/settle.md).

A part of a claim compares a ratio of mean final regrets with a boundary c: E[R_a]/E[R_b] < c. With
E[R_b] > 0 this holds exactly when E[R_a − c·R_b] < 0, and R_a,i − c·R_b,i of one run index i is one draw of a
paired statistic (the cells of one (dataset, T) share their random streams, docs/decisions.md#seeds-and-runs),
i.i.d. over runs. Its a-priori bounds come from the cells alone: a final regret lies in [0, T·g], g the largest
per-step regret of the instance and metric (``per_step_bound``: ≤ 1 for binary weak/strong dueling regret,
≤ the largest gap for C2B's dueling regret and for a multi-armed instance's pseudo-regret), so R_a − c·R_b lies
in [−c·T_b·g_b, T_a·g_a]. The forms (``PairedStatistic`` constructors):

- ``ratio``: E[R_a]/E[R_b] below/above c  →  E[R_a − c·R_b] below/above 0;
- ``within``: E[R_a]/E[R_b] ∈ [l, h]  →  two parts, E[R_a − h·R_b] < 0 and E[R_a − l·R_b] > 0;
- ``late_share``: (E[R(T)] − E[R(T/2)])/E[R(T)] above/below f  →  E[(1 − f)·R(T) − R(T/2)] above/below 0,
  bounded by [−f·B_half, (1 − f)·B_late] (R(T) − R(T/2) ∈ [0, B_late], R(T/2) ∈ [0, B_half]);
- ``difference``: E[R_a] − E[R_b] below/above d  →  E[R_a − R_b − d] below/above 0.

``KIND_FORMS`` says, for every claim kind of the manifest, which forms its parts take, or why it keeps its
fixed-design verdict (a formula: no runs; an argmin or a min over lines inside a ratio: not one mean).

Verdicts keep their meaning (``decide``): *reproduced* when the CS of the part's mean lies on the claim's side
of 0, *not reproduced* on the other side, *inconclusive* while it contains 0; a claim's parts combine as in the
fixed design (``verdicts.combine``, ``parts.quorum``). The error is split by Bonferroni (``split_alpha``): α =
0.05 over the m claims settled, α/m per claim, and a claim of k parts α/(m·k) per part, so P(some settled
claim's verdict is wrong) ≤ α at every stopping time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from banditrepro import confseq as cs
from banditrepro import verdicts as vd

ALPHA = 0.05  # family-wise error over all settled claims (Bonferroni, ``split_alpha``)
METHOD = "asymptotic"  # the CS claims settle with: measured, docs/settle.md#decision (betting recorded beside it)
ROUNDS = (20, 40, 80, 160, 320, 640, 1280)  # geometric rounds of runs (issue 45, point 1)
SIDES = ("below", "above")


@dataclass(frozen=True)
class PairedStatistic:
    """s_i = Σ_k w_k · X_k,i over named per-run columns (final regrets of lines, or R(T/2)); the part holds when
    E[s] is ``side`` 0. ``lo``/``hi``: the a-priori bounds of s (from horizons and per-step bounds only)."""

    name: str
    weights: tuple[tuple[str, float], ...]
    lo: float
    hi: float
    side: str

    def __post_init__(self):
        if self.side not in SIDES:
            raise ValueError(f"side must be 'below' or 'above', not {self.side!r}")
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < 0 < self.hi):
            raise ValueError(f"{self.name}: a-priori bounds must be finite around the boundary 0, "
                             f"got [{self.lo}, {self.hi}]")

    def values(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """s_i for the runs of ``columns`` (each a per-run array in run-index order over the same runs)."""
        out = sum(w * np.asarray(columns[k], dtype=np.float64) for k, w in self.weights)
        return np.asarray(out, dtype=np.float64)


def final_bound(horizon: int, per_step: float) -> float:
    """A final regret's a-priori upper bound: T steps of at most ``per_step`` regret each."""
    if horizon < 1 or not per_step > 0:
        raise ValueError(f"need a horizon ≥ 1 and a positive per-step bound, got {horizon}, {per_step}")
    return float(horizon) * float(per_step)


def per_step_bound(instance, metric: str) -> float:
    """The largest per-step regret of ``metric`` on ``instance``: the maximum of its regret table
    (banditrepro.regret.regret_table; binary dueling metrics give 1, C2B's dueling regret the largest gap
    (Δ_i + Δ_j)/2 ≤ max Δ, a multi-armed instance the largest gap μ* − μ_i)."""
    from banditrepro.regret import regret_table  # the instance's table, read only here

    names, tab = regret_table(instance)
    if metric not in names:
        raise ValueError(f"metric {metric!r} not in {', '.join(names)}")
    return float(np.asarray(tab).reshape(len(names), -1)[names.index(metric)].max())


def ratio(a: str, b: str, c: float, side: str, bound_a: float, bound_b: float, name: str = "") -> PairedStatistic:
    """E[R_a]/E[R_b] ``side`` c  ⇔  E[R_a − c·R_b] ``side`` 0 (E[R_b] > 0); s ∈ [−c·bound_b, bound_a]."""
    if not c > 0:
        raise ValueError(f"ratio boundary must be positive, got {c}")
    return PairedStatistic(name or f"{a} − {c:g}·{b}", ((a, 1.0), (b, -float(c))), -c * bound_b, bound_a, side)


def within(a: str, b: str, low: float, high: float, bound_a: float, bound_b: float,
           name: str = "") -> tuple[PairedStatistic, PairedStatistic]:
    """E[R_a]/E[R_b] ∈ [low, high]: both ``ratio(a, b, high, "below")`` and ``ratio(a, b, low, "above")``."""
    if not 0 < low < high:
        raise ValueError(f"need 0 < low < high, got {low}, {high}")
    return (ratio(a, b, high, "below", bound_a, bound_b, f"{name or a + '/' + b} ≤ {high:g}"),
            ratio(a, b, low, "above", bound_a, bound_b, f"{name or a + '/' + b} ≥ {low:g}"))


def late_share(final: str, half: str, flat: float, side: str, bound_late: float, bound_half: float,
               name: str = "") -> PairedStatistic:
    """Share of the mean final regret accrued over (T/2, T], (E[R(T)] − E[R(T/2)])/E[R(T)], ``side`` ``flat``
    ⇔ E[(1 − flat)·R(T) − R(T/2)] ``side`` 0 (E[R(T)] > 0). s = (1 − f)(R(T) − R(T/2)) − f·R(T/2) with
    R(T) − R(T/2) ∈ [0, bound_late] (regret never decreases) and R(T/2) ∈ [0, bound_half]."""
    if not 0 < flat < 1:
        raise ValueError(f"flat must lie in (0, 1), got {flat}")
    return PairedStatistic(name or f"late share of {final} vs {flat:g}", ((final, 1.0 - flat), (half, -1.0)),
                           -flat * bound_half, (1.0 - flat) * bound_late, side)


def difference(a: str, b: str, d: float, side: str, bound_a: float, bound_b: float,
               name: str = "") -> PairedStatistic:
    """E[R_a] − E[R_b] ``side`` d  ⇔  E[R_a − R_b − d] ``side`` 0; s ∈ [−bound_b − d, bound_a − d].
    (A constant is a column "1" of ones.)"""
    return PairedStatistic(name or f"{a} − {b} − {d:g}", ((a, 1.0), (b, -1.0), ("1", -float(d))),
                           -bound_b - d, bound_a - d, side)


# How every claim kind of the manifest settles: the forms of its parts ("ratio", "within", "late_share"),
# or "fixed" with the reason it keeps the fixed-design verdict.
KIND_FORMS: dict[str, tuple[str, str]] = {
    "beats": ("ratio", "a/b below 1 per panel; quorum as in the fixed design"),
    "comparable": ("within", "a/b in [1/r, r] per panel: two ratio parts"),
    "challenger": ("ratio", "challenger/opponent below 1 per panel (the opponent chosen from the fixed-design "
                            "runs, then held)"),
    "late_growth": ("ratio+late_share", "premise b/a below 1; where it holds, late shares above/below flat"),
    "c2b_rounds_needed": ("ratio|within", "mode beats: ratio below 1; mode comparable: within [1/r, r]"),
    "ws_flat_and_below": ("ratio+late_share", "late share below flat and a/b below 1 per panel"),
    "ws_beats_all": ("ratio", "a/b below 1 for every (panel, benchmark)"),
    "dp-regret-increasing-in-alpha": ("ratio", "R(α_next)/R(α) above 1 for adjacent α"),
    "dp-lower-at-every-alpha": ("ratio", "column mean_final_regret: a/b below 1 per α (column eta: formula)"),
    "dp-slightly-better": ("within", "b/a in (1, max_ratio]: ratio above 1 and ratio below max_ratio"),
    "dp-significantly-better": ("ratio", "a/b below max_ratio"),
    "dp-beats-all": ("ratio", "a/b below 1 (above 1 with worse: true) for each b"),
    "dp-best-b": ("ratio", "b-line / other below 1 for each line not lost by construction"),
    "dp_frontier_dominated": ("ratio", "per point: some dominator's ratio below 1 (a union: reproduced when one "
                                       "candidate's CS lies below 1, not reproduced when all lie above)"),
    "ws_beta_pattern": ("fixed", "min over β inside a ratio, and a difference of two late shares (a ratio of "
                                 "products of means): not the mean of one per-run statistic"),
    "ws_beta_advice": ("fixed", "the argmin of mean final regret over a β grid: not a mean"),
    "dp-eta-decreasing-in-alpha": ("fixed", "formula: exact, no runs"),
    "dp-eta-constant-in-T": ("fixed", "formula: exact, no runs"),
    "dp-same-bound-order": ("fixed", "formula: exact, no runs"),
    "dp-c-matches-rule": ("fixed", "formula: exact, no runs"),
    "dp-gdp-improves": ("fixed", "formula: exact, no runs"),
}


def split_alpha(parts_per_claim: Mapping[str, int], alpha: float = ALPHA) -> dict[str, float]:
    """Bonferroni: α over the m claims that settle (at least one part), α/m per claim, α/(m·k) per part of a
    claim of k parts. Every part's CS then covers with probability ≥ 1 − α/(m·k) at all times, so with
    probability ≥ 1 − α every CS covers at once and no settled verdict is wrong."""
    settled = {c: k for c, k in parts_per_claim.items() if k > 0}
    if not settled:
        return {}
    m = len(settled)
    return {c: alpha / (m * k) for c, k in settled.items()}


@dataclass(frozen=True)
class Settled:
    """One part's sequential verdict: the verdict at the last round looked at, the runs at which it was
    decided (None while inconclusive), and the CS's bounds at every round looked at."""

    verdict: str
    decided_at: int | None
    rounds: tuple[int, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]


def _verdict(lower: float, upper: float, side: str) -> str:
    if upper < 0:
        return vd.REPRODUCED if side == "below" else vd.NOT_REPRODUCED
    if lower > 0:
        return vd.REPRODUCED if side == "above" else vd.NOT_REPRODUCED
    return vd.INCONCLUSIVE


def decide(stat: PairedStatistic, values, alpha: float, method: str = METHOD, rounds=ROUNDS) -> Settled:
    """Read the CS of E[s] at each round (runs available ≥ the round), in order; the first round whose CS
    excludes 0 decides, and the verdict stays (the CS is valid at that data-dependent time; later rounds are
    not run for this part). ``values``: s_i in run-index order."""
    x = np.asarray(values, dtype=np.float64)
    seq = cs.sequence(method, x, stat.lo, stat.hi, alpha, "two")
    looks = tuple(r for r in rounds if r <= x.size)
    lows, highs = [], []
    for r in looks:
        lo, hi = float(seq.lower[r - 1]), float(seq.upper[r - 1])
        lows.append(lo)
        highs.append(hi)
        v = _verdict(lo, hi, stat.side)
        if v != vd.INCONCLUSIVE:
            return Settled(v, r, looks[:len(lows)], tuple(lows), tuple(highs))
    return Settled(vd.INCONCLUSIVE, None, looks, tuple(lows), tuple(highs))
