"""Literal plain-Python M-TS-Gaussian (Ou, Avella Medina, Cummings 2024; TS-Gaussian of Agrawal & Goyal 2017,
Alg. 2), written step by step from the DP-TS-UCB paper (§2, Table 1, App. E.1) and docs/decisions.md#m-ts-gaussian
Slow on purpose: no lazy sampler, no numba, K explicit Gaussian draws per round. Used only by the agreement test.
"""

from __future__ import annotations

import numpy as np


def m_ts_gaussian_regret(means, T: int, b: int, c: float, rng: np.random.Generator) -> float:
    """Pseudo-regret Σ_t (μ* − μ_{i_t}) of one run of M-TS-Gaussian(b, c) on Bernoulli arms ``means``."""
    mu = [float(m) for m in means]
    K = len(mu)
    best = max(mu)
    k = [0] * K  # k_i: number of pulls of arm i
    S = [0.0] * K  # S_i: sum of arm i's rewards
    regret = 0.0
    t = 0

    def pull(i: int) -> None:
        nonlocal regret, t
        reward = 1.0 if rng.random() < mu[i] else 0.0  # Bernoulli(μ_i)
        S[i] += reward
        k[i] += 1
        regret += best - mu[i]
        t += 1

    # Step 1 (Ou et al.): pre-pull every arm b times, round-robin (b = 0: no pre-pull).
    for _ in range(b):
        for i in range(K):
            if t < T:
                pull(i)
    # Step 2, every remaining round: for every arm draw θ_i ~ N(S_i/(k_i+1), c/(k_i+1)) (Agrawal–Goyal's
    # posterior with the variance scaled by c), then pull an arm with the largest θ (ties at random).
    while t < T:
        theta = [rng.normal(S[i] / (k[i] + 1), (c / (k[i] + 1)) ** 0.5) for i in range(K)]
        top = max(theta)
        winners = [i for i in range(K) if theta[i] == top]
        pull(winners[0] if len(winners) == 1 else winners[int(rng.integers(len(winners)))])
    return regret
