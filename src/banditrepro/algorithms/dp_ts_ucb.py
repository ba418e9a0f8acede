"""DP-TS-UCB (Hu, Huang, Zhang, Lécuyer, Hegde, ICML 2025, Algorithm 1).

Binding decisions (SPEC): φ = c0 T^{0.5(1−α)} ln^{0.5(3−α)} T is real-valued and a fresh Gaussian is drawn
while h ≥ 1, i.e. ⌊φ⌋ fresh samples per epoch (kept as an integer budget); MAX starts at 0 and is reset to 0
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

from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.recorder import new_recorder, record

C0 = math.sqrt(2.0 * math.pi * math.e)  # c0 = √(2πe), Sec. 4.1


@njit(cache=True)
def sample_budget(alpha, T):
    """Alg. 1 line 1: ⌊φ⌋, the number of fresh samples drawn per Gaussian (h ≥ 1 test with real φ)."""
    lnT = math.log(T) if T > 1 else 0.0
    phi = C0 * float(T) ** (0.5 * (1.0 - alpha)) * lnT ** (0.5 * (3.0 - alpha))
    return int(math.floor(phi))


@njit(cache=True)
def draw_theta(j, mu_hat, sd, budget, MAX, rng):
    """Alg. 1 lines 5-11 for arm j: a fresh N(μ̂_j, ln^α T / n_j) sample while budget remains (Phase I,
    MAX_j tracks the best one), else the stored MAX_j (Phase II)."""
    if budget[j] > 0:
        th = mu_hat[j] + sd[j] * rng.standard_normal()
        budget[j] -= 1
        if th > MAX[j]:
            MAX[j] = th
        return th
    return MAX[j]


@njit(cache=True)
def observe(j, n, x, O, r, esum, nobs, mu_hat, sd, budget, MAX, var_scale, H):
    """Alg. 1 lines 14-19 for n plays of arm j with reward sum x (n must not cross the epoch end).

    Returns True when the epoch closes: μ̂_j becomes the mean of its 2^r fresh observations, the Gaussian
    is N(μ̂_j, ln^α T / 2^r), the budget is refilled to ⌊φ⌋ and MAX_j reset to 0."""
    O[j] += n
    esum[j] += x
    if O[j] == (1 << r[j]):
        nobs[j] = O[j]
        mu_hat[j] = esum[j] / O[j]
        sd[j] = math.sqrt(var_scale / O[j])
        budget[j] = H
        MAX[j] = 0.0
        r[j] += 1
        O[j] = 0
        esum[j] = 0.0
        return True
    return False


@njit(cache=True)
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
                x = float(rng.binomial(n, mu[i]))
                npull[i] += n
                if observe(i, n, x, O, r, esum, nobs, mu_hat, sd, budget, MAX, var_scale, H):
                    nepoch[i] += 1
                    if H > 0:
                        n1 += 1
                t += n
                continue
        # Alg. 1 lines 4-12: θ_i(t) for every arm.
        for j in range(K):
            if budget[j] > 0:
                ndraw[j] += 1
                theta[j] = draw_theta(j, mu_hat, sd, budget, MAX, rng)
                if budget[j] == 0:
                    n1 -= 1
            else:
                theta[j] = MAX[j]
        # Line 13: pull argmax θ_i(t), ties uniformly at random.
        i = 0
        best = theta[0]
        ties = 1
        for j in range(1, K):
            v = theta[j]
            if v > best:
                best = v
                i = j
                ties = 1
            elif v == best:
                ties += 1
                if rng.integers(0, ties) == 0:
                    i = j
        record(tab, grid, cum, out, pos, i, i, 1)
        if trace:
            pulls[t] = i
        x = 1.0 if rng.random() < mu[i] else 0.0
        npull[i] += 1
        was_phase2 = budget[i] == 0
        if observe(i, 1, x, O, r, esum, nobs, mu_hat, sd, budget, MAX, var_scale, H):
            nepoch[i] += 1
            if was_phase2 and H > 0:
                n1 += 1
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


@njit(cache=True)
def dp_ts_ucb_kernel(mu, T, tab, grid, rng, alpha):
    return dp_ts_ucb_core(mu, T, tab, grid, rng, alpha, True, np.empty(0, np.int64), np.empty((0, 6), np.int64))


def run(instance, T, tab, grid, rng, *, alpha):
    return dp_ts_ucb_kernel(instance.means, T, tab, grid, rng, alpha)


SPECS = {
    "dp-ts-ucb": AlgorithmSpec(
        name="dp-ts-ucb",
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
