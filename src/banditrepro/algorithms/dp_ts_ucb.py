"""DP-TS-UCB (Hu, Huang, Zhang, Lécuyer, Hegde, ICML 2025, Algorithm 1).

Decisions (docs/decisions.md#dp-ts-ucb-phi): φ = c0 T^{0.5(1−α)} ln^{0.5(3−α)} T is real-valued and a fresh Gaussian
is drawn while h ≥ 1, i.e. ⌊φ⌋ fresh samples per epoch (kept as an integer budget); MAX starts at 0 and is reset to 0
at every epoch end, as written; argmax ties are broken uniformly at random. Epochs hold 1 (the initial
pull), 2, 4, … fresh observations and μ̂_i is the mean of the last completed epoch only.

Speed: an arm in Phase II has a constant θ_i = MAX_i, so only Phase-I arms draw. When every arm is in
Phase II and the maximum is unique, nothing can change until the pulled arm's epoch ends, so the whole
remainder of that epoch is one ``record`` call and one Binomial draw for its reward sum (the same law as the
per-round Bernoulli draws).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param, Privacy
from banditrepro.algorithms.ties import argmax_random_ties
from banditrepro.recorder import new_recorder, record

C0 = math.sqrt(2.0 * math.pi * math.e)  # c0 = √(2πe), Sec. 4.1


@njit(cache=True, nogil=True)
def sample_budget(alpha, T):
    """Alg. 1 line 1: ⌊φ⌋, the number of fresh samples drawn per Gaussian (h ≥ 1 test with real φ)."""
    lnT = math.log(T) if T > 1 else 0.0
    phi = C0 * float(T) ** (0.5 * (1.0 - alpha)) * lnT ** (0.5 * (3.0 - alpha))
    return math.floor(phi)


@njit(cache=True, nogil=True, inline="always")
def phase_step(mu_hat, sd, budget, mx, rng):
    """Alg. 1 lines 5-11 for one arm: while budget h >= 1 remains (Phase I) draw a fresh
    θ ~ N(μ̂, sd²), sd² = ln^α T / n, spend one unit and keep MAX = max(MAX, θ); otherwise (Phase II) reuse
    θ = MAX. Returns (θ, new budget, new MAX). Scalars only, so numba inlines it for free."""
    if budget > 0:
        th = mu_hat + sd * rng.standard_normal()
        return th, budget - 1, max(mx, th)
    return mx, budget, mx


@njit(cache=True, nogil=True)
def close_epoch(j, O, r, esum, nobs, mu_hat, sd, budget, MAX, var_scale, H):
    """Alg. 1 lines 15-19, once O_j = 2^{r_j}: μ̂_j becomes the mean of this epoch's 2^r fresh observations,
    the Gaussian is N(μ̂_j, ln^α T / 2^r), the budget is refilled to ⌊φ⌋, MAX_j reset to 0, r_j += 1."""
    nobs[j] = O[j]
    mu_hat[j] = esum[j] / O[j]
    sd[j] = math.sqrt(var_scale / O[j])
    budget[j] = H
    MAX[j] = 0.0
    r[j] += 1
    O[j] = 0
    esum[j] = 0.0


@njit(cache=True, nogil=True)
def dp_ts_ucb_core(mu, T, tab, grid, rng, alpha, batch, pulls, state):
    """The kernel; ``batch`` enables the all-Phase-II shortcut, ``pulls`` (length T or 0) receives the arm
    of every round and ``state`` (K x 6 or 0 rows) the final r, O, n, pulls, fresh draws and epochs."""
    K = mu.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    lnT = math.log(T) if T > 1 else 0.0
    var_scale = lnT**alpha  # Gaussian variance ln^α(T) / n
    H = sample_budget(alpha, T)
    trace = pulls.shape[0] > 0
    mu_hat = np.zeros(K)
    sd = np.zeros(K)
    budget = np.zeros(K, np.int64)
    MAX = np.zeros(K)
    r = np.ones(K, np.int64)
    O = np.zeros(K, np.int64)
    esum = np.zeros(K)
    nobs = np.zeros(K, np.int64)
    npull = np.zeros(K, np.int64)
    ndraw = np.zeros(K, np.int64)
    nepoch = np.zeros(K, np.int64)
    theta = np.zeros(K)
    # Alg. 1 line 2: pull every arm once; r_i = 1, O_i = 0, h_i = φ, MAX_i = 0.
    t = 0
    for i in range(K):
        if t >= T:
            break
        record(tab, grid, cum, out, pos, i, i, 1)
        if trace:
            pulls[t] = i
        mu_hat[i] = 1.0 if rng.random() < mu[i] else 0.0
        nobs[i] = 1
        npull[i] = 1
        nepoch[i] = 1
        sd[i] = math.sqrt(var_scale)
        budget[i] = H
        t += 1
    n1 = K if H > 0 else 0  # arms in Phase I
    while t < T:
        if batch and n1 == 0:
            # Every θ_i = MAX_i is constant: with a unique maximum the same arm is pulled until its epoch ends.
            i = 0
            ties = 1
            for j in range(1, K):
                if MAX[j] > MAX[i]:
                    i = j
                    ties = 1
                elif MAX[j] == MAX[i]:
                    ties += 1
            if ties == 1:
                n = min((1 << r[i]) - O[i], T - t)
                record(tab, grid, cum, out, pos, i, i, n)
                if trace:
                    pulls[t:t + n] = i
                npull[i] += n
                # Lines 14-19 for the n plays at once (the reward sum is Binomial(n, μ_i)).
                O[i] += n
                esum[i] += float(rng.binomial(n, mu[i]))
                if O[i] == (1 << r[i]):
                    close_epoch(i, O, r, esum, nobs, mu_hat, sd, budget, MAX, var_scale, H)
                    nepoch[i] += 1
                    if H > 0:
                        n1 += 1
                t += n
                continue
        # Alg. 1 lines 4-12: θ_i(t) for every arm.
        for j in range(K):
            if budget[j] > 0:
                ndraw[j] += 1
                theta[j], budget[j], MAX[j] = phase_step(mu_hat[j], sd[j], budget[j], MAX[j], rng)
                if budget[j] == 0:
                    n1 -= 1
            else:
                theta[j] = MAX[j]
        # Line 13: pull argmax θ_i(t), ties uniformly at random.
        i = argmax_random_ties(theta, rng)
        record(tab, grid, cum, out, pos, i, i, 1)
        if trace:
            pulls[t] = i
        npull[i] += 1
        # Lines 14-19: count the observation; close the epoch at O_i = 2^{r_i}.
        O[i] += 1
        if rng.random() < mu[i]:
            esum[i] += 1.0
        if O[i] == (1 << r[i]):
            if budget[i] == 0 and H > 0:
                n1 += 1  # back to Phase I
            close_epoch(i, O, r, esum, nobs, mu_hat, sd, budget, MAX, var_scale, H)
            nepoch[i] += 1
        t += 1
    if state.shape[0] > 0:
        for j in range(K):
            state[j, 0] = r[j]
            state[j, 1] = O[j]
            state[j, 2] = nobs[j]
            state[j, 3] = npull[j]
            state[j, 4] = ndraw[j]
            state[j, 5] = nepoch[j]
    return out, 0, pos[0]


@njit(cache=True, nogil=True)
def dp_ts_ucb_kernel(mu, T, tab, grid, rng, alpha):
    return dp_ts_ucb_core(mu, T, tab, grid, rng, alpha, True, np.empty(0, np.int64), np.empty((0, 6), np.int64))


def run(instance, T, tab, grid, rng, *, alpha):
    return dp_ts_ucb_kernel(instance.means, T, tab, grid, rng, alpha)


def _eta(params: dict, T: int) -> float:
    """Theorem 4.4 of Hu et al. (2025); the formula lives with the paper's other privacy accounting."""
    from banditrepro.algorithms.gdp import eta_dp_ts_ucb

    return eta_dp_ts_ucb(params["alpha"], T)


SPECS = {
    "dp-ts-ucb": AlgorithmSpec(
        name="dp-ts-ucb",
        ns_per_step=5,
        colour="#d62728",
        privacy=Privacy("gdp", _eta, "η-GDP, η = √(2 c0 T^(0.5(1−α)) ln^(1.5(1−α)) T) (Thm 4.4)"),
        label="DP-TS-UCB",
        problem="mab",
        citation="Hu, Huang, Zhang, Lécuyer, Hegde, Connecting Thompson sampling and UCB: towards more "
                 "efficient trade-offs between privacy and regret, ICML 2025 (Alg. 1)",
        run=run,
        params=(Param("alpha", "float", 0.0,
                      "privacy/regret trade-off α in [0, 1] (the paper has no default; 0 = least private, "
                      "lowest regret; figures set it explicitly)", low=0.0, high=1.0),),
    )
}
