"""QSA — Query Selection Algorithm (Jamieson & Nowak, Active ranking using pairwise comparisons,
NIPS 2011), as a dueling-bandit policy: a reconstruction (SPEC §B.3).

How the Winner Stays paper turned QSA into a bandit policy is not stated. QSA inserts the objects one
at a time, in random order, into a ranking by binary search, and asks only the comparisons that the
embedding does not already imply. Without an embedding (d unknown) every comparison is ambiguous,
so QSA reduces to adaptive binary insertion sort, ≈ N log2 N queries. Each query (x, y) is answered
by the majority of ``repeats`` duels of x and y. This follows the robust, error-tolerant version of
QSA, which needs only answers that are probably correct. After the sort the policy duels (top, top)
until T.

Default repeats = 15 (odd, so there is no tie). A query between arms with p ≥ 0.7 is then answered
correctly with probability ≥ 0.95 (P[Bin(15, 0.7) ≤ 7] ≈ 0.05). The sort costs 15·N·log2 N duels
(≈ 500 for N = 10, ≈ 10^4 for N = 100), small next to T = 1e5. Near-even pairs stay error-prone,
and a wrong top gives linear weak regret: the weakness of a fixed-sample sort that Fig. 2 shows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from banditrepro import ReproError
from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.algorithms.winner_stays import randint
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True)
def insert_at(order, n, pos, x):
    """Insert x at ``pos`` into the ranking order[:n] (best first); returns the new length."""
    for k in range(n, pos, -1):
        order[k] = order[k - 1]
    order[pos] = x
    return n + 1


@njit(cache=True, nogil=True)
def qsa_kernel(P, T, tab, grid, rng, repeats):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    # random insertion order (Fisher–Yates with the cell's generator)
    perm = np.arange(K)
    for k in range(K - 1, 0, -1):
        r = randint(rng, k + 1)
        tmp = perm[k]
        perm[k] = perm[r]
        perm[r] = tmp
    order = np.empty(K, np.int64)
    order[0] = perm[0]
    n = 1
    half = repeats // 2
    for m in range(1, K):
        x = perm[m]
        # binary search for x's place in order[:n]: query the middle arm, keep the half x belongs to
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) // 2
            y = order[mid]
            k = min(repeats, T - pos[0])
            wins = rng.binomial(k, P[x, y])  # x's wins in `repeats` duels (x, y)
            record(tab, grid, cum, out, pos, x, y, k)
            if k < repeats:
                return out, 0, pos[0]  # horizon reached inside the query
            if wins > half:  # majority says x beats y: x ranks above y
                hi = mid
            else:
                lo = mid + 1
        n = insert_at(order, n, lo, x)
    # ranking done: duel the top arm against itself until T
    record(tab, grid, cum, out, pos, order[0], order[0], T - pos[0])
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, repeats):
    if repeats % 2 == 0:
        raise ReproError(f"qsa: parameter repeats must be odd (a majority without ties), got {repeats}")
    return qsa_kernel(instance.P, T, tab, grid, rng, repeats)


SPECS = {
    "qsa": AlgorithmSpec(
        name="qsa",
        label="QSA (reconstructed)",
        problem="duel",
        citation="Jamieson & Nowak, Active ranking using pairwise comparisons, NIPS 2011 (binary-insertion "
                 "form without embedding, majority of repeated duels per query; reconstruction, SPEC §B.3)",
        run=run,
        params=(Param("repeats", "int", 15, "duels per query, decided by majority (odd)", low=1),),
        reconstructed=True,
    )
}
