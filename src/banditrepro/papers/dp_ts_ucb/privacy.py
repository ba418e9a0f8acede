"""Privacy accounting of the DP-TS-UCB paper (Hu, Huang, Zhang, Lécuyer, Hegde, ICML 2025).

Pure numpy/scipy, vectorised over array arguments (scalars in, floats out). Natural logarithms. The GDP
parameters of the algorithms themselves (φ, the η of DP-TS-UCB, M-TS-Gaussian, TS-Gaussian) are defined in
``banditrepro.algorithms.gdp`` (the specs report them) and re-exported here.

- ``phi``: the fresh-sample budget φ = c0 T^{0.5(1−α)} ln^{0.5(3−α)} T of Algorithm 1, c0 = √(2πe).
- ``eta_dp_ts_ucb``: Theorem 4.4, η = √(2 c0 T^{0.5(1−α)} ln^{1.5(1−α)} T) (= √(2φ / ln^α T)); used for plots
  (docs/decisions.md#privacy-accounting).
- ``eta_dp_ts_ucb_thm46``: the η = √(2φ) that Theorem 4.6 writes; equals Theorem 4.4 only at α = 0.
- ``eta_m_ts_gaussian``: M-TS-Gaussian (Ou et al. 2024), η = √(T / (c (b+1))).
- ``eta_ts_gaussian``: TS-Gaussian (Ou et al. 2024 as quoted in §2 of the paper), η = √(0.5 T).
- ``crossover_alpha0``: the T above which DP-TS-UCB(α = 0) has a smaller η than TS-Gaussian.
- ``delta_of_epsilon``: Theorem 2.4 (Dong et al.), the (ε, δ(ε))-DP curve of an η-GDP mechanism.
- ``equal_privacy_c``: App. E.1, the c that gives M-TS-Gaussian the GDP of DP-TS-UCB(α).
- ``regret_bounds_table``: Table 1 evaluated numerically, every hidden constant set to 1.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from banditrepro import ReproError
from banditrepro.algorithms.gdp import C0, eta_dp_ts_ucb, eta_dp_ts_ucb_thm46, eta_m_ts_gaussian, eta_ts_gaussian, phi
from banditrepro.algorithms.gdp import as_float as _out
from banditrepro.algorithms.gdp import check_alpha as _alpha
from banditrepro.algorithms.gdp import check_horizon as _horizon
from banditrepro.algorithms.gdp import check_nonneg as _nonneg
from banditrepro.algorithms.gdp import check_positive as _positive
from banditrepro.manifest import AlgoRef, Figure

__all__ = ["C0", "BoundRow", "delta_of_epsilon", "equal_privacy_c", "eta_dp_ts_ucb", "eta_dp_ts_ucb_thm46",
           "eta_m_ts_gaussian", "eta_ts_gaussian", "crossover_alpha0", "phi", "regret_bounds_table"]


def crossover_alpha0() -> float:
    """The T above which DP-TS-UCB(α = 0), √(2 c0 T^0.5 ln^1.5 T)-GDP (Thm 4.4), beats TS-Gaussian's √(0.5 T):
    with x = ln T the condition 2 c0 T^0.5 x^1.5 < 0.5 T is ln(4 c0) + 1.5 ln x < 0.5 x (root in x ∈ (10, 200))."""
    from scipy.optimize import brentq

    return math.exp(brentq(lambda x: math.log(4 * C0) + 1.5 * math.log(x) - 0.5 * x, 10.0, 200.0))


def equal_privacy_c(alpha, T, b):
    """App. E.1: c = T^{0.5(1+α)} ln^{−1.5(1−α)}(T) / (2 c0 (b+1)), so that M-TS-Gaussian(b, c) has the GDP
    parameter of DP-TS-UCB(α) (Thm 4.4). The Sec. 5.3 version has an extra square root, a typo: only this
    form gives the paper's c = 1.18 (α=0, b=1) and c = 60.46 (α=1, b=2000) at T = 10^6."""
    a, t = _alpha(alpha), _horizon(T)
    bb = _nonneg("b", b)
    return _out(t ** (0.5 * (1 + a)) * np.log(t) ** (-1.5 * (1 - a)) / (2 * C0 * (bb + 1)))


def delta_of_epsilon(eps, eta):
    """Theorem 2.4: an η-GDP mechanism is (ε, δ(ε))-DP with δ(ε) = Φ(−ε/η + η/2) − e^ε Φ(−ε/η − η/2).

    Evaluated as Φ(a)·(1 − exp(ε + ln Φ(b) − ln Φ(a))) with ``log_ndtr``, which stays accurate when both terms
    are tiny (small η) or when η is in the thousands. δ = 0 at η = 0; the result is clipped to [0, 1].
    """
    from scipy.special import log_ndtr  # here, not at the top: scipy.special costs ~0.2 CPU-s to import, and
    # every Snakemake invocation imports this module (the figure kinds are registered at parse time)

    e = _positive("epsilon", eps)
    h = _nonneg("eta", eta)
    e, h = np.broadcast_arrays(e, h)
    safe = np.where(h > 0, h, 1.0)
    la = log_ndtr(-e / safe + safe / 2)
    lb = log_ndtr(-e / safe - safe / 2)
    with np.errstate(over="ignore", invalid="ignore"):
        d = np.exp(la) * -np.expm1(np.minimum(e + lb - la, 0.0))
    return _out(np.clip(np.where(h > 0, d, 0.0), 0.0, 1.0))


class BoundRow(NamedTuple):
    algorithm: str
    regret_bound: str  # Table 1 text
    gdp: str  # Table 1 text
    regret: float  # the bound with every hidden constant = 1, summed over the sub-optimal arms
    eta: float  # the GDP parameter with every hidden constant = 1 (Õ / O dropped)


def regret_bounds_table(T, means, *, alpha: float = 0.5, b: int = 0, c: float = 1.0,
                        gamma: float = 0.25) -> list[BoundRow]:
    """Table 1 of the paper, evaluated at horizon ``T`` on Bernoulli ``means``.

    Every O(·)/Õ(·) is read with constant 1 (and no hidden logs, except that DP-TS-UCB's Õ(T^0.25) at α = 0
    keeps Thm 4.4's ln^0.75 T, as the row at ``alpha`` does: the three α rows are one formula), and the
    K·f(Δ)/Δ forms are evaluated as Σ_{i: Δ_i > 0} f(Δ_i)/Δ_i, the per-arm sums of Thm 4.2 and Agrawal–Goyal,
    so the numbers are orders of magnitude, not predictions. ``alpha`` is the DP-TS-UCB trade-off parameter
    and the exponent of the M-TS-G row with b, c = ln^α T; ``b``, ``c`` parametrise the generic M-TS-G row;
    ``gamma`` the b, c = T^γ row (b = c = T^γ and ln^α T are used as is, without rounding b).
    """
    t = float(_horizon(T))
    a = float(_alpha(alpha))
    bb = float(_nonneg("b", b))
    cc = float(_positive("c", c))
    g = float(_positive("gamma", gamma))
    mu = np.asarray(means, dtype=np.float64)
    if mu.ndim != 1 or mu.size < 2 or not np.all(np.isfinite(mu)):
        raise ReproError(f"means must be a 1-D list of at least 2 finite numbers, got {means!r}")
    K = mu.size
    gaps = mu.max() - mu
    d = gaps[gaps > 0]
    L = math.log(t)
    LL = math.log(L)

    def ts_sum(scale: float) -> float:  # Σ scale·ln(TΔ²)/Δ
        return float(np.sum(scale * np.log(t * d**2) / d))

    def dp_sum(x: float) -> float:  # Thm 4.2 with α = x
        return float(np.sum(np.log(t ** (0.5 * (3 - x)) * d**2) * L**x / d + LL * L**x / d))

    tg = t**g
    la = L**a
    return [
        BoundRow("TS-G", "O(K ln(TΔ²)/Δ)", "O(√T)", ts_sum(1.0), math.sqrt(t)),
        BoundRow(f"M-TS-G (b={bb:g}, c={cc:g})", "bK + O(cK ln(TΔ²)/Δ)", "√(T/(c(b+1)))",
                 bb * K + ts_sum(cc), math.sqrt(t / (cc * (bb + 1)))),
        BoundRow(f"M-TS-G (b, c = T^γ, γ={g:g})", "O(K T^γ ln(TΔ²)/Δ)", "O(√(T^(1−2γ)))",
                 ts_sum(tg), math.sqrt(t ** (1 - 2 * g))),
        BoundRow(f"M-TS-G (b, c = ln^α T, α={a:g})", "O(K ln^α(T) ln(TΔ²)/Δ)", "O(√(T/ln^(2α)(T)))",
                 ts_sum(la), math.sqrt(t / L ** (2 * a))),
        BoundRow(f"DP-TS-UCB (α={a:g})", "O(K ln(T^(0.5(3−α))Δ²) ln^α(T)/Δ) + O(K lnln(T) ln^α(T)/Δ)",
                 "O(√(T^(0.5(1−α)) ln^(1.5(1−α))(T)))", dp_sum(a),
                 math.sqrt(t ** (0.5 * (1 - a)) * L ** (1.5 * (1 - a)))),
        BoundRow("DP-TS-UCB (α=0)", "O(K ln(T^1.5 Δ²)/Δ) + O(K lnln(T)/Δ)", "Õ(T^0.25)", dp_sum(0.0),
                 math.sqrt(t**0.5 * L**1.5)),
        BoundRow("DP-TS-UCB (α=1)", "O(K ln(TΔ²) ln(T)/Δ) + O(K lnln(T) ln(T)/Δ)", "O(1)", dp_sum(1.0), 1.0),
    ]


def epsilon_at_delta(delta: float, eta: float) -> float:
    """The smallest ε with δ(ε) ≤ ``delta`` for an η-GDP mechanism (Theorem 2.4 inverted)."""
    from scipy.optimize import brentq

    if not 0 < delta < 1:
        raise ReproError(f"delta must lie in (0, 1), got {delta:g}")
    if eta <= 0:
        return 0.0
    lo = 1e-12
    if delta_of_epsilon(lo, eta) <= delta:
        return 0.0
    hi = max(1.0, eta * eta)
    while delta_of_epsilon(hi, eta) > delta:
        hi *= 2
    return float(brentq(lambda e: delta_of_epsilon(e, eta) - delta, lo, hi, xtol=1e-12, rtol=1e-10))


# ---------------------------------------------------------------------------------------------------
# privacy accounting of one line


def line_alpha(fig: Figure, panel_index: int, ref: AlgoRef) -> float | None:
    """The α a line stands for: DP-TS-UCB's own parameter, else the figure's ``alpha``/``panel_alpha`` option."""
    if ref.name == "dp-ts-ucb":
        return float(ref.params["alpha"])
    opt = fig.extra.get("alpha")
    value = None
    if isinstance(opt, dict):
        value = opt.get(ref.key)
    elif opt is not None:
        value = opt
    if value is None and "panel_alpha" in fig.extra:
        pa = fig.extra["panel_alpha"]
        if not isinstance(pa, list) or len(pa) != len(fig.panels):
            raise ReproError(f"{fig.stem}: options.panel_alpha needs one α per panel ({len(fig.panels)})")
        value = pa[panel_index]
    if value is None:
        return None
    try:
        a = float(value)
    except (TypeError, ValueError):
        raise ReproError(f"{fig.stem}: α of line {ref.key!r} is not a number: {value!r}") from None
    _alpha(a)  # one-line error when outside [0, 1]
    return a


def line_privacy(ref: AlgoRef, T: int) -> dict:
    """GDP parameter η or pure ε of one line at horizon T, from its algorithm's spec (``AlgorithmSpec.privacy``),
    and the M-TS-Gaussian columns b (pre-pulls) and c (variance scale; TS-Gaussian is b = 0, c = 1)."""
    from banditrepro.algorithms import get

    row = {"name": ref.name, "b": np.nan, "c": np.nan, "epsilon": np.nan, "eta": np.nan, "privacy": ""}
    if ref.name == "ts-gaussian":
        row.update(b=0, c=1.0)
    elif ref.name == "m-ts-gaussian":
        row.update(b=int(ref.params.get("b", 0)), c=float(ref.params.get("c", 1.0)))
    acc = get(ref.name).privacy
    if acc is None:
        row["privacy"] = "not private"
        return row
    if acc.kind == "pure":
        row["epsilon"] = float(acc.level(ref.params, T))
        row["privacy"] = acc.formula.format(**ref.params)
    else:
        row["privacy"] = acc.formula.format(**ref.params)
        if T > 1:
            row["eta"] = acc.level(ref.params, T)
    return row


def is_pure(ref: AlgoRef) -> bool:
    """True for an (ε, 0)-DP line (its δ is 0 from its ε on)."""
    from banditrepro.algorithms import get

    acc = get(ref.name).privacy
    return acc is not None and acc.kind == "pure"


def c_rule_value(rule: dict, alpha: float | None, b) -> float:
    """The c that ``rule`` prescribes for a line (NaN when the line has no α)."""
    if alpha is None or b is None or (isinstance(b, float) and math.isnan(b)):
        return math.nan
    kind = rule.get("kind")
    T = float(rule.get("design_horizon", 10**6))
    if kind == "equal-privacy":
        return float(equal_privacy_c(alpha, T, b))
    if kind == "log-power":
        return float(rule.get("factor", 1.0)) * math.log(T) ** float(_alpha(alpha))
    raise ReproError(f"c_rule kind must be 'equal-privacy' or 'log-power', got {kind!r}")
