"""CCB — Copeland Confidence Bound (Zoghi, Karnin, Whiteson, de Rijke, Copeland Dueling Bandits,
NIPS 2015, Algorithm 1), α = 0.51.

u_ij, l_ij = p̂_ij ± sqrt(α ln t / N_ij), with u = 1 and l = 0 when N_ij = 0 and u_ii = l_ii = 1/2.
Upper and lower Copeland scores are C̄(i) = #{k≠i : u_ik ≥ 1/2} and C(i) = #{k≠i : l_ik > 1/2}.
Both depend only on the relation D[i, j] = [l_ij > 1/2] (i beats j confidently), because
u_ik < 1/2 ⟺ l_ki > 1/2. So C(i) is a row sum of D and C̄(i) = K−1 − (column sum). D[w, l] holds iff
p̂_wl > 1/2 and ln t < θ_wl = N (p̂_wl − 1/2)² / α. It changes only for the dueled pair, or when ln t
passes θ. Per-row minima of θ find those expiries in O(K), so one step costs O(K), not O(K²).

Choices the pseudocode leaves open ([I]):
- Line 12: when the half-probability branch picks B^c_t and no j ∈ B^c_t has l_jc ≤ 1/2 (or B^c_t = ∅),
  the argmax runs over all arms, as the all-arms branch does. In the all-arms branch c takes part with
  u_cc = 1/2, and a tie never selects d = c, so (c, c) is dueled only when every other eligible arm has
  u_jc < 1/2.
- Argmax ties are broken uniformly at random (docs/decisions.md#ties). A self-duel (c, c) gives no information and is
  not counted.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.algorithms.rng import randint
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True)
def ccb_reset(in_best, inB, Blist, nB):
    """Line 2–4 values: B = all arms, B^i = ∅; returns (|B|, L_C) = (K, K)."""
    K = in_best.shape[0]
    for i in range(K):
        in_best[i] = True
        for m in range(nB[i]):
            inB[i, Blist[i, m]] = False
        nB[i] = 0
    return K, K


@njit(cache=True, nogil=True)
def ccb_set_beaters(i, D, inB, Blist, nB):
    """Line 8B: B^i <- {k : u_ik < 1/2} = {k : D[k, i]}."""
    K = D.shape[0]
    for m in range(nB[i]):
        inB[i, Blist[i, m]] = False
    n = 0
    for k in range(K):
        if D[k, i]:
            Blist[i, n] = k
            inB[i, k] = True
            n += 1
    nB[i] = n


@njit(cache=True, nogil=True)
def ccb_truncate(j, keep, inB, Blist, nB, rng):
    """Line 8C: keep ``keep`` uniformly chosen elements of B^j (all of them if it has no more)."""
    n = nB[j]
    if n <= keep:
        return
    for m in range(keep):  # partial Fisher–Yates: Blist[j, :keep] is a uniform subset
        r = m + randint(rng, n - m)
        tmp = Blist[j, m]
        Blist[j, m] = Blist[j, r]
        Blist[j, r] = tmp
    for m in range(keep, n):
        inB[j, Blist[j, m]] = False
    nB[j] = keep


@njit(cache=True, nogil=True)
def ccb_update_sets(D, Crow, Ccol, in_best, n_best, inB, Blist, nB, LC, rng):
    """Lines 8B–8C on the current confidence relation; returns (|B_t|, L_C)."""
    K = D.shape[0]
    # Line 8B: drop i from B_t if C̄(i) < C(j) for some j; rebuild B^i unless |B^i| = L_C + 1
    max_low = 0
    for j in range(K):
        max_low = max(max_low, Crow[j])
    for i in range(K):
        if in_best[i] and K - 1 - Ccol[i] < max_low:
            in_best[i] = False
            n_best -= 1
            if nB[i] != LC + 1:
                ccb_set_beaters(i, D, inB, Blist, nB)
    if n_best == 0:
        n_best, LC = ccb_reset(in_best, inB, Blist, nB)
    # Line 8C: every i ∈ C_t (max C̄) whose score is settled (C̄(i) = C(i)) becomes a hypothesis
    min_col = Ccol[0]
    for i in range(1, K):
        min_col = min(min_col, Ccol[i])
    for i in range(K):
        if Ccol[i] == min_col and K - 1 - Ccol[i] == Crow[i]:
            if not in_best[i]:
                in_best[i] = True
                n_best += 1
            for m in range(nB[i]):
                inB[i, Blist[i, m]] = False
            nB[i] = 0
            LC = K - 1 - Crow[i]
            for j in range(K):
                if j == i:
                    continue
                if nB[j] < LC + 1:
                    for m in range(nB[j]):
                        inB[j, Blist[j, m]] = False
                    nB[j] = 0
                elif nB[j] > LC + 1:
                    ccb_truncate(j, LC + 1, inB, Blist, nB, rng)
    return n_best, LC


@njit(cache=True, nogil=True)
def ccb_challenger(c, use_Bc, s, pT, isqT, D, inB, rng):
    """Line 12: d = argmax_{j ∈ B, l_jc ≤ 1/2} u_jc, B = B^c_t or all arms; ties random, never c in a tie."""
    K = D.shape[0]
    best = -np.inf
    d = -1
    ties = 0
    if use_Bc:
        for j in range(K):
            if inB[c, j] and not D[j, c]:
                u = pT[c, j] + s * isqT[c, j]
                if u > best:
                    best = u
                    d = j
                    ties = 1
                elif u == best:
                    ties += 1
                    if randint(rng, ties) == 0:
                        d = j
        if d >= 0:
            return d
    for j in range(K):
        if j != c and not D[j, c]:
            u = pT[c, j] + s * isqT[c, j]
            if u > best:
                best = u
                d = j
                ties = 1
            elif u == best:
                ties += 1
                if randint(rng, ties) == 0:
                    d = j
    if d < 0 or best < 0.5:  # c itself (u_cc = 1/2) is the strict maximum
        d = c
    return d


@njit(cache=True, nogil=True, inline="always")
def _refresh_row_min(w, D, theta, rowmin):
    K = D.shape[0]
    m = np.inf
    for l in range(K):
        if D[w, l] and theta[w, l] < m:
            m = theta[w, l]
    rowmin[w] = m


@njit(cache=True, nogil=True)
def ccb_candidates(Ccol, in_best, cand, inter):
    """Line 7: C_t = argmax C̄ (= argmin of the column sums) and B_t ∩ C_t; returns their sizes."""
    K = Ccol.shape[0]
    min_col = Ccol[0]
    for i in range(1, K):
        min_col = min(min_col, Ccol[i])
    nc = 0
    ni = 0
    for i in range(K):
        if Ccol[i] == min_col:
            cand[nc] = i
            nc += 1
            if in_best[i]:
                inter[ni] = i
                ni += 1
    return nc, ni


@njit(cache=True, nogil=True)
def ccb_open_pairs(D, Blist, nB, pairs):
    """Line 9's set {(i, j) : j ∈ B^i_t, 1/2 ∈ [l_ij, u_ij]} as codes i·K + j; returns its size."""
    K = D.shape[0]
    n = 0
    for i in range(K):
        for m in range(nB[i]):
            j = Blist[i, m]
            if not D[i, j] and not D[j, i]:
                pairs[n] = i * K + j
                n += 1
    return n


@njit(cache=True, nogil=True)
def ccb_kernel(P, T, tab, grid, rng, alpha):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    W = np.zeros((K, K))
    N = np.zeros((K, K))
    pT = np.ones((K, K))  # pT[c, j] = p̂_jc (1 while N = 0: u = 1)
    isqT = np.zeros((K, K))  # isqT[c, j] = 1 / sqrt(N_jc)
    theta = np.zeros((K, K))  # l_wl > 1/2  <=>  ln t < theta[w, l]
    D = np.zeros((K, K), np.bool_)
    Crow = np.zeros(K, np.int64)  # C(i) = Σ_k D[i, k]
    Ccol = np.zeros(K, np.int64)  # C̄(i) = K − 1 − Σ_k D[k, i]
    rowmin = np.full(K, np.inf)
    gmin = np.inf  # min of rowmin: the next time (in ln t) a confident verdict expires
    in_best = np.ones(K, np.bool_)  # B_t
    inB = np.zeros((K, K), np.bool_)  # B_t^i as membership rows ...
    Blist = np.zeros((K, K), np.int64)  # ... and lists
    nB = np.zeros(K, np.int64)
    n_best = K
    LC = K
    # Lines 8B-8C are idempotent while D and the sets are unchanged, so they (and the sets derived
    # from them: C_t, B_t ∩ C_t, line 9's open pairs) are recomputed only when something changed.
    dirty = True
    cand = np.empty(K, np.int64)
    inter = np.empty(K, np.int64)
    nc = 0
    ni = 0
    open_pairs = np.empty(K * K, np.int64)
    n_open = 0
    last_c = -1
    last_d = -1
    for t in range(1, T + 1):
        lnt = math.log(t)
        # Line 6: confidence bounds at time t; pairs whose confident verdict expired leave D
        if gmin <= lnt:
            gmin = np.inf
            for w in range(K):
                if rowmin[w] <= lnt:
                    for l in range(K):
                        if D[w, l] and theta[w, l] <= lnt:
                            D[w, l] = False
                            Crow[w] -= 1
                            Ccol[l] -= 1
                    _refresh_row_min(w, D, theta, rowmin)
                    dirty = True
                gmin = min(gmin, rowmin[w])
        # Line 8A: a hypothesis j ∈ B^i with l_ij > 1/2 is disproven. Only the last duel can have
        # made one true (D grows only through duels, and 8B/8C never create one).
        if last_c != last_d and ((D[last_c, last_d] and inB[last_c, last_d])
                                 or (D[last_d, last_c] and inB[last_d, last_c])):
            n_best, LC = ccb_reset(in_best, inB, Blist, nB)
            dirty = True
        if dirty:
            # Lines 8B-8C, then the derived sets
            n_best, LC = ccb_update_sets(D, Crow, Ccol, in_best, n_best, inB, Blist, nB, LC, rng)
            nc, ni = ccb_candidates(Ccol, in_best, cand, inter)
            n_open = ccb_open_pairs(D, Blist, nB, open_pairs)
            dirty = False
        # Line 9: w.p. 1/4 duel a uniform open pair (i, j), j ∈ B^i_t, if there is one
        if rng.random() < 0.25 and n_open > 0:
            code = open_pairs[randint(rng, n_open)]
            c = code // K
            d = code % K
        else:
            # Lines 10-11: w.p. 2/3 restrict C_t to B_t ∩ C_t if non-empty; c uniform
            if ni > 0 and rng.random() < 2.0 / 3.0:
                c = inter[randint(rng, ni)]
            else:
                c = cand[randint(rng, nc)]
            # Line 12
            use_Bc = rng.random() < 0.5
            d = ccb_challenger(c, use_Bc, math.sqrt(alpha * lnt), pT, isqT, D, inB, rng)
        # Line 13: duel and update the pair's statistics
        record(tab, grid, cum, out, pos, c, d, 1)
        if c != d:
            if rng.random() < P[c, d]:
                W[c, d] += 1.0
            else:
                W[d, c] += 1.0
            N[c, d] += 1.0
            N[d, c] += 1.0
            n = N[c, d]
            isq = 1.0 / math.sqrt(n)
            for x, y in ((c, d), (d, c)):
                p = W[x, y] / n
                pT[y, x] = p
                isqT[y, x] = isq
                th = n * (p - 0.5) ** 2 / alpha if p > 0.5 else 0.0
                old_th = theta[x, y]
                old_d = D[x, y]
                theta[x, y] = th
                now = th > lnt
                if now != old_d:
                    D[x, y] = now
                    inc = 1 if now else -1
                    Crow[x] += inc
                    Ccol[y] += inc
                    dirty = True
                # keep rowmin[x] = min θ over the row's confident pairs
                if now and th < rowmin[x]:
                    rowmin[x] = th
                elif old_d and old_th == rowmin[x]:
                    _refresh_row_min(x, D, theta, rowmin)
                gmin = min(gmin, rowmin[x])
        last_c = c
        last_d = d
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, alpha):
    return ccb_kernel(instance.P, T, tab, grid, rng, alpha)


SPECS = {
    "ccb": AlgorithmSpec(
        name="ccb",
        ns_per_step=155,
        colour="#e377c2",
        label="CCB",
        problem="duel",
        citation="Zoghi, Karnin, Whiteson, de Rijke, Copeland Dueling Bandits, NIPS 2015 (Algorithm 1)",
        run=run,
        params=(Param("alpha", "float", 0.51, "exploration parameter α (> 1/2 in the analysis)", low=0.0,
                      low_open=True),),
    )
}
