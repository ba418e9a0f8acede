"""Gaussian-DP accounting of the private algorithms: the η that each spec's ``privacy`` reports.

The formulas the algorithm specs need (their GDP parameter for given parameters and horizon) live here, beside
the kernels, so a cell's code closure never reaches into a paper package; the DP-TS-UCB paper's own maths
(Table 1, App. E.1's equal-privacy c, δ(ε) curves) is in ``banditrepro.papers.dp_ts_ucb.privacy``, which
re-exports these. Pure numpy, vectorised over array arguments (scalars in, floats out); natural logarithms.
"""

from __future__ import annotations

import math

import numpy as np

from banditrepro import ReproError

C0 = math.sqrt(2.0 * math.pi * math.e)  # c0 = √(2πe) = 4.1327...


def as_float(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


def _first_bad(values: np.ndarray, bad: np.ndarray) -> str:
    return f"{values[bad].flat[0]:g}" if values.ndim else f"{float(values):g}"


def check_alpha(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=np.float64)
    bad = ~np.isfinite(a) | (a < 0) | (a > 1)
    if np.any(bad):
        raise ReproError(f"alpha must lie in [0, 1], got {_first_bad(a, bad)}")
    return a


def check_horizon(T) -> np.ndarray:
    t = np.asarray(T, dtype=np.float64)
    bad = ~np.isfinite(t) | (t <= 1)
    if np.any(bad):
        raise ReproError(f"horizon T must be > 1, got {_first_bad(t, bad)}")
    return t


def check_nonneg(name: str, value) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    bad = ~np.isfinite(v) | (v < 0)
    if np.any(bad):
        raise ReproError(f"{name} must be >= 0, got {_first_bad(v, bad)}")
    return v


def check_positive(name: str, value) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    bad = ~np.isfinite(v) | (v <= 0)
    if np.any(bad):
        raise ReproError(f"{name} must be > 0, got {_first_bad(v, bad)}")
    return v


def phi(alpha, T):
    """Algorithm 1 line 1: φ = c0 T^{0.5(1−α)} ln^{0.5(3−α)}(T) (real-valued; ⌊φ⌋ fresh samples per epoch)."""
    a, t = check_alpha(alpha), check_horizon(T)
    return as_float(C0 * t ** (0.5 * (1 - a)) * np.log(t) ** (0.5 * (3 - a)))


def eta_dp_ts_ucb(alpha, T):
    """Theorem 4.4: DP-TS-UCB(α) is √(2 c0 T^{0.5(1−α)} ln^{1.5(1−α)} T)-GDP (√(2c0) at α = 1)."""
    a, t = check_alpha(alpha), check_horizon(T)
    return as_float(np.sqrt(2 * C0 * t ** (0.5 * (1 - a)) * np.log(t) ** (1.5 * (1 - a))))


def eta_dp_ts_ucb_thm46(alpha, T):
    """Theorem 4.6's form η = √(2φ); it drops the 1/ln^α T of the proof, so it exceeds Thm 4.4 for α > 0."""
    return as_float(np.sqrt(2 * np.asarray(phi(alpha, T))))


def eta_m_ts_gaussian(T, b, c):
    """Table 1 / §2: M-TS-Gaussian with b pre-pulls per arm and variance scale c is √(T / (c (b+1)))-GDP.

    Each of the ≤ T draws N(S/(k+1), c/(k+1)) that sees a changed reward has k >= max(b, 1), sensitivity
    1/(k+1) and so μ = 1/√(c(k+1)) <= 1/√(c(b+1)) (``algorithms.ts_gaussian``). At b = 0 the paper's formula
    keeps 1/√c although k >= 1 gives 1/√(2c): it is √2 above what the sampler realises (TS-Gaussian's
    √(0.5 T) of ``eta_ts_gaussian`` is that sharper bound at c = 1)."""
    t = check_horizon(T)
    bb = check_nonneg("b", b)
    cc = check_positive("c", c)
    return as_float(np.sqrt(t / (cc * (bb + 1))))


def eta_ts_gaussian(T):
    """§2 (after Ou et al. 2024): TS-Gaussian satisfies √(0.5 T)-GDP (Table 1 writes the order, O(√T))."""
    return as_float(np.sqrt(0.5 * check_horizon(T)))
