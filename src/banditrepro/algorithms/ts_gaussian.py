"""TS-Gaussian (Agrawal & Goyal 2017, Alg. 2) and M-TS-Gaussian (Ou, Avella Medina, Cummings 2024).

Form (docs/decisions.md#m-ts-gaussian pseudo-code, Agrawal–Goyal's posterior): every arm is pulled b times first,
round-robin (b = 0: no pre-pull); then each round every arm draws θ_i ~ N(S_i/(k_i+1), c/(k_i+1)), with k_i its number
of pulls and S_i its reward sum, and the argmax is pulled. TS-Gaussian is b = 0, c = 1.

Privacy (DP-TS-UCB paper §2/§3 and Table 1, after Ou et al.): one reward in [0, 1] moves S_i by at most 1, so
the mean S_i/(k_i+1) of a draw moves by at most Δ = 1/(k_i+1) and the draw is a Gaussian mechanism with
σ² = c/(k_i+1): μ = Δ/σ = 1/√(c(k_i+1)). An arm holding the changed reward has k_i >= max(b, 1), so each of
the at most T draws that see it is 1/√(c(b+1))-GDP and composition gives the paper's √(T/(c(b+1)))
(``banditrepro.papers.dp_ts_ucb.privacy.eta_m_ts_gaussian``; TS-Gaussian: k_i >= 1 gives √(0.5 T), ``eta_ts_gaussian``).
``m_ts_gaussian_core`` can record Σ_t (Δ_t/σ_t)² per arm (``ledger``) so tests compare the two.

Only the argmax of the K Gaussians is used, so it is sampled exactly without drawing all K of them: a
leader L (largest mean) and a cut c are chosen from the state (``prepare_flags``), and each arm gets a
"flag" event of known probability q_j (a standard-normal tail beyond a tabulated point) such that, with no
flag, θ_j <= c <= θ_L for every j. One uniform v decides "no flag" (probability p0 = Π(1 − q_j); then L is
pulled and v/p0 is a fresh uniform, used for the reward); otherwise ``flagged_argmax`` draws the flags given
that one is raised and the needed θ's from the matching truncated normals. The law of the pulled arm is
that of K plain draws (tested against quadrature); when p0 < ``LAZY_MIN_P0`` the K plain draws are used.
This holds for any per-arm (mean, sd) pair, so it does not depend on the form of the posterior.
Flag points are refreshed only for the pulled arm; leader and cut are re-chosen when p0 drops.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param, Privacy
from banditrepro.algorithms.ties import argmax_random_ties
from banditrepro.recorder import new_recorder, record

QSTEP = 16.0  # flag points g = k/16
QMAX = 592  # g <= 37: Φc(37) ~ 6e-301 is still a normal double
LAZY_MIN_P0 = 0.7  # below this "no flag" probability the plain K-draw path is cheaper
REPREPARE_P0 = 0.99  # re-choose leader and cut when the no-flag probability falls below this ...
REPREPARE_EVERY = 16  # ... at most once per this many rounds


@njit(cache=True, nogil=True)
def normal_tail_table():
    """q[k] = Pr(Z > k/16) for a standard normal Z, k = 0..QMAX."""
    q = np.empty(QMAX + 1)
    for k in range(QMAX + 1):
        q[k] = 0.5 * math.erfc(k / QSTEP / math.sqrt(2.0))
    return q


@njit(cache=True, nogil=True)
def normal_below(g, rng):
    """Z ~ N(0,1) conditioned on Z <= g (g >= 0: acceptance >= 1/2)."""
    while True:
        z = rng.standard_normal()
        if z <= g:
            return z


@njit(cache=True, nogil=True)
def normal_above(g, rng):
    """Z ~ N(0,1) conditioned on Z > g (g >= 0): plain rejection near 0, Marsaglia's tail method beyond."""
    if g < 0.75:
        while True:
            z = rng.standard_normal()
            if z > g:
                return z
    while True:
        u1 = rng.random()
        u2 = rng.random()
        if u1 <= 0.0:
            continue
        x = math.sqrt(g * g - 2.0 * math.log(u1))
        if u2 * x < g:
            return x


@njit(cache=True, nogil=True, inline="always")
def flag_prob(qtab, k):
    """Probability of a flag with table index k (-1: flagged with probability 1)."""
    return 1.0 if k < 0 else qtab[k]


@njit(cache=True, nogil=True, inline="always")
def flag_index(d, inv16s_j):
    """Table index of the largest flag point g <= d / s_j (d >= 0), or -1 when d < 0."""
    if d < 0.0:
        return -1
    return min(int(d * inv16s_j), QMAX)


@njit(cache=True, nogil=True)
def prepare_flags(m, s, inv16s, qtab, idx, cache):
    """Choose the leader L (largest mean) and the cut c (the highest pairwise balance point
    m_L − z s_L = m_j + z s_j), and give every arm its flag point relative to c:
    leader flag θ_L < m_L − s_L g_L (>= c), other flags θ_j > m_j + s_j g_j (<= c).
    cache = [c, L, Π_{j≠L} (1 − q_j)]. Any state-determined choice keeps the sampler exact."""
    K = m.shape[0]
    L = 0
    for j in range(1, K):
        if m[j] > m[L]:
            L = j
    ab = -math.inf  # max_j a_j / b_j by cross-multiplication, one division
    bb = 1.0
    for j in range(K):
        if j != L:
            a = m[L] * s[j] + m[j] * s[L]
            b = s[L] + s[j]
            if a * bb > ab * b:
                ab = a
                bb = b
    c = ab / bb
    idx[L] = flag_index(m[L] - c, inv16s[L])
    qo = 1.0
    for j in range(K):
        if j != L:
            idx[j] = flag_index(c - m[j], inv16s[j])
            qo *= 1.0 - flag_prob(qtab, idx[j])
    cache[0] = c
    cache[1] = L
    cache[2] = qo


@njit(cache=True, nogil=True)
def refresh_others(i, m, inv16s, qtab, idx, cache):
    """A non-leader arm i changed: recompute its flag point against the same cut and Π_{j≠L} (1 − q_j)."""
    L = int(cache[1])
    idx[i] = flag_index(cache[0] - m[i], inv16s[i])
    qo = 1.0
    for j in range(m.shape[0]):
        if j != L:
            qo *= 1.0 - flag_prob(qtab, idx[j])
    cache[2] = qo


@njit(cache=True, nogil=True)
def flagged_argmax(m, s, rng, qtab, idx, L, work, theta):
    """The argmax given that at least one flag is raised (probability 1 − p0)."""
    K = m.shape[0]
    # Flags drawn in order given "some flag among j..K-1": Pr(flag_j) = q_j / (1 − Π_{l>=j} (1 − q_l)).
    acc = 1.0
    for j in range(K - 1, -1, -1):
        acc *= 1.0 - flag_prob(qtab, idx[j])
        work[j] = 1.0 - acc
    need = True
    lead_flag = False
    for j in range(K):
        q = flag_prob(qtab, idx[j])
        if need:
            f = work[j] <= 0.0 or rng.random() * work[j] < q
            if f:
                need = False
        else:
            f = rng.random() < q
        if j == L:
            lead_flag = f
        work[j] = 1.0 if f else 0.0  # work[j] is consumed: reuse it for the flag
    # Values from each arm's region. With the leader unflagged, unflagged others lie below c <= θ_L.
    for j in range(K):
        f = work[j] == 1.0
        if j == L:
            g = idx[L] / QSTEP
            theta[j] = m[L] - s[L] * (normal_above(g, rng) if f else normal_below(g, rng))
        elif idx[j] < 0:
            theta[j] = m[j] + s[j] * rng.standard_normal()
        elif f:
            theta[j] = m[j] + s[j] * normal_above(idx[j] / QSTEP, rng)
        elif lead_flag:
            theta[j] = m[j] + s[j] * normal_below(idx[j] / QSTEP, rng)
        else:
            theta[j] = -math.inf
    return argmax_random_ties(theta, rng)


@njit(cache=True, nogil=True)
def m_ts_gaussian_core(mu, T, tab, grid, rng, b, c, min_p0, pulls, ledger):
    """The kernel; ``min_p0`` as in ``LAZY_MIN_P0`` (0: always lazy, > 1: always K plain draws), ``pulls``
    (length T or 0) receives the arm of every round and ``ledger`` (length K or 0) accumulates, per arm, the
    squared GDP parameter (Δ/σ)² of every draw that sees at least one of its rewards. The per-round path
    is written out here rather than in helpers: numba calls with array arguments cost more than the whole
    lazy step."""
    K = mu.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    trace = pulls.shape[0] > 0
    audit = ledger.shape[0] > 0
    S = np.zeros(K)
    k = np.zeros(K)
    # Pre-pulls (Ou et al.): b round-robin rounds over all arms (b = 0: none), truncated at T. Their choice
    # does not depend on the data, so they cost no privacy.
    t = 0
    for _ in range(b):
        if t >= T:
            break
        for i in range(K):
            if t >= T:
                break
            record(tab, grid, cum, out, pos, i, i, 1)
            if trace:
                pulls[t] = i
            if rng.random() < mu[i]:
                S[i] += 1.0
            k[i] += 1.0
            t += 1
    if t >= T:  # the horizon ended inside the pre-pulls
        return out, 0, pos[0]
    # Posterior N(S_i/(k_i+1), c/(k_i+1)) of every arm (Agrawal & Goyal Alg. 2 with variance scale c,
    # Ou et al.): w_i = 1/(k_i+1) is both the weight of S_i in the mean (the sensitivity Δ) and σ²/c.
    w = 1.0 / (k + 1.0)
    m = S * w
    s = np.sqrt(c * w)
    inv16s = QSTEP / s
    q16c = QSTEP / c
    qtab = normal_tail_table()
    idx = np.empty(K, np.int64)
    cache = np.empty(3)
    work = np.empty(K)
    theta = np.empty(K)
    prepare_flags(m, s, inv16s, qtab, idx, cache)
    since = 0
    while t < T:
        if audit:  # every arm draws once this round (the lazy path samples the same law)
            for j in range(K):
                if k[j] >= 1.0:
                    ledger[j] += (w[j] / s[j]) ** 2
        L = int(cache[1])
        kl = idx[L]
        p0 = cache[2] * (1.0 - (1.0 if kl < 0 else qtab[kl]))
        # Re-choose leader and cut when flags became likely (at most every REPREPARE_EVERY rounds).
        if since >= REPREPARE_EVERY and p0 < REPREPARE_P0:
            prepare_flags(m, s, inv16s, qtab, idx, cache)
            since = 0
            L = int(cache[1])
            kl = idx[L]
            p0 = cache[2] * (1.0 - (1.0 if kl < 0 else qtab[kl]))
        # Sample θ_j ~ N(S_j/(k_j+1), c/(k_j+1)) for every arm and pull the argmax, exactly:
        # no flag (probability p0) means θ_L is the largest; v/p0 is then a fresh uniform for the reward.
        u = -1.0
        if p0 < min_p0:
            # Plain path: all K draws, ties (probability 0) uniformly at random.
            i = 0
            best = -math.inf
            ties = 0
            for j in range(K):
                th = m[j] + s[j] * rng.standard_normal()
                if th > best:
                    best = th
                    i = j
                    ties = 1
                elif th == best:
                    ties += 1
                    if rng.integers(0, ties) == 0:
                        i = j
        else:
            v = rng.random()
            if v < p0:
                i = L
                u = v / p0
            else:
                i = flagged_argmax(m, s, rng, qtab, idx, L, work, theta)
        record(tab, grid, cum, out, pos, i, i, 1)
        if trace:
            pulls[t] = i
        if u < 0.0:
            u = rng.random()
        if u < mu[i]:
            S[i] += 1.0
        k[i] += 1.0
        w[i] = 1.0 / (k[i] + 1.0)
        m[i] = S[i] * w[i]
        s[i] = math.sqrt(c * w[i])
        inv16s[i] = s[i] * (k[i] + 1.0) * q16c  # 16/s = 16 s (k+1)/c
        # The pulled arm's flag point against the same cut.
        if i == L:
            d = m[L] - cache[0]
            idx[L] = -1 if d < 0.0 else min(int(d * inv16s[L]), QMAX)
        else:
            refresh_others(i, m, inv16s, qtab, idx, cache)
        since += 1
        t += 1
    return out, 0, pos[0]


@njit(cache=True, nogil=True)
def m_ts_gaussian_kernel(mu, T, tab, grid, rng, b, c):
    return m_ts_gaussian_core(mu, T, tab, grid, rng, b, c, LAZY_MIN_P0, np.empty(0, np.int64), np.empty(0))


def run_ts(instance, T, tab, grid, rng):
    return m_ts_gaussian_kernel(instance.means, T, tab, grid, rng, 0, 1.0)


def run_mts(instance, T, tab, grid, rng, *, b, c):
    return m_ts_gaussian_kernel(instance.means, T, tab, grid, rng, b, c)


def _eta_ts(params: dict, T: int) -> float:
    """TS-Gaussian (Ou et al. 2024, quoted in §2 of the DP-TS-UCB paper)."""
    from banditrepro.algorithms.gdp import eta_ts_gaussian

    return eta_ts_gaussian(T)


def _eta_mts(params: dict, T: int) -> float:
    """M-TS-Gaussian with b pre-pulls and variance scale c (Ou et al. 2024)."""
    from banditrepro.algorithms.gdp import eta_m_ts_gaussian

    return eta_m_ts_gaussian(T, int(params.get("b", 0)), float(params.get("c", 1.0)))


SPECS = {
    "ts-gaussian": AlgorithmSpec(
        name="ts-gaussian",
        ns_per_step=36,
        colour="#c7c7c7",
        privacy=Privacy("gdp", _eta_ts, "η-GDP, η = √(0.5 T) (Ou et al. 2024, paper §2)"),
        label="TS-Gaussian",
        problem="mab",
        citation="Agrawal & Goyal, Near-optimal regret bounds for Thompson sampling, JACM 2017 (Alg. 2)",
        run=run_ts,
    ),
    "m-ts-gaussian": AlgorithmSpec(
        name="m-ts-gaussian",
        ns_per_step=37,
        colour="#1f77b4",
        privacy=Privacy("gdp", _eta_mts, "η-GDP, η = √(T/(c(b+1))) (Ou et al. 2024)"),
        label="M-TS-Gaussian",
        problem="mab",
        citation="Ou, Avella Medina, Cummings, Thompson sampling itself is differentially private, 2024",
        run=run_mts,
        params=(
            Param("b", "int", 0, "pre-pulls per arm (round-robin) before sampling starts (b = 0: none)",
                  low=0),
            Param("c", "float", 1.0, "variance scale: θ_i ~ N(S_i/(k_i+1), c/(k_i+1)) after k_i pulls", low=0.0,
                  low_open=True),
        ),
    ),
}
