"""IF — Interleaved Filter 2 (Yue, Broder, Kleinberg, Joachims, The K-armed dueling bandits problem,
JCSS 2012, Algorithm 2), with δ = 1/(T K²).

The candidate b̂ plays round robins against every arm left in W. After each round robin, arms that b̂
beats confidently leave W (lines 12–14). If some b' beats b̂ confidently, IF2 prunes every arm that b̂
beats empirically (lines 16–18), b' becomes the candidate, and the estimates restart (lines 19–20).
When W is empty the candidate duels itself until T. The confidence interval is
Ĉ = (P̂ − c_t, P̂ + c_t) with c_t = sqrt(4 ln(1/δ) / t), where t counts the comparisons since the
last reset. All arms in W share t, because each round robin compares b̂ with every b once. This is
also Komiyama's library form. When several b' qualify, one is drawn uniformly (ties rule, docs/decisions.md#ties).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec
from banditrepro.algorithms.rng import randint
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True)
def if_filter(Wl, nW, wins, t, c, rng):
    """Lines 12–21 after a round robin on W = Wl[:nW] (``wins[b]`` = b̂'s wins over b in t duels).

    Compacts Wl in place; returns (new |W|, the new candidate b', or −1 if b̂ stays).
    """
    # lines 12-14: drop every b with P̂ > 1/2 and 1/2 outside Ĉ (b̂ beats b confidently)
    m2 = 0
    for m in range(nW):
        b = Wl[m]
        if not (wins[b] / t - c > 0.5):
            Wl[m2] = b
            m2 += 1
    nW = m2
    # line 15: some b' with P̂ < 1/2 and 1/2 outside Ĉ (b' beats b̂ confidently); uniform if several
    cnt = 0
    for m in range(nW):
        if wins[Wl[m]] / t + c < 0.5:
            cnt += 1
    if cnt == 0:
        return nW, -1
    r = randint(rng, cnt)
    bp = -1
    for m in range(nW):
        if wins[Wl[m]] / t + c < 0.5:
            if r == 0:
                bp = Wl[m]
                break
            r -= 1
    # lines 16-19: IF2 pruning (drop every b that b̂ beats empirically), then W <- W \ {b'}
    m2 = 0
    for m in range(nW):
        b = Wl[m]
        if b == bp or wins[b] / t > 0.5:
            continue
        Wl[m2] = b
        m2 += 1
    return m2, bp


@njit(cache=True, nogil=True)
def if_kernel(P, T, tab, grid, rng):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    log_inv_delta = math.log(T) + 2.0 * math.log(K)  # δ = 1/(T K²)
    # lines 3-4: random first candidate, W = all other arms
    bh = randint(rng, K)
    Wl = np.empty(K, np.int64)
    nW = 0
    for b in range(K):
        if b != bh:
            Wl[nW] = b
            nW += 1
    wins = np.zeros(K)
    t = 0
    while nW > 0:
        # lines 8-11: compare b̂ with every b in W once
        for m in range(nW):
            if pos[0] >= T:
                return out, 0, pos[0]
            b = Wl[m]
            record(tab, grid, cum, out, pos, bh, b, 1)
            if rng.random() < P[bh, b]:
                wins[b] += 1.0
        t += 1
        c = math.sqrt(4.0 * log_inv_delta / t)
        nW, bp = if_filter(Wl, nW, wins, t, c, rng)
        if bp >= 0:
            # lines 19-20: b' is the new candidate; reset the estimates
            bh = bp
            wins[:] = 0.0
            t = 0
    # line 24: b̂ is returned; play (b̂, b̂) for the rest of the horizon
    record(tab, grid, cum, out, pos, bh, bh, T - pos[0])
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng):
    return if_kernel(instance.P, T, tab, grid, rng)


SPECS = {
    "if": AlgorithmSpec(
        name="if",
        ns_per_step=32,
        colour="#17becf",
        label="IF",
        problem="duel",
        citation="Yue, Broder, Kleinberg, Joachims, The K-armed dueling bandits problem, JCSS 2012 "
                 "(Interleaved Filter 2, δ = 1/(TK²))",
        run=run,
    )
}
