"""RUCB, literally: Zoghi, Whiteson, Munos, de Rijke, "Relative Upper Confidence Bound for the K-armed
Dueling Bandit Problem" (ICML 2014), Algorithm 1, with the semantics docs/decisions.md#c2b-baselines
binds (Komiyama's library, which the C2B paper ran): u_ij = 1 while N_ij = 0 (the paper writes x/0 := 1),
u_ii = 1/2, the challenger d ranges over all arms including c, and its ties are broken at random as the paper says.
α = 0.51 (C2B §4 and the manifests).
"""

from __future__ import annotations

import math

from tests.reference.regret import DuelRegret


def rucb(P, T: int, rng, alpha: float = 0.51, marks=()):
    K = len(P)
    meter = DuelRegret(P, marks)
    W = [[0] * K for _ in range(K)]  # line 1: W = [w_ij] <- 0, w_ij = # times a_i beat a_j
    B = set()  # line 2: B <- ∅ (the hypothesised Condorcet winner)
    for t in range(1, T + 1):  # line 3
        # lines 4-5: U = W/(W+Wᵀ) + sqrt(α ln t / (W+Wᵀ)), 1 where W+Wᵀ = 0; u_ii = 1/2
        U = [[0.0] * K for _ in range(K)]
        for i in range(K):
            for j in range(K):
                n = W[i][j] + W[j][i]
                if i == j:
                    U[i][j] = 0.5
                elif n == 0:
                    U[i][j] = 1.0
                else:
                    U[i][j] = W[i][j] / n + math.sqrt(alpha * math.log(t) / n)
        # line 6: C = {a_c | ∀j: u_cj ≥ 1/2}
        C = [c for c in range(K) if all(U[c][j] >= 0.5 for j in range(K))]
        # line 7: if C = ∅, pick c uniformly from {1, ..., K}
        if not C:
            c = int(rng.integers(K))
        # line 8: B <- B ∩ C
        B &= set(C)
        # line 9: |C| = 1 -> B <- C, c = its element
        if len(C) == 1:
            B = set(C)
            c = C[0]
        # lines 10-11: |C| > 1 -> p(a_c) = 1/2 if a_c ∈ B, 1 / (2^{|B|} |C \ B|) otherwise
        if len(C) > 1:
            rest = [x for x in C if x not in B]
            if B and rng.random() < 0.5:
                (c,) = B
            else:
                c = rest[int(rng.integers(len(rest)))]
        # line 13: d = argmax_j u_jc, ties broken randomly
        best = max(U[j][c] for j in range(K))
        tied = [j for j in range(K) if U[j][c] == best]
        d = tied[int(rng.integers(len(tied)))]
        # line 14: compare a_c and a_d, increment w_cd or w_dc
        meter.add(c, d)
        if c != d:
            if rng.random() < P[c][d]:
                W[c][d] += 1
            else:
                W[d][c] += 1
    return meter
