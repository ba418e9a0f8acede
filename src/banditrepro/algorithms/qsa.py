"""QSA — Query Selection Algorithm (Jamieson & Nowak, Active ranking using pairwise comparisons,
NIPS 2011), as a dueling-bandit policy: a reconstruction (docs/decisions.md#qsa).

Source: QSA inserts the objects one at a time, in random order, into a ranking by binary search, and asks
only the comparisons that the embedding does not already imply; noisy answers are handled by repeating
a query until its answer is known with the required confidence (the robust version). Without an
embedding (d unknown) every comparison is ambiguous, so QSA reduces to adaptive binary insertion sort,
≈ N log2 N queries. After the sort the policy duels (top, top) forever; nothing depends on the horizon.

A query (x, y) duels x and y until the anytime Hoeffding interval of p_xy excludes 1/2:
|p̂_n − 1/2| > r_n = sqrt(ln(4n²/δ)/(2n)). A wrong answer needs p̂_n beyond r_n on the wrong side for
some n, probability ≤ Σ_n exp(−2n r_n²) = Σ_n δ/(4n²) < δ/2, so each query errs with probability < δ.

Still reconstructed ([I]): how the Winner Stays paper adapted QSA to dueling (not stated), δ, and
``tie_margin`` γ: a query between near-equal arms (|p − 1/2| ≪ 0.01 on utility100) would run for 10^5+
duels, so it also stops once r_n < γ and is answered by the majority of its duels (x wins a tied count).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.algorithms.rng import randint
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True)
def insert_at(order, n, pos, x):
    """Insert x at ``pos`` into the ranking order[:n] (best first); returns the new length."""
    for k in range(n, pos, -1):
        order[k] = order[k - 1]
    order[pos] = x
    return n + 1


@njit(cache=True, nogil=True, inline="always")
def query_done(w, n, log_inv_delta, tie_margin):
    """Stop a query after n duels with w wins: the interval excludes 1/2, or its radius is below γ."""
    if n == 0:
        return False
    rad = math.sqrt((log_inv_delta + math.log(4.0 * n * n)) / (2.0 * n))
    return abs(w / n - 0.5) > rad or rad < tie_margin


@njit(cache=True, nogil=True)
def adaptive_query(p, log_inv_delta, tie_margin, limit, rng):
    """Duel x against y (x wins with probability p) until ``query_done`` or ``limit`` duels; -> (wins, n)."""
    w = 0
    n = 0
    while n < limit and not query_done(w, n, log_inv_delta, tie_margin):
        if rng.random() < p:
            w += 1
        n += 1
    return w, n


@njit(cache=True, nogil=True)
def qsa_kernel(P, T, tab, grid, rng, delta, tie_margin):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    log_inv_delta = -math.log(delta)
    # QSA: random insertion order (Fisher–Yates with the cell's generator)
    perm = np.arange(K)
    for k in range(K - 1, 0, -1):
        r = randint(rng, k + 1)
        tmp = perm[k]
        perm[k] = perm[r]
        perm[r] = tmp
    order = np.empty(K, np.int64)
    order[0] = perm[0]
    n = 1
    for m in range(1, K):
        x = perm[m]
        # QSA: binary search for x's place in order[:n]; query the middle arm, keep the half x belongs to
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) // 2
            y = order[mid]
            # robust QSA: repeat the query (x, y) until its answer is confident (T only ends the run)
            w, k = adaptive_query(P[x, y], log_inv_delta, tie_margin, T - pos[0], rng)
            record(tab, grid, cum, out, pos, x, y, k)
            if pos[0] >= T:
                return out, 0, pos[0]
            if 2 * w >= k:  # x beats y: x ranks above y
                hi = mid
            else:
                lo = mid + 1
        n = insert_at(order, n, lo, x)
    # ranking done: exploit, the top arm duels itself
    record(tab, grid, cum, out, pos, order[0], order[0], T - pos[0])
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, delta, tie_margin):
    return qsa_kernel(instance.P, T, tab, grid, rng, delta, tie_margin)


SPECS = {
    "qsa": AlgorithmSpec(
        name="qsa",
        ns_per_step=3,
        colour="#8c564b",
        label="QSA (reconstructed)",
        problem="duel",
        citation="Jamieson & Nowak, Active ranking using pairwise comparisons, NIPS 2011 (binary-insertion "
                 "form without embedding, each query repeated until an anytime Hoeffding bound separates "
                 "it; dueling adaptation, δ and tie margin reconstructed, docs/decisions.md#qsa)",
        run=run,
        params=(Param("delta", "float", 0.05, "error probability of one query", low=0.0, high=1.0,
                      low_open=True, high_open=True),
                Param("tie_margin", "float", 0.05,
                      "a query also stops once its confidence radius is below this (majority answer)",
                      low=0.0, high=0.5)),
        reconstructed=True,
    )
}
