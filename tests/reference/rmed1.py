"""RMED1, literally: Komiyama, Honda, Kashima, Nakagawa, "Regret Lower Bound and Optimal Algorithm in
Dueling Bandit Problem" (COLT 2015), Algorithm 1 (main loop) with Algorithm 2 (RMED1's choice of m(t)),
read with docs/decisions.md#c2b-baselines: n_0 = 1 (every pair once, in lexicographic order), f(K) = 0.3·K^1.01 (C2B
§4), L_C's "arbitrary fixed order" = index order, î* ties to the lowest index and the argmin of Algorithm 2's
else-branch to the last index (the library's rules, as the cells use), and m(t) = î*(t) when O_l(t) = ∅.
O_l(t) = {j ≠ l : μ̂_lj ≤ 1/2}; the library's 0.50001 only differs once some N_lj ≥ 5·10^4.
"""

from __future__ import annotations

import math

from tests.reference.regret import DuelRegret


def kl_half(p: float) -> float:
    """d(p, 1/2), the Bernoulli KL divergence, with 0 log 0 = 0."""
    d = 0.0
    if p > 0.0:
        d += p * math.log(2.0 * p)
    if p < 1.0:
        d += (1.0 - p) * math.log(2.0 * (1.0 - p))
    return d


def rmed1(P, T: int, rng, kweight: float = 0.3, marks=()):
    K = len(P)
    fK = kweight * K**1.01
    meter = DuelRegret(P, marks)
    W = [[0] * K for _ in range(K)]
    N = [[0] * K for _ in range(K)]

    def mu(i, j):  # μ̂_ij(t) (1/2 while the pair was never drawn)
        return W[i][j] / N[i][j] if N[i][j] else 0.5

    def divergence(i):  # I_i(t) = Σ_{j : μ̂_ij < 1/2} N_ij d(μ̂_ij, 1/2)
        return sum(N[i][j] * kl_half(mu(i, j)) for j in range(K) if j != i and mu(i, j) < 0.5)

    def duel(a, b):
        meter.add(a, b)
        if a != b:
            if rng.random() < P[a][b]:
                W[a][b] += 1
            else:
                W[b][a] += 1
            N[a][b] += 1
            N[b][a] += 1

    # Alg. 1, initial phase: draw each pair n_0 = 1 times
    for a in range(K):
        for b in range(a + 1, K):
            if meter.t < T:
                duel(a, b)
    # Alg. 1: L_C <- K, L_R <- K, L_N <- ∅
    LC, LR, LN = list(range(K)), set(range(K)), set()
    while meter.t < T:
        for l in LC:  # "for l(t) ∈ L_C in an arbitrary fixed order"
            if meter.t >= T:
                break
            t = meter.t + 1
            Is = [divergence(i) for i in range(K)]
            istar = min(range(K), key=lambda i: (Is[i], i))  # î*(t) = argmin_i I_i(t)
            # Alg. 2 (RMED1): O_l = {j ≠ l : μ̂_lj ≤ 1/2}; m = î* if î* ∈ O_l, else argmin_{j ∈ O_l} μ̂_lj
            O = [j for j in range(K) if j != l and mu(l, j) <= 0.5]
            if istar in O:
                m = istar
            elif O:
                m = min(O, key=lambda j: (mu(l, j), -j))
            else:
                m = istar
            duel(l, m)  # draw (l(t), m(t)) and update the statistics
            LR.discard(l)  # L_R <- L_R \ {l(t)}
            # L_N <- L_N ∪ {j ∉ L_R : I_j(t) − I_î*(t) ≤ log t + f(K)}, with the statistics after the draw
            Is = [divergence(i) for i in range(K)]
            base = min(Is)
            for j in range(K):
                if j not in LR and Is[j] - base <= math.log(t) + fK:
                    LN.add(j)
        # end of the loop: L_C, L_R <- L_N (in index order), L_N <- ∅
        LC, LR, LN = sorted(LN), set(LN), set()
    return meter
