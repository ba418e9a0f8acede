"""Confidence sequences for the mean of i.i.d. observations: intervals valid at every number of runs at once.

A fixed-n interval (``verdicts.bootstrap``) covers the mean with probability 95 % *at one n chosen in
advance*; a researcher who adds runs until it clears a boundary and stops there errs more often (issue 45).
A confidence sequence (C_t) covers the mean at every t simultaneously, P(∀t: μ ∈ C_t) ≥ 1 − α, so it may
be read after every run and stopped on at any data-dependent time. Three constructions, all returning the
running lower/upper bounds after each observation (``Sequence``; a leading axis of replications is
vectorised):

- ``betting``: the hedged capital process with predictable plug-in bets of Waudby-Smith & Ramdas (2023,
  "Estimating means of bounded random variables by betting", JRSS-B 86(1); arXiv:2010.09686), §4.2
  ("hedged capital", Theorem 3) with the bets of §5.1 ("predictable plug-in", PrPl). Needs a-priori bounds.
- ``empirical_bernstein``: the predictable plug-in empirical-Bernstein CS (PrPl-EB) of the same paper,
  §3.2, Theorem 2 (closed form). Needs a-priori bounds.
- ``asymptotic``: the asymptotic CS of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas (2024, "Time-uniform
  central limit theory and asymptotic confidence sequences", Ann. Statist. 52(6); arXiv:2103.06476),
  Theorem 2.2: Robbins' two-sided Gaussian-mixture boundary with the sample standard deviation plugged in.
  ASSUMPTION: i.i.d. observations with a finite (2+δ)-th moment (bounded data have every moment); the
  guarantee is *asymptotic* (the paper's Definition 2.1: coverage tends to 1 − α as the first time looked at
  grows), not a finite-sample one. No a-priori bounds are needed: its width scales with the observed spread,
  not with the a-priori range (why it is the one chosen for the claims, docs/settle.md).

Bounded observations x ∈ [lo, hi] are mapped to y = (x − lo)/(hi − lo) ∈ [0, 1] (the papers' setting) and the
bounds mapped back. ``side``: "two" (both bounds at level α), "lower" (a one-sided lower bound at level α,
upper = hi) or "upper". The bounded sequences are intersected over time (``running_intersection``: the papers
note that the running intersection of a CS is a CS); the asymptotic one is not (``asymptotic``). Observations
enter in the order given: for claims, run-index order, fixed before any run (docs/settle.md).

No clock or default random state anywhere: the sequences are deterministic functions of the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SIDES = ("two", "lower", "upper")
METHODS = ("betting", "empirical_bernstein", "asymptotic")
BET_TRUNCATION = 0.5  # c of WSR 2023 (bets truncated at c/m, c/(1 − m)); the paper's default 1/2
BISECTION_STEPS = 64  # bisection on [0, 1] to 2^-64: below double precision


@dataclass(frozen=True)
class Sequence:
    """Running bounds after each observation: arrays of shape (..., n); ``lower[..., t−1]`` is the bound after
    t observations."""

    lower: np.ndarray
    upper: np.ndarray

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    def excludes(self, boundary: float) -> np.ndarray:
        """Boolean (..., n): the sequence lies entirely on one side of ``boundary`` after t observations."""
        return (self.lower > boundary) | (self.upper < boundary)


def _check(side: str, alpha: float) -> None:
    if side not in SIDES:
        raise ValueError(f"side must be one of {', '.join(SIDES)}, not {side!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")


def _unit(x, lo: float, hi: float) -> np.ndarray:
    """x ∈ [lo, hi] → y = (x − lo)/(hi − lo) ∈ [0, 1]; refuses data outside the a-priori bounds (a bound that
    does not hold voids every guarantee)."""
    x = np.asarray(x, dtype=np.float64)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"a-priori bounds must be finite with lo < hi, got [{lo}, {hi}]")
    if x.size and (np.nanmin(x) < lo or np.nanmax(x) > hi or np.isnan(x).any()):
        raise ValueError(f"observations outside the a-priori bounds [{lo:g}, {hi:g}] "
                         f"(range seen [{np.nanmin(x):g}, {np.nanmax(x):g}])")
    return np.clip((x - lo) / (hi - lo), 0.0, 1.0)


def running_intersection(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """∩_{s ≤ t} C_s: the running maximum of the lower bounds and minimum of the upper bounds (WSR 2023, §3.2,
    remark after Theorem 2; WASKR 2024, §2: an intersection of a CS over time is a CS)."""
    return np.maximum.accumulate(lower, axis=-1), np.minimum.accumulate(upper, axis=-1)


def _plugin_variance(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(μ̂_{t−1}, σ̂²_{t−1}) for t = 1..n: the regularised running mean and variance of WSR 2023, Theorem 2,
    μ̂_t = (1/2 + Σ_{i≤t} y_i)/(t + 1), σ̂²_t = (1/4 + Σ_{i≤t} (y_i − μ̂_i)²)/(t + 1), μ̂_0 = 1/2, σ̂²_0 = 1/4,
    shifted by one so entry t−1 is predictable (uses y_1..y_{t−1} only)."""
    n = y.shape[-1]
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(y, axis=-1)) / (t + 1)  # μ̂_t, t = 1..n
    var = (0.25 + np.cumsum((y - mu) ** 2, axis=-1)) / (t + 1)  # σ̂²_t, t = 1..n
    lead = np.ones(y.shape[:-1] + (1,))
    mu_prev = np.concatenate([0.5 * lead, mu[..., :-1]], axis=-1)
    var_prev = np.concatenate([0.25 * lead, var[..., :-1]], axis=-1)
    return mu_prev, var_prev


def _plugin_bets(var_prev: np.ndarray, log_term: float) -> np.ndarray:
    """λ̃_t = √(2 log(1/a) / (σ̂²_{t−1} t log(1 + t))), the predictable plug-in of WSR 2023 (Theorem 2's λ_t before
    truncation; §5.1 for the betting CS), with log(1/a) = ``log_term`` (log(2/α) two-sided, log(1/α) one-sided)."""
    n = var_prev.shape[-1]
    t = np.arange(1, n + 1, dtype=np.float64)
    return np.sqrt(2.0 * log_term / (var_prev * t * np.log1p(t)))


# ---------------------------------------------------------------------------------------------------------
# (b) PrPl-EB: WSR 2023, Theorem 2


def empirical_bernstein(x, lo: float, hi: float, alpha: float, side: str = "two",
                        c: float = BET_TRUNCATION) -> Sequence:
    """The predictable plug-in empirical-Bernstein CS (WSR 2023, §3.2, Theorem 2), on y = (x − lo)/(hi − lo):

        C_t = Σλ_i y_i / Σλ_i ± (log(2/α) + Σ_{i≤t} v_i ψ_E(λ_i)) / Σ_{i≤t} λ_i,
        λ_t = min(√(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), c),  v_t = 4 (y_t − μ̂_{t−1})²,
        ψ_E(λ) = (−log(1 − λ) − λ)/4;

    one-sided: log(1/α) in place of log(2/α) and only one bound."""
    _check(side, alpha)
    y = _unit(x, lo, hi)
    log_term = math.log((2.0 if side == "two" else 1.0) / alpha)
    mu_prev, var_prev = _plugin_variance(y)
    lam = np.minimum(_plugin_bets(var_prev, log_term), c)  # Theorem 2: λ_t truncated at c
    v = 4.0 * (y - mu_prev) ** 2  # Theorem 2: v_i
    psi = (-np.log1p(-lam) - lam) / 4.0  # ψ_E(λ), WSR 2023 eq. for ψ_E (Fan et al.'s exponential bound)
    s_lam = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * y, axis=-1) / s_lam  # the λ-weighted mean
    margin = (log_term + np.cumsum(v * psi, axis=-1)) / s_lam
    lower = centre - margin if side in ("two", "lower") else np.full_like(centre, -np.inf)
    upper = centre + margin if side in ("two", "upper") else np.full_like(centre, np.inf)
    return _back(lower, upper, lo, hi)


def _back(lower: np.ndarray, upper: np.ndarray, lo: float, hi: float) -> Sequence:
    """Clip to [0, 1] (the mean lies there), intersect over time, map back to [lo, hi]."""
    lower, upper = running_intersection(np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0))
    return Sequence(lo + (hi - lo) * lower, lo + (hi - lo) * upper)


# ---------------------------------------------------------------------------------------------------------
# (a) betting: WSR 2023, §4.2 (hedged capital) with §5.1 (predictable plug-in bets)


def _bets(y: np.ndarray, side: str, alpha: float) -> np.ndarray:
    """λ̃_t of the hedged capital process (WSR 2023, §5.1, PrPl bets: the EB plug-in without truncation; the
    truncation depends on m, ``_log_capital``)."""
    log_term = math.log((2.0 if side == "two" else 1.0) / alpha)
    return _plugin_bets(_plugin_variance(y)[1], log_term)


def _log_capital(y: np.ndarray, bets: np.ndarray, m: np.ndarray, sign: int, c: float) -> np.ndarray:
    """log K_t^±(m) = Σ_{i≤t} log(1 ± λ_i^±(m)(y_i − m)) for every t (WSR 2023, §4.2, eq. of K_t^±), with
    λ_i^+(m) = min(λ̃_i, c/m), λ_i^−(m) = min(λ̃_i, c/(1 − m)) (the truncation keeping every factor ≥ 1 − c > 0).
    y, bets: (..., n); m broadcastable to (..., 1) or (..., n)."""
    with np.errstate(divide="ignore"):
        cap = c / m if sign > 0 else c / (1.0 - m)
    lam = np.minimum(bets, cap)
    return np.cumsum(np.log1p(sign * lam * (y - m)), axis=-1)


def _thresholds(side: str, alpha: float, theta: float) -> tuple[float, float]:
    """log thresholds of K^+ and K^−: the hedged process max(θK^+, (1 − θ)K^−) ≥ 1/α exactly when
    K^+ ≥ 1/(θα) or K^− ≥ 1/((1 − θ)α) (WSR 2023, §4.2, Theorem 3, hedged capital with θ = 1/2); one-sided: θ = 1
    (lower bound, K^+ alone) or θ = 0 (upper bound, K^− alone), each against 1/α."""
    if side == "two":
        return math.log(1.0 / (theta * alpha)), math.log(1.0 / ((1.0 - theta) * alpha))
    return (math.log(1.0 / alpha), math.inf) if side == "lower" else (math.inf, math.log(1.0 / alpha))


def betting_capital(x, boundary: float, lo: float, hi: float, alpha: float, side: str = "two",
                    c: float = BET_TRUNCATION) -> tuple[np.ndarray, np.ndarray]:
    """(log K_t^+(m0), log K_t^−(m0)) for every t at the single mean m0 = ``boundary``: O(n) per sequence, what a
    test of one boundary needs (the CS excludes m0 at t iff max_{s≤t} log K_s^+ ≥ threshold or the same for K^−;
    ``betting_excludes``)."""
    _check(side, alpha)
    y = _unit(x, lo, hi)
    m0 = np.float64((boundary - lo) / (hi - lo))
    bets = _bets(y, side, alpha)
    return _log_capital(y, bets, m0, +1, c), _log_capital(y, bets, m0, -1, c)


def betting_excludes(x, boundary: float, lo: float, hi: float, alpha: float, side: str = "two",
                     c: float = BET_TRUNCATION, theta: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """(above, below), boolean (..., n): the running-intersected betting CS lies above / below ``boundary``
    after t observations (Ville's inequality: P(∃t: K_t(m0) ≥ 1/α) ≤ α at the true mean m0)."""
    kp, km = betting_capital(x, boundary, lo, hi, alpha, side, c)
    tp, tm = _thresholds(side, alpha, theta)
    return np.maximum.accumulate(kp, axis=-1) >= tp, np.maximum.accumulate(km, axis=-1) >= tm


def betting(x, lo: float, hi: float, alpha: float, side: str = "two", c: float = BET_TRUNCATION,
            theta: float = 0.5, times=None) -> Sequence:
    """The hedged betting CS (WSR 2023, §4.2, Theorem 3; PrPl bets §5.1): C_t = {m : max(θK_t^+(m),
    (1 − θ)K_t^−(m)) < 1/α}. K_t^+ is non-increasing in m (each factor 1 + min(λ̃, c/m)(y − m) is) and K_t^−
    non-decreasing, so C_t = (l_t, u_t) with l_t = inf{m : K_t^+(m) < 1/(θα)} and u_t = sup{m : K_t^−(m) <
    1/((1 − θ)α)}, each found by bisection on [0, 1] (``BISECTION_STEPS``; the returned lower bound is the
    bisection's left end, the upper its right end, so rounding only widens the interval).

    ``times``: the observation counts to compute (default all 1..n; cost O(n · len(times)) per sequence);
    bounds at other times are NaN before the running intersection, which then carries the last computed one."""
    _check(side, alpha)
    y = _unit(x, lo, hi)
    n = y.shape[-1]
    ts = np.arange(1, n + 1) if times is None else np.asarray(sorted(set(int(t) for t in times)))
    if ts.size and (ts.min() < 1 or ts.max() > n):
        raise ValueError(f"times must lie in 1..{n}")
    bets = _bets(y, side, alpha)
    tp, tm = _thresholds(side, alpha, theta)
    lead = y.shape[:-1]
    lower = np.full(lead + (n,), np.nan)
    upper = np.full(lead + (n,), np.nan)
    mask = np.arange(n)[None, :] < ts[:, None]  # (L, n): observation i counts at time t
    yb, bb = y[..., None, :], bets[..., None, :]  # (..., 1, n)

    def log_k(m, sign):  # log K_t^±(m_t) at every requested t, m: (..., L)
        with np.errstate(divide="ignore"):
            cap = c / m[..., None] if sign > 0 else c / (1.0 - m[..., None])
        lam = np.minimum(bb, cap)
        return np.where(mask, np.log1p(sign * lam * (yb - m[..., None])), 0.0).sum(axis=-1)

    shape = lead + (ts.size,)
    if math.isfinite(tp):  # lower bound: K^+(m) ≥ thr on [0, l), < thr on (l, 1]
        a, b = np.zeros(shape), np.ones(shape)
        for _ in range(BISECTION_STEPS):
            mid = (a + b) / 2
            out = log_k(mid, +1) >= tp  # mid is excluded, below the CS
            a, b = np.where(out, mid, a), np.where(out, b, mid)
        inside0 = log_k(np.zeros(shape), +1) < tp
        lower[..., ts - 1] = np.where(inside0, 0.0, a)
    else:
        lower[..., ts - 1] = 0.0
    if math.isfinite(tm):  # upper bound: K^−(m) < thr on [0, u), ≥ thr on (u, 1]
        a, b = np.zeros(shape), np.ones(shape)
        for _ in range(BISECTION_STEPS):
            mid = (a + b) / 2
            out = log_k(mid, -1) >= tm  # mid is excluded, above the CS
            a, b = np.where(out, a, mid), np.where(out, mid, b)
        inside1 = log_k(np.ones(shape), -1) < tm
        upper[..., ts - 1] = np.where(inside1, 1.0, b)
    else:
        upper[..., ts - 1] = 1.0
    # times not computed: the trivial interval before the first computed time, else carried by the intersection
    lower = np.where(np.isnan(lower), 0.0, lower)
    upper = np.where(np.isnan(upper), 1.0, upper)
    return _back(lower, upper, lo, hi)


# ---------------------------------------------------------------------------------------------------------
# (c) asymptotic: WASKR 2024, Theorem 2.2 (Robbins' Gaussian mixture)

ASYMPTOTIC_T_OPT = 160  # the time the mixture is tuned for: the geometric middle of the rounds 20 … 1280
ASYMPTOTIC_START = 20  # the first time the asymptotic CS is read (the first settle round)


def mixture_rho2(t_opt: float, alpha: float) -> float:
    """ρ² minimising the two-sided normal-mixture boundary's width at t = t_opt (WASKR 2024, §2.3, after Theorem
    2.2, the tuning of Howard et al. 2021, Ann. Statist. 49(2), §3): ρ² = (−2 log α + log(−2 log α + 1)) / t_opt."""
    la = -2.0 * math.log(alpha)
    return (la + math.log(la + 1.0)) / float(t_opt)


def mixture_radius(t: np.ndarray, alpha: float, rho2: float) -> np.ndarray:
    """√( 2(tρ² + 1)/(t²ρ²) · log(√(tρ² + 1)/α) ): the half-width per unit standard deviation of the two-sided
    Gaussian-mixture boundary (WASKR 2024, Theorem 2.2; Robbins 1970: the mixture ∫exp(λS_t − λ²t/2)dN(0, ρ²)(λ)
    = (tρ² + 1)^{−1/2} exp(ρ²S_t²/(2(tρ² + 1))) crosses 1/α exactly when |S_t| exceeds t times this)."""
    t = np.asarray(t, dtype=np.float64)
    return np.sqrt(2.0 * (t * rho2 + 1.0) / (t * t * rho2) * np.log(np.sqrt(t * rho2 + 1.0) / alpha))


def asymptotic(x, alpha: float, side: str = "two", t_opt: float = ASYMPTOTIC_T_OPT,
               lo: float = -math.inf, hi: float = math.inf, start: int = ASYMPTOTIC_START) -> Sequence:
    """The asymptotic CS of WASKR 2024, Theorem 2.2: μ̂_t ± σ̂_t · ``mixture_radius``(t), with μ̂_t the sample
    mean and σ̂²_t = (1/t)Σ_{i≤t}(x_i − μ̂_t)² (the paper's plug-in variance; consistent, which is all Theorem 2.2
    asks). Assumption (module docstring): i.i.d., finite (2+δ)-th moment; valid asymptotically. One-sided use
    keeps the two-sided boundary at level α (Ville's inequality bounds either side's crossing by α: conservative).
    Optional a-priori [lo, hi] only clip the bounds.

    Not intersected over time: σ̂_t may be 0 early (identical first runs), and an intersection would then pin the
    sequence to a point. Before ``start`` observations the bounds are [lo, hi] (the asymptotic guarantee is
    about sequences looked at from a start time on, Definition 2.1; the settle rounds start at 20)."""
    _check(side, alpha)
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[-1]
    t = np.arange(1, n + 1, dtype=np.float64)
    mean = np.cumsum(x, axis=-1) / t
    # Σ(x_i − μ̂_t)² = Σx_i² − t μ̂_t², computed about the first observation to avoid cancellation
    d = x - x[..., :1]
    md = np.cumsum(d, axis=-1) / t
    var = np.maximum(np.cumsum(d * d, axis=-1) / t - md * md, 0.0)
    half = np.sqrt(var) * mixture_radius(t, alpha, mixture_rho2(t_opt, alpha))
    lower = mean - half if side in ("two", "lower") else np.full_like(mean, -np.inf)
    upper = mean + half if side in ("two", "upper") else np.full_like(mean, np.inf)
    early = t < start
    lower = np.where(early, lo, np.clip(lower, lo, hi))
    upper = np.where(early, hi, np.clip(upper, lo, hi))
    return Sequence(lower, upper)


def sequence(method: str, x, lo: float, hi: float, alpha: float, side: str = "two", **kw) -> Sequence:
    """One of ``METHODS`` by name (``asymptotic`` uses lo/hi only to clip)."""
    if method == "betting":
        return betting(x, lo, hi, alpha, side, **kw)
    if method == "empirical_bernstein":
        return empirical_bernstein(x, lo, hi, alpha, side, **kw)
    if method == "asymptotic":
        return asymptotic(x, alpha, side, lo=lo, hi=hi, **kw)
    raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")


# ---------------------------------------------------------------------------------------------------------
# planning: the half-width a sequence would have after n observations with a given spread


def planned_half_width(n, sd: float, alpha: float, method: str = "asymptotic", lo: float = 0.0, hi: float = 1.0,
                       c: float = BET_TRUNCATION) -> np.ndarray:
    """Two-sided half-width after ``n`` observations whose standard deviation stays ``sd``, for sizing the next
    round (not a guarantee):

    - asymptotic: sd · ``mixture_radius``(n) (WASKR 2024, Theorem 2.2, exactly);
    - empirical_bernstein and betting: the PrPl-EB margin of WSR 2023, Theorem 2, with each v_i ψ_E(λ_i) replaced
      by its expectation σ²λ_i²/2 (ψ_E(λ) ≈ λ²/8, E v_i ≈ 4σ²) and σ̂² by σ² = (sd/(hi − lo))²:
      (log(2/α) + (σ²/2) Σ λ_i²) / Σ λ_i, λ_i = min(√(2 log(2/α)/(σ² i log(1 + i))), c), in units of hi − lo.
      The betting CS is in practice no wider than this (WSR 2023, §6), so it is used for both.
    """
    n = np.atleast_1d(np.asarray(n, dtype=np.int64))
    if method == "asymptotic":
        return float(sd) * mixture_radius(n, alpha, mixture_rho2(ASYMPTOTIC_T_OPT, alpha))
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    var = max((float(sd) / (hi - lo)) ** 2, 1e-300)
    L = math.log(2.0 / alpha)
    i = np.arange(1, int(n.max()) + 1, dtype=np.float64)
    lam = np.minimum(np.sqrt(2.0 * L / (var * i * np.log1p(i))), c)
    s1, s2 = np.cumsum(lam), np.cumsum(lam * lam)
    return (hi - lo) * (L + 0.5 * var * s2[n - 1]) / s1[n - 1]
