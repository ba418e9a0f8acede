"""Privacy accounting of the DP-TS-UCB paper: the numbers of docs/decisions.md#privacy-accounting and Theorem 2.4's
δ(ε)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from banditrepro import ReproError
from banditrepro.papers.dp_ts_ucb.privacy import (
    C0,
    crossover_alpha0,
    delta_of_epsilon,
    equal_privacy_c,
    eta_dp_ts_ucb,
    eta_dp_ts_ucb_thm46,
    eta_m_ts_gaussian,
    eta_ts_gaussian,
    phi,
    regret_bounds_table,
)

T6 = 1e6
BERNOULLI5 = [0.95, 0.75, 0.55, 0.35, 0.15]


def matches(value: float, printed: str) -> bool:
    """``value`` rounds to ``printed`` at the precision it is printed with (e.g. '2.4e-5', '0.0047')."""
    mant, _, exp = printed.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    unit = 10.0 ** (-decimals) * 10.0 ** (int(exp) if exp else 0)
    return abs(value - float(printed)) <= 0.5 * unit * (1 + 1e-9)


def test_matches_helper_is_strict():
    assert matches(1.178, "1.18") and not matches(1.186, "1.18")
    assert matches(2.356e-5, "2.4e-5") and not matches(2.3e-5, "2.4e-5")


def test_c0():
    assert C0 == pytest.approx(4.132731, abs=5e-7)


def test_paper_equal_privacy_constants():
    # Sec. 5.3 / App. E.1: the two M-TS-Gaussian settings the paper reports.
    assert round(equal_privacy_c(0.0, T6, 1), 2) == 1.18
    assert round(equal_privacy_c(1.0, T6, 2000), 2) == 60.46


# docs/decisions.md#privacy-accounting: alpha, phi, eta_D (Thm 4.4), eta_D' = sqrt(2 phi) (Thm 4.6), c = 5 ln^a T,
# eta_M (b=0)
C4_TABLE = [
    (0.0, "212220.6", "651.49", "651.49", "5.000", "447.21"),
    (0.25, "27179.5", "167.92", "233.15", "9.640", "322.08"),
    (0.5, "3480.9", "43.28", "83.44", "18.585", "231.97"),
    (0.75, "445.8", "11.15", "29.86", "35.830", "167.06"),  # the research notes print 11.16; the formula gives 11.1546
    (1.0, "57.10", "2.875", "10.69", "69.078", "120.32"),
]


@pytest.mark.parametrize("row", C4_TABLE, ids=lambda r: f"alpha={r[0]}")
def test_spec_c4_phi_eta_table(row):
    alpha, p, ed, ed2, c, em = row
    assert matches(phi(alpha, T6), p)
    assert matches(eta_dp_ts_ucb(alpha, T6), ed)
    assert matches(eta_dp_ts_ucb_thm46(alpha, T6), ed2)
    c_val = 5 * math.log(T6) ** alpha
    assert matches(c_val, c)
    assert matches(eta_m_ts_gaussian(T6, 0, c_val), em)


# docs/decisions.md#privacy-accounting: equal-privacy c of M-TS-Gaussian for every b of App. E.1
C4_EQUAL_C = {
    0.0: {0: "2.356", 1: "1.178", 500: "0.0047", 1000: "0.0024", 2000: "0.0012", 5000: "0.00047",
          100000: "2.4e-5"},
    1.0: {0: "120985", 1: "60493", 500: "241.49", 1000: "120.86", 2000: "60.46", 5000: "24.19",
          100000: "1.21"},
}


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_spec_c4_equal_privacy_c_list(alpha):
    for b, printed in C4_EQUAL_C[alpha].items():
        assert matches(equal_privacy_c(alpha, T6, b), printed), (alpha, b)


@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("b", [0, 1, 2000])
def test_equal_privacy_c_equalises_eta(alpha, b):
    c = equal_privacy_c(alpha, T6, b)
    assert eta_m_ts_gaussian(T6, b, c) == pytest.approx(eta_dp_ts_ucb(alpha, T6), rel=1e-12)


def test_thm44_relations():
    alphas = np.linspace(0, 1, 11)
    for T in (1e3, 1e5, 1e7):
        # Thm 4.4 = sqrt(2 phi / ln^a T); Thm 4.6's sqrt(2 phi) agrees only at alpha = 0
        assert np.allclose(eta_dp_ts_ucb(alphas, T), np.sqrt(2 * phi(alphas, T) / np.log(T) ** alphas))
        assert eta_dp_ts_ucb(0.0, T) == pytest.approx(eta_dp_ts_ucb_thm46(0.0, T))
        assert np.all(eta_dp_ts_ucb_thm46(alphas[1:], T) > eta_dp_ts_ucb(alphas[1:], T))
        # privacy improves with alpha; alpha = 1 gives the constant sqrt(2 c0)
        assert np.all(np.diff(eta_dp_ts_ucb(alphas, T)) < 0)
        assert eta_dp_ts_ucb(1.0, T) == pytest.approx(math.sqrt(2 * C0))


def test_vectorised_shapes():
    out = eta_dp_ts_ucb(np.array([0.0, 0.5, 1.0])[:, None], np.array([1e3, 1e6]))
    assert out.shape == (3, 2)
    assert isinstance(phi(0.5, 1e4), float)


def test_delta_of_epsilon_matches_theorem_2_4():
    eps, eta = 0.7, 1.3
    direct = norm.cdf(-eps / eta + eta / 2) - math.exp(eps) * norm.cdf(-eps / eta - eta / 2)
    assert delta_of_epsilon(eps, eta) == pytest.approx(direct, rel=1e-12)


def test_delta_of_epsilon_properties():
    eps = np.logspace(-3, 3, 200)
    for eta in (0.01, 0.5, 2.875, 43.28, 651.49, 1e4):
        d = delta_of_epsilon(eps, eta)
        assert np.all((d >= 0) & (d <= 1))
        assert np.all(np.diff(d) <= 1e-15), eta  # decreasing in epsilon
    # increasing in eta (Remark after Thm 2.4), and eta -> 0 gives 0
    etas = np.logspace(-4, 3, 100)
    d = delta_of_epsilon(1.0, etas)
    assert np.all(np.diff(d) >= -1e-15)
    assert delta_of_epsilon(1.0, 0.0) == 0.0
    assert delta_of_epsilon(1.0, 1e-4) < 1e-300
    assert delta_of_epsilon(0.5, 1e6) == pytest.approx(1.0)


@pytest.mark.parametrize("eps, eta", [(800.0, 20.0), (40.0, 1.5), (0.5, 651.49), (0.01, 0.02), (2.0, 0.1)])
def test_delta_of_epsilon_stable_where_naive_form_fails(eps, eta):
    # e.g. eps = 800: e^eps overflows and Phi(b) underflows, so the naive form gives nan; compare with
    # 60-digit arithmetic
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    a, b = -eps / eta + eta / 2, -eps / eta - eta / 2
    exact = mpmath.ncdf(a) - mpmath.exp(eps) * mpmath.ncdf(b)
    d = delta_of_epsilon(eps, eta)
    assert d > 0
    assert d == pytest.approx(float(exact), rel=1e-9)


def test_regret_bounds_table():
    rows = regret_bounds_table(T6, BERNOULLI5, alpha=0.5, b=1, c=1.18)
    assert len(rows) == 7
    names = [r.algorithm for r in rows]
    assert names[0] == "TS-G" and names[-1] == "DP-TS-UCB (α=1)"
    gaps = np.array([0.2, 0.4, 0.6, 0.8])
    ts = float(np.sum(np.log(T6 * gaps**2) / gaps))
    assert rows[0].regret == pytest.approx(ts) and rows[0].eta == pytest.approx(1000.0)
    assert rows[1].regret == pytest.approx(1 * 5 + 1.18 * ts)
    assert rows[1].eta == pytest.approx(eta_m_ts_gaussian(T6, 1, 1.18))
    # the DP-TS-UCB row at alpha is the O-form of Thm 4.4 (constant 2 c0 dropped)
    assert rows[4].eta == pytest.approx(eta_dp_ts_ucb(0.5, T6) / math.sqrt(2 * C0))
    # α = 0 and α = 1 are the same O-form (Õ(T^0.25) with its ln^0.75 T kept), so the α rows compare
    assert rows[6].eta == 1.0 and rows[5].eta == pytest.approx(eta_dp_ts_ucb(0.0, T6) / math.sqrt(2 * C0))
    # alpha = 1 costs more regret than alpha = 0 in the bound; every row has text
    assert rows[6].regret > rows[5].regret > 0
    assert all(r.regret_bound and r.gdp for r in rows)


@pytest.mark.parametrize("call, msg", [
    (lambda: phi(1.5, 1e6), "alpha must lie in \\[0, 1\\]"),
    (lambda: eta_dp_ts_ucb(-0.1, 1e6), "alpha must lie in \\[0, 1\\]"),
    (lambda: equal_privacy_c(2.0, 1e6, 1), "alpha must lie in \\[0, 1\\]"),
    (lambda: equal_privacy_c(0.0, 1e6, -1), "b must be >= 0"),
    (lambda: eta_m_ts_gaussian(1e6, -2, 1.0), "b must be >= 0"),
    (lambda: eta_m_ts_gaussian(1e6, 0, 0.0), "c must be > 0"),
    (lambda: delta_of_epsilon(0.0, 1.0), "epsilon must be > 0"),
    (lambda: delta_of_epsilon(np.array([0.5, -1.0]), 1.0), "epsilon must be > 0"),
    (lambda: delta_of_epsilon(0.5, -1.0), "eta must be >= 0"),
    (lambda: phi(0.5, 1), "horizon T must be > 1"),
    (lambda: regret_bounds_table(1e6, [0.5], alpha=0.5), "means must be"),
    (lambda: regret_bounds_table(1e6, BERNOULLI5, alpha=3), "alpha must lie in \\[0, 1\\]"),
])
def test_bad_parameters_raise_one_line(call, msg):
    with pytest.raises(ReproError, match=msg) as info:
        call()
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------------
# The sampler and its accounting agree


def sampler_ledger(means, T, b, c, seed):
    """Σ_t (Δ_t/σ_t)² per arm over the draws of one M-TS-Gaussian run, as the kernel used them (its mean's
    weight on the reward sum and its sd), with the pull trace."""
    from banditrepro.algorithms.ts_gaussian import m_ts_gaussian_core

    mu = np.asarray(means, dtype=np.float64)
    K = mu.size
    tab = np.zeros((1, K, K))
    grid = np.array([T], np.int64)
    pulls = np.empty(T, np.int64)
    ledger = np.zeros(K)
    _, _, steps = m_ts_gaussian_core(mu, T, tab, grid, np.random.default_rng(np.random.SeedSequence([9, seed])),
                                     b, c, 0.7, pulls, ledger)
    assert steps == T
    return ledger, pulls


@pytest.mark.parametrize("b", [1, 3, 20])
def test_m_ts_gaussian_sampler_reaches_its_accounted_eta(b):
    # Arms with deterministic rewards 1 and 0 and a small c: after the b pre-pulls arm 1 (k = b, θ ~ N(0, c/(b+1)))
    # never beats arm 0 (mean ≥ b/(b+1) ≥ 0.5, ≥ 15 sd away), so every one of the T − bK draws of arm 1 sees its
    # first reward with Δ/σ = 1/√(c(b+1)): the realised η is √((T − bK)/(c(b+1))), the paper's √(T/(c(b+1)))
    # up to the pre-pull rounds, which draw nothing. The N(S/k, c/k) form of the old kernel gave 1/√(cb) per
    # draw (√2 above the accounting at b = 1), and with max(b, 1) pre-pulls b = 0 and 1 were one schedule.
    T, c, K = 5000, 1e-3, 2
    ledger, pulls = sampler_ledger([1.0, 0.0], T, b, c, seed=b)
    assert np.count_nonzero(pulls[b * K:] == 1) == 0
    realised = math.sqrt(ledger.max())
    assert realised == pytest.approx(math.sqrt((T - b * K) / (c * (b + 1))), rel=1e-12)
    assert realised <= eta_m_ts_gaussian(T, b, c)
    assert realised / eta_m_ts_gaussian(T, b, c) == pytest.approx(math.sqrt(1 - b * K / T), rel=1e-12)


@pytest.mark.parametrize("b, c", [(0, 1.0), (0, 5.0), (1, 1.18), (1, 0.3), (20, 0.05)])
def test_m_ts_gaussian_realised_eta_never_exceeds_the_accounting(b, c):
    # Composition of the per-draw Gaussian mechanisms actually run, worst arm, on bernoulli5 over 6 seeds: never
    # above √(T/(c(b+1))); at b = 0 every draw that sees a reward has k >= 1, so even √(T/(2c)) bounds it
    # (TS-Gaussian's √(0.5 T) at c = 1: the paper's b = 0 formula is √2 conservative).
    T = 4000
    for seed in range(6):
        ledger, _ = sampler_ledger(BERNOULLI5, T, b, c, seed)
        realised = math.sqrt(ledger.max())
        assert 0 < realised <= eta_m_ts_gaussian(T, b, c) * (1 + 1e-12)
        if b == 0:
            assert realised <= math.sqrt(T / (2 * c)) * (1 + 1e-12)


def test_ts_gaussian_eta_is_sqrt_half_T():
    # §2 of the paper (Ou et al. 2024): TS-Gaussian satisfies √(0.5 T)-GDP (Table 1 prints only the order √T)
    assert eta_ts_gaussian(T6) == pytest.approx(707.1067811865476, rel=1e-15)
    assert np.allclose(eta_ts_gaussian(np.array([1e3, 1e5])), np.sqrt([500.0, 5e4]), rtol=1e-15)
    assert eta_ts_gaussian(T6) < eta_m_ts_gaussian(T6, 0, 1.0)  # the b = 0 formula: √T
    # and the sampler reaches it: b = 0 with deterministic rewards 1/0 and a small c; in the runs where arm 1 is
    # pulled first and arm 0 second, arm 1 keeps k = 1 (Δ/σ = 1/√(2c)) for the remaining T − 1 rounds,
    # which is √(0.5 T) per unit c up to one round; no run exceeds it
    T, c = 3000, 1e-3
    best = max(sampler_ledger([1.0, 0.0], T, 0, c, seed)[0].max() for seed in range(40))
    assert (T - 2) / (2 * c) <= best <= T / (2 * c)
    ledgers = [sampler_ledger(BERNOULLI5, T, 0, 1.0, seed)[0].max() for seed in range(6)]
    assert max(ledgers) <= eta_ts_gaussian(T) ** 2 * (1 + 1e-12)


def test_crossover_of_dp_ts_ucb_alpha0_and_ts_gaussian():
    # η_DP-TS-UCB(α=0) = √(2 c0 T^0.5 ln^1.5 T) equals TS-Gaussian's √(0.5 T) at T* ≈ 6.57e5 (with √T it was 1.06e5)
    cross = crossover_alpha0()
    assert eta_dp_ts_ucb(0.0, cross) == pytest.approx(eta_ts_gaussian(cross), rel=1e-9)
    assert 6.5e5 < cross < 6.6e5
    assert eta_dp_ts_ucb(0.0, 0.9 * cross) > eta_ts_gaussian(0.9 * cross)
    assert eta_dp_ts_ucb(0.0, T6) < eta_ts_gaussian(T6)  # 651.5 < 707.1 at the paper's horizon
