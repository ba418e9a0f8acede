"""DP-TS-UCB, literally: Hu, Huang, Zhang, Lécuyer, Hegde (ICML 2025), Algorithm 1, with the decisions of
docs/decisions.md#dp-ts-ucb-phi: φ = c0·T^{0.5(1−α)}·ln^{0.5(3−α)}(T) stays real-valued (line 5 tests h_i ≥ 1, so ⌊φ⌋
fresh draws per Gaussian), MAX_i starts at 0 and is reset to 0 (lines 2, 17) as written, ties in line 13 uniformly at
random. Rewards are Bernoulli(μ_i); c0 = √(2πe) (§4.1).
"""

from __future__ import annotations

import math

from tests.reference.regret import PseudoRegret

C0 = math.sqrt(2.0 * math.pi * math.e)


def dp_ts_ucb(means, T: int, rng, alpha: float = 0.0, marks=()):
    K = len(means)
    meter = PseudoRegret(means, marks)
    phi = C0 * T ** (0.5 * (1.0 - alpha)) * math.log(T) ** (0.5 * (3.0 - alpha))  # line 1
    var = math.log(T) ** alpha  # the Gaussian's variance is ln^α(T) / n_i

    def pull(i):
        meter.add(i)
        return 1.0 if rng.random() < means[i] else 0.0

    # line 2: pull every arm once: n_i = 1, μ̂_i = X_i; r_i = 1, O_i = 0; h_i = φ, MAX_i = 0
    mu_hat, n = [0.0] * K, [1] * K
    for i in range(K):
        if meter.t < T:
            mu_hat[i] = pull(i)
    r, O, fresh = [1] * K, [0] * K, [[] for _ in range(K)]
    h, MAX = [phi] * K, [0.0] * K
    theta = [0.0] * K
    while meter.t < T:  # line 3: t = K+1, ..., T
        z = rng.standard_normal(K)
        for i in range(K):  # line 4
            if h[i] >= 1:  # line 5
                draw = mu_hat[i] + math.sqrt(var / n[i]) * z[i]  # line 6: N(μ̂_i, ln^α(T)/n_i)
                theta[i] = draw  # line 7: Phase I
                h[i] -= 1  # line 8
                MAX[i] = max(MAX[i], draw)
            else:
                theta[i] = MAX[i]  # line 10: Phase II
        top = max(theta)  # line 13: i_t ∈ argmax θ_i(t), ties uniformly at random
        tied = [i for i in range(K) if theta[i] == top]
        it = tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]
        fresh[it].append(pull(it))
        O[it] += 1  # line 14
        if O[it] == 2 ** r[it]:  # line 15
            n[it] = 2 ** r[it]  # line 16: μ̂ from the 2^r observations of this epoch only
            mu_hat[it] = sum(fresh[it]) / n[it]
            h[it], MAX[it] = phi, 0.0  # line 17
            r[it] += 1  # line 18
            O[it], fresh[it] = 0, []
    return meter
