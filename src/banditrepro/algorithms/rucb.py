"""RUCB — Relative Upper Confidence Bound (Zoghi, Whiteson, Munos, de Rijke, ICML 2014).

Semantics of docs/decisions.md#c2b-baselines (Komiyama's ``policy_rucb_icml``), α = 0.51 as in the C2B experiments.
The O(K²) confidence matrix is never rebuilt: U_cj ≥ 1/2 holds iff ln t ≥ thr[c, j] with
thr = N (1/2 − p̂)² / α (0 when p̂ ≥ 1/2 or N = 0), and thr changes only for the dueled pair, so
the candidate set costs O(K) per step and an update O(K).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True, inline="always")
def _refresh_pair(W, N, alpha, thr, pT, isqT, a, b):
    n = N[a, b]
    for x, y in ((a, b), (b, a)):
        p = W[x, y] / n
        thr[x, y] = (0.5 - p) ** 2 * n / alpha if p < 0.5 else 0.0
        pT[y, x] = p  # transposed: row c holds p̂_{jc} over j, contiguous for the argmax over j
        isqT[y, x] = 1.0 / math.sqrt(n)


@njit(cache=True, nogil=True)
def row_max(thr, a):
    """max_j thr[a, j] (0 if all are 0): c is a candidate iff ln t >= this value."""
    m = 0.0
    for j in range(thr.shape[1]):
        if thr[a, j] > m:
            m = thr[a, j]
    return m


@njit(cache=True, nogil=True)
def choose_c(rowmax, lnt, hyp, cand, rng):
    """Steps 1-2: the candidate set C and the choice of c; returns (c, new hypothesis B or -1)."""
    K = rowmax.shape[0]
    # Step 1: C = {c : U_cj >= 1/2 for all j}
    nc = 0
    hyp_in_c = False
    for c in range(K):
        if rowmax[c] <= lnt:
            cand[nc] = c
            nc += 1
            if c == hyp:
                hyp_in_c = True
    # Step 2: if B is not in C, reset B; choose c
    if not hyp_in_c:
        hyp = -1
    if nc == 0:
        return rng.integers(0, K), hyp
    if nc == 1:
        return cand[0], cand[0]
    if hyp >= 0:
        if rng.random() < 0.5:
            return hyp, hyp
        # uniform over C \ B: the k-th candidate once the hypothesis is skipped
        k = rng.integers(0, nc - 1)
        idx = 0
        for m in range(nc):
            if cand[m] == hyp:
                continue
            if idx == k:
                return cand[m], hyp
            idx += 1
        return hyp, hyp  # unreachable: C \ B has nc - 1 >= 1 members
    return cand[rng.integers(0, nc)], hyp


@njit(cache=True, nogil=True)
def choose_d(pT, isqT, c, s, rng):
    """Step 3: d = argmax_j U_jc (j = c included with U_cc = 1/2), ties uniformly at random.

    U_jc = pT[c, j] + s·isqT[c, j] with s = sqrt(α ln t)."""
    best = -1.0
    d = c
    ties = 0
    for j in range(pT.shape[1]):
        u = pT[c, j] + s * isqT[c, j] if j != c else 0.5
        if u > best:
            best = u
            d = j
            ties = 1
        elif u == best:
            ties += 1
            if rng.integers(0, ties) == 0:
                d = j
    return d


@njit(cache=True, nogil=True)
def rucb_kernel(P, T, tab, grid, rng, alpha):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    W = np.zeros((K, K))
    N = np.zeros((K, K))
    thr = np.zeros((K, K))  # U_cj >= 1/2  <=>  ln t >= thr[c, j]
    rowmax = np.zeros(K)
    pT = np.full((K, K), 1.0)  # U = 1 while N = 0 (p̂ = 1, no bonus)
    isqT = np.zeros((K, K))
    for c in range(K):
        pT[c, c] = 0.5  # U_cc = 1/2
    cand = np.empty(K, np.int64)
    hyp = -1  # the set B of the paper: at most one hypothesised Condorcet winner
    for t in range(1, T + 1):
        lnt = math.log(t)
        # Steps 1-2: candidates C, hypothesis B, champion c
        c, hyp = choose_c(rowmax, lnt, hyp, cand, rng)
        # Step 3: the challenger d
        d = choose_d(pT, isqT, c, math.sqrt(alpha * lnt), rng)
        # Step 4: duel (c, d) and update the pair's statistics
        record(tab, grid, cum, out, pos, c, d, 1)
        if c != d:
            if rng.random() < P[c, d]:
                W[c, d] += 1.0
            else:
                W[d, c] += 1.0
            N[c, d] += 1.0
            N[d, c] += 1.0
            _refresh_pair(W, N, alpha, thr, pT, isqT, c, d)
            rowmax[c] = row_max(thr, c)
            rowmax[d] = row_max(thr, d)
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, alpha):
    return rucb_kernel(instance.P, T, tab, grid, rng, alpha)


SPECS = {
    "rucb": AlgorithmSpec(
        name="rucb",
        ns_per_step=133,
        colour="#1f77b4",
        label="RUCB",
        problem="duel",
        citation="Zoghi et al., Relative Upper Confidence Bound for the K-armed dueling bandit problem, ICML 2014",
        run=run,
        params=(Param("alpha", "float", 0.51, "exploration parameter α (> 1/2 in the analysis)", low=0.0,
                      low_open=True),),
    )
}
