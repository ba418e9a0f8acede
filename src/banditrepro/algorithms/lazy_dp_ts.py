"""Lazy-DP-TS (Hu & Hegde, UAI 2022), in the form of docs/decisions.md#lazy-dp-ts

Per-arm epochs of fresh observations of sizes 1 (the initial pull of every arm), 2, 4, …; older
observations are dropped. At the end of an epoch of O_j = 2^r observations the private mean is
μ̃_j = (Σ fresh + Lap(1/ε)) / O_j. Each round t every arm draws θ_j ~ Beta(μ_j O_j + 1, (1 − μ_j) O_j + 1) with
the optimistic μ_j = clip(μ̃_j + 3 ln t / (ε O_j), 0, 1), and the argmax is pulled (ties uniformly at random).
The initial pull of each arm is our reading of "epochs of sizes 1, 2, 4, …" (the epoch structure of
Hu et al. 2021, as in DP-TS-UCB). A clipped μ_j gives Beta(O+1, 1) or Beta(1, O+1), drawn in closed form.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param, Privacy
from banditrepro.algorithms.ties import argmax_random_ties
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True, inline="always")
def private_mean(esum, n, eps, rng):
    """Laplace mechanism on one epoch: μ̃ = (Σ of its n fresh rewards + Lap(1/ε)) / n."""
    return (esum + rng.laplace(0.0, 1.0 / eps)) / n


@njit(cache=True, nogil=True, inline="always")
def observe_lazy(i, mu, O, esum, r, mu_tilde, eps, rng):
    """Count one pull of arm i (Bernoulli μ_i reward); once O_i = 2^{r_i}, publish the private mean of the
    epoch into μ̃_i and drop its data. Returns the closed epoch's size, 0 while the epoch goes on."""
    O[i] += 1
    if rng.random() < mu[i]:
        esum[i] += 1.0
    if O[i] != (1 << r[i]):
        return 0
    n = O[i]
    mu_tilde[i] = private_mean(esum[i], n, eps, rng)
    r[i] += 1
    O[i] = 0
    esum[i] = 0.0
    return n


@njit(cache=True, nogil=True, inline="always")
def optimistic_beta(mu_tilde_j, n, lnt, eps, rng):
    """θ ~ Beta(μ n + 1, (1 − μ) n + 1) with μ = clip(μ̃ + 3 ln t / (ε n), 0, 1)."""
    m = mu_tilde_j + 3.0 * lnt / (eps * n)
    if m >= 1.0:  # Beta(n+1, 1): CDF x^{n+1}
        return math.exp(math.log(1.0 - rng.random()) / (n + 1.0))
    if m <= 0.0:  # Beta(1, n+1)
        return 1.0 - math.exp(math.log(1.0 - rng.random()) / (n + 1.0))
    return rng.beta(m * n + 1.0, (1.0 - m) * n + 1.0)


@njit(cache=True, nogil=True)
def lazy_dp_ts_kernel(mu, T, tab, grid, rng, eps):
    K = mu.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    mu_tilde = np.zeros(K)
    nobs = np.zeros(K, np.int64)
    r = np.zeros(K, np.int64)  # epoch r collects 2^r observations; r = 0 is the initial pull
    O = np.zeros(K, np.int64)
    esum = np.zeros(K)
    theta = np.zeros(K)
    t = 0
    # Initial epoch of size 1 (r = 0): one pull of every arm, published at once.
    for i in range(min(K, T)):
        record(tab, grid, cum, out, pos, i, i, 1)
        nobs[i] = observe_lazy(i, mu, O, esum, r, mu_tilde, eps, rng)
        t += 1
    while t < T:
        lnt = math.log(t + 1.0)  # round index t+1 (1-based)
        # Optimistic private Beta sample per arm.
        for j in range(K):
            theta[j] = optimistic_beta(mu_tilde[j], float(nobs[j]), lnt, eps, rng)
        # Pull the argmax (ties uniformly at random).
        i = argmax_random_ties(theta, rng)
        record(tab, grid, cum, out, pos, i, i, 1)
        n = observe_lazy(i, mu, O, esum, r, mu_tilde, eps, rng)
        if n:
            nobs[i] = n
        t += 1
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, epsilon):
    return lazy_dp_ts_kernel(instance.means, T, tab, grid, rng, epsilon)


def _epsilon(params: dict, T: int) -> float:
    """(ε, 0)-DP for every horizon: each reward enters one Laplace-noised statistic."""
    return float(params["epsilon"])


SPECS = {
    "lazy-dp-ts": AlgorithmSpec(
        name="lazy-dp-ts",
        ns_per_step=376,
        colour="#393b79",
        privacy=Privacy("pure", _epsilon, "(ε, 0)-DP, ε = {epsilon:g} (Laplace mechanism)"),
        label="Lazy-DP-TS",
        problem="mab",
        citation="Hu & Hegde, Near-optimal Thompson sampling-based algorithms for differentially private "
                 "stochastic bandits, UAI 2022",
        run=run,
        params=(Param("epsilon", "float", 0.5, "privacy parameter ε of the Laplace mechanism", low=0.0,
                      low_open=True),),
    )
}
