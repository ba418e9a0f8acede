"""Literal reference implementations of the confidence sequences of banditrepro.confseq: plain Python loops,
one observation at a time, step by step from the papers' formulas (no numpy in the recursions), for checking the
vectorised versions to 1e-12.

WSR 2023: Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting", JRSS-B 86(1).
WASKR 2024: Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas, "Time-uniform central limit theory and asymptotic
confidence sequences", Ann. Statist. 52(6).
"""

from __future__ import annotations

import math


def _unit(xs, lo, hi):
    return [min(max((x - lo) / (hi - lo), 0.0), 1.0) for x in xs]


def _predictable(ys):
    """μ̂_{t−1}, σ̂²_{t−1} for t = 1..n (WSR 2023, Theorem 2): μ̂_0 = 1/2, σ̂²_0 = 1/4,
    μ̂_t = (1/2 + Σ_{i≤t} y_i)/(t + 1), σ̂²_t = (1/4 + Σ_{i≤t}(y_i − μ̂_i)²)/(t + 1)."""
    mu_prev, var_prev = [], []
    mu, var = 0.5, 0.25
    s, ss = 0.0, 0.0
    for t, y in enumerate(ys, start=1):
        mu_prev.append(mu)
        var_prev.append(var)
        s += y
        mu = (0.5 + s) / (t + 1)  # μ̂_t
        ss += (y - mu) ** 2
        var = (0.25 + ss) / (t + 1)  # σ̂²_t
    return mu_prev, var_prev


def _bet(var_prev, t, log_term):
    """λ̃_t = √(2 log(1/a) / (σ̂²_{t−1} t log(1 + t)))."""
    return math.sqrt(2.0 * log_term / (var_prev * t * math.log(1.0 + t)))


def empirical_bernstein(xs, lo, hi, alpha, side="two", c=0.5):
    """WSR 2023, Theorem 2 (PrPl-EB), then clipped to [0, 1], intersected over time, mapped back."""
    ys = _unit(xs, lo, hi)
    log_term = math.log((2.0 if side == "two" else 1.0) / alpha)
    mu_prev, var_prev = _predictable(ys)
    s_lam = s_lam_y = s_vpsi = 0.0
    low_run, up_run = -math.inf, math.inf
    lows, ups = [], []
    for t, y in enumerate(ys, start=1):
        lam = min(_bet(var_prev[t - 1], t, log_term), c)
        v = 4.0 * (y - mu_prev[t - 1]) ** 2
        psi = (-math.log(1.0 - lam) - lam) / 4.0
        s_lam += lam
        s_lam_y += lam * y
        s_vpsi += v * psi
        centre = s_lam_y / s_lam
        margin = (log_term + s_vpsi) / s_lam
        low = centre - margin if side in ("two", "lower") else -math.inf
        up = centre + margin if side in ("two", "upper") else math.inf
        low_run = max(low_run, min(max(low, 0.0), 1.0))
        up_run = min(up_run, min(max(up, 0.0), 1.0))
        lows.append(lo + (hi - lo) * low_run)
        ups.append(lo + (hi - lo) * up_run)
    return lows, ups


def log_capital(ys, t, m, sign, log_term, c=0.5):
    """log K_t^±(m) = Σ_{i≤t} log(1 ± λ_i^±(m)(y_i − m)), λ^+ = min(λ̃_i, c/m), λ^− = min(λ̃_i, c/(1 − m))
    (WSR 2023, §4.2 and §5.1)."""
    _, var_prev = _predictable(ys[:t])
    total = 0.0
    for i in range(1, t + 1):
        lt = _bet(var_prev[i - 1], i, log_term)
        if sign > 0:
            lam = lt if m == 0.0 else min(lt, c / m)
        else:
            lam = lt if m == 1.0 else min(lt, c / (1.0 - m))
        total += math.log1p(sign * lam * (ys[i - 1] - m))
    return total


def betting(xs, lo, hi, alpha, side="two", c=0.5, theta=0.5, steps=64):
    """WSR 2023, §4.2 (hedged capital, Theorem 3): C_t = {m : K_t^+(m) < 1/(θα)} ∩ {m : K_t^−(m) < 1/((1 − θ)α)},
    bounds by bisection on [0, 1], then intersected over time and mapped back."""
    ys = _unit(xs, lo, hi)
    log_term = math.log((2.0 if side == "two" else 1.0) / alpha)
    if side == "two":
        tp, tm = math.log(1.0 / (theta * alpha)), math.log(1.0 / ((1.0 - theta) * alpha))
    else:
        tp, tm = (math.log(1.0 / alpha), math.inf) if side == "lower" else (math.inf, math.log(1.0 / alpha))
    low_run, up_run = 0.0, 1.0
    lows, ups = [], []
    for t in range(1, len(ys) + 1):
        low = 0.0
        if tp < math.inf and not log_capital(ys, t, 0.0, +1, log_term, c) < tp:
            a, b = 0.0, 1.0
            for _ in range(steps):
                mid = (a + b) / 2
                if log_capital(ys, t, mid, +1, log_term, c) >= tp:
                    a = mid
                else:
                    b = mid
            low = a
        up = 1.0
        if tm < math.inf and not log_capital(ys, t, 1.0, -1, log_term, c) < tm:
            a, b = 0.0, 1.0
            for _ in range(steps):
                mid = (a + b) / 2
                if log_capital(ys, t, mid, -1, log_term, c) >= tm:
                    b = mid
                else:
                    a = mid
            up = b
        low_run, up_run = max(low_run, low), min(up_run, up)
        lows.append(lo + (hi - lo) * low_run)
        ups.append(lo + (hi - lo) * up_run)
    return lows, ups


def asymptotic(xs, alpha, side="two", t_opt=160, start=20, lo=-math.inf, hi=math.inf):
    """WASKR 2024, Theorem 2.2: μ̂_t ± σ̂_t √(2(tρ² + 1)/(t²ρ²) log(√(tρ² + 1)/α)), σ̂²_t = (1/t)Σ(x_i − μ̂_t)²,
    ρ² = (−2 log α + log(−2 log α + 1))/t_opt; [lo, hi] before ``start``; not intersected."""
    la = -2.0 * math.log(alpha)
    rho2 = (la + math.log(la + 1.0)) / t_opt
    lows, ups = [], []
    for t in range(1, len(xs) + 1):
        if t < start:
            lows.append(lo)
            ups.append(hi)
            continue
        mean = sum(xs[:t]) / t
        var = sum((x - mean) ** 2 for x in xs[:t]) / t
        radius = math.sqrt(2.0 * (t * rho2 + 1.0) / (t * t * rho2) * math.log(math.sqrt(t * rho2 + 1.0) / alpha))
        half = math.sqrt(var) * radius
        low = mean - half if side in ("two", "lower") else -math.inf
        up = mean + half if side in ("two", "upper") else math.inf
        lows.append(min(max(low, lo), hi))
        ups.append(min(max(up, lo), hi))
    return lows, ups
