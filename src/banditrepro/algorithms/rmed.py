"""RMED1 / RMED2 — Relative Minimum Empirical Divergence (Komiyama, Honda, Kashima, Nakagawa, COLT 2015).

Semantics of docs/decisions.md#c2b-baselines (Komiyama's ``policy_rmed.hpp``, modes 1 and 2) with f(K) = kweight·K^1.01,
kweight = 0.3 as in the C2B experiments; RMED2 explores every pair with N_ij < α·log log t, α = 3.

Incremental state: the divergence I_i = Σ_{j: μ̂_ij<1/2} N_ij·KL(μ̂_ij, 1/2) changes only in the two
dueled arms' terms, so the per-pair terms C[i, j] are cached and only the rows of the two dueled arms are
re-summed (exactly, so ties in argmin I are not blurred by rounding drift). The lexicographic
exploration scan keeps a cursor that only moves forward while the required count stays the same
(counts only grow), so it is amortised O(1). Every step is O(K).

Loop sets as in the paper and docs/decisions.md#c2b-baselines, not as a literal port of the library: after the duel
(l, m) the arm l joins L_R^c (the library's ``LRc.insert(j)`` inserts m); L_C = [K] when the main phase starts
(the library starts from an empty L_C and also moves the sets during exploration steps, which here
leave them untouched). Kept from the library: log log t = log(log t + 0.01) (no log 0 at t = 1), the
0.50001 opponent tolerance, ties of î* to the lowest index and of the most-losing opponent to the last.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.recorder import new_recorder, record

OPP_TOL = 0.50001  # O_l = {j != l : μ̂_lj <= 0.50001} (library constant)


@njit(cache=True, nogil=True, inline="always")
def kl_half(p):
    """KL(p, 1/2) for p in [0, 1], with 0 log 0 = 0."""
    v = 0.0
    if p > 0.0:
        v += p * math.log(2.0 * p)
    if p < 1.0:
        v += (1.0 - p) * math.log(2.0 * (1.0 - p))
    return v


@njit(cache=True, nogil=True)
def update_pair(W, N, ph, kl, C, I, a, b, a_won):
    """Record one duel of (a, b), a != b, and refresh the cached statistics of that pair.

    ph[i, j] = μ̂_ij (1/2 while N_ij = 0), kl[i, j] = KL(μ̂_ij, 1/2) = kl[j, i],
    C[i, j] = N_ij·KL(μ̂_ij, 1/2) if μ̂_ij < 1/2 else 0, I[i] = Σ_j C[i, j].
    """
    if a_won:
        W[a, b] += 1.0
    else:
        W[b, a] += 1.0
    N[a, b] += 1.0
    N[b, a] += 1.0
    n = N[a, b]
    pab = W[a, b] / n
    pba = W[b, a] / n
    ph[a, b] = pab
    ph[b, a] = pba
    d = kl_half(pab)
    kl[a, b] = d
    kl[b, a] = d
    C[a, b] = n * d if pab < 0.5 else 0.0
    C[b, a] = n * d if pba < 0.5 else 0.0
    # Only rows a and b of I change: re-sum them exactly.
    K = I.shape[0]
    sa = 0.0
    sb = 0.0
    for j in range(K):
        sa += C[a, j]
        sb += C[b, j]
    I[a] = sa
    I[b] = sb


@njit(cache=True, nogil=True)
def argmin_first(x):
    """î* = argmin_i I_i (= argmax log-likelihood), ties to the lowest index (library)."""
    best = 0
    for i in range(1, x.shape[0]):
        if x[i] < x[best]:
            best = i
    return best


@njit(cache=True, nogil=True)
def next_deficient(N, pi, pj, cursor, level):
    """First pair (in lexicographic order, from ``cursor`` on) with N_ij < level; npairs if none.

    Pairs before ``cursor`` are known to have N_ij >= level (counts never decrease)."""
    npairs = pi.shape[0]
    while cursor < npairs and N[pi[cursor], pj[cursor]] >= level:
        cursor += 1
    return cursor


@njit(cache=True, nogil=True, inline="always")
def _in_opponents(ph, l, j):
    return j != l and ph[l, j] <= OPP_TOL


@njit(cache=True, nogil=True)
def most_losing(ph, l):
    """argmin_{j in O_l} μ̂_lj, ties to the last index (library ``<=``); -1 if O_l is empty."""
    m = -1
    worst = 1.0
    for j in range(ph.shape[0]):
        if j != l:
            p = ph[l, j]
            if p <= OPP_TOL and p <= worst:
                worst = p
                m = j
    return m


@njit(cache=True, nogil=True)
def rmed1_opponent(ph, l, istar):
    """RMED1 choice of m(t): î* if it is in O_l, else the arm of O_l beating l most, else î*."""
    if _in_opponents(ph, l, istar):
        return istar
    m = most_losing(ph, l)
    return m if m >= 0 else istar


@njit(cache=True, nogil=True)
def smallest_regret_arm(ph, kl, l, istar):
    """b*(l) = argmin_{j: μ̂_lj < 1/2} max(μ̂_{î*l} + μ̂_{î*j} − 1, 0.01) / KL(μ̂_lj, 1/2); î* if none."""
    best = istar
    smallest = 1e7
    for j in range(ph.shape[0]):
        p = ph[l, j]
        if p >= 0.5:
            continue
        v = max(ph[istar, l] + ph[istar, j] - 1.0, 0.01) / kl[l, j]
        if v < smallest:
            smallest = v
            best = j
    return best


@njit(cache=True, nogil=True)
def rmed2_opponent(ph, kl, N, l, istar, llt):
    """RMED2 choice of m(t) (library mode 2); ``llt`` = log log t."""
    bs = smallest_regret_arm(ph, kl, l, istar)
    istar_in = _in_opponents(ph, l, istar)
    # Compare with î* when (l, î*) has been drawn rarely relative to (l, b*).
    if istar_in and N[l, istar] <= N[l, bs] / llt:
        return istar
    if _in_opponents(ph, l, bs):
        return bs
    if istar_in:
        return istar
    m = most_losing(ph, l)
    return m if m >= 0 else istar


@njit(cache=True, nogil=True)
def first_member(S):
    for i in range(S.shape[0]):
        if S[i]:
            return i
    return -1


@njit(cache=True, nogil=True)
def advance_loop(I, istar, l, Lc, Lrc, Ln, nlc, thr):
    """Loop bookkeeping after the main-phase duel of l: returns the new |L_C|.

    l leaves L_C (joins L_R^c); every j in L_R^c with I_j − I_î* <= log t + f(K) joins L_N; when L_C
    is empty the next loop starts with L_C = L_N, L_R^c = its complement, L_N = ∅.
    """
    Lc[l] = False
    Lrc[l] = True
    nlc -= 1
    base = I[istar]
    K = I.shape[0]
    for j in range(K):
        if Lrc[j] and I[j] - base <= thr:
            Ln[j] = True
    if nlc == 0:
        for j in range(K):
            Lc[j] = Ln[j]
            Lrc[j] = not Ln[j]
            if Ln[j]:
                nlc += 1
            Ln[j] = False
    return nlc


@njit(cache=True, nogil=True)
def rmed_kernel(P, T, tab, grid, rng, mode, kweight, alpha):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    W = np.zeros((K, K))
    N = np.zeros((K, K))
    ph = np.full((K, K), 0.5)
    kl = np.zeros((K, K))
    C = np.zeros((K, K))
    I = np.zeros(K)
    npairs = K * (K - 1) // 2
    pi = np.empty(npairs, np.int64)
    pj = np.empty(npairs, np.int64)
    k = 0
    for i in range(K):
        for j in range(i + 1, K):
            pi[k] = i
            pj[k] = j
            k += 1
    # Alg. 1: after the initial phase L_C = [K], L_R = L_C (L_R^c = ∅), L_N = ∅.
    Lc = np.ones(K, np.bool_)
    Lrc = np.zeros(K, np.bool_)
    Ln = np.zeros(K, np.bool_)
    nlc = K
    fK = kweight * K**1.01
    level = 1 if mode == 1 else 0  # exploration while N_ij < level (RMED1: N_ij = 0)
    cursor = 0
    istar = 0
    llt = 0.0
    for t in range(1, T + 1):
        lt = math.log(t)
        if mode == 2:
            # RMED2: N_ij < α log log t  <=>  N_ij < ceil(α log log t) (counts are integers).
            llt = math.log(lt + 0.01)
            h = alpha * llt
            new_level = int(math.ceil(h)) if h > 0.0 else 0
            if new_level > level:
                level = new_level
                cursor = 0
        # Initial phase (RMED1) / exploration (RMED2): the lexicographically first deficient pair.
        cursor = next_deficient(N, pi, pj, cursor, level)
        explore = cursor < npairs
        if explore:
            a = pi[cursor]
            b = pj[cursor]
        else:
            # Alg. 1 main loop: l(t) = the next arm of L_C (index order).
            a = first_member(Lc)
            # Alg. 2 (RMED1) / Alg. 3 (RMED2): the opponent m(t).
            if mode == 1:
                b = rmed1_opponent(ph, a, istar)
            else:
                b = rmed2_opponent(ph, kl, N, a, istar, llt)
        # Alg. 1: duel (l(t), m(t)); a self-duel (l = m = î*) carries no information.
        record(tab, grid, cum, out, pos, a, b, 1)
        if a != b:
            update_pair(W, N, ph, kl, C, I, a, b, rng.random() < P[a, b])
            istar = argmin_first(I)
        # Alg. 1: l(t) leaves L_R, L_N gains the plausible winners, a new loop starts when L_C is done.
        if not explore:
            nlc = advance_loop(I, istar, a, Lc, Lrc, Ln, nlc, lt + fK)
    return out, 0, pos[0]


def run1(instance, T, tab, grid, rng, *, kweight):
    return rmed_kernel(instance.P, T, tab, grid, rng, 1, kweight, 3.0)


def run2(instance, T, tab, grid, rng, *, kweight, alpha):
    return rmed_kernel(instance.P, T, tab, grid, rng, 2, kweight, alpha)


_CITATION = ("Komiyama, Honda, Kashima, Nakagawa, Regret Lower Bound and Optimal Algorithm in Dueling Bandit "
             "Problem, COLT 2015")
_KWEIGHT = Param("kweight", "float", 0.3,
                 "f(K) = kweight·K^1.01 in the candidate test I_j − I* <= log t + f(K)", low=0.0)

SPECS = {
    "rmed1": AlgorithmSpec(
        name="rmed1",
        ns_per_step=97,
        colour="#2ca02c",
        label="RMED1",
        problem="duel",
        citation=_CITATION,
        run=run1,
        params=(_KWEIGHT,),
    ),
    "rmed2": AlgorithmSpec(
        name="rmed2",
        ns_per_step=172,
        colour="#98df8a",
        label="RMED2",
        problem="duel",
        citation=_CITATION,
        run=run2,
        params=(_KWEIGHT,
                Param("alpha", "float", 3.0, "exploration: every pair is dueled while N_ij < α·log log t",
                      low=0.0, low_open=True)),
    ),
}
