"""SCB — Scalable Copeland Bandits (Zoghi, Karnin, Whiteson, de Rijke, Copeland Dueling Bandits,
NIPS 2015, Algorithms 2–4), anytime: nothing here reads the horizon T.

Alg. 3 (SCB): in epoch r = 1, 2, ..., with T_r = 2^(2^r), run Alg. 2 with ε = 0 and failure probability
δ_r = ln(T_r)/T_r, force-terminated after T_r comparisons; let â_r be its output and T_0 the comparisons
it used; then duel (â_r, â_r) T_r − T_0 times. T_r depends on r only, so the schedule is the same for
every horizon (the simulation merely stops at T).
Alg. 2 turns Copeland-winner identification into a K-armed bandit: pulling arm i draws j ≠ i uniformly,
queries the pair (i, j) until p_ij > 1/2 or < 1/2 holds with probability 1 − δ/K², and returns the
reward 1[i beats j]; the arm with the largest Copeland score has the largest mean reward.
Alg. 4 (KL-based PAC best-arm identification) pulls every arm left in B once per round; after t rounds,
with mean μ̂_i, [L_i, U_i] = {q : t·kl(μ̂_i, q) ≤ ln(4tK/δ) + 2 ln ln t}; arms with U_i < max_j L_j leave
B; stop when |B| = 1 or (1 − max L) ≤ (1 + ε)(1 − max U), and return argmax L.

Sources: the paper (algorithm structure, T_r, δ_r, ε = 0, the KL bounds) and duelpy's documented
implementation (pair statistics kept across epochs; |B| = 1 as a stop; the pair test "with probability
1 − δ/K²" as the Hoeffding radius r_n = sqrt(ln(K²/δ)/(2n)), which holds at each fixed n). Still
reconstructed ([I]):
- ``anytime=True`` uses r_n = sqrt(ln(4K²n²/δ)/(2n)) instead, valid uniformly over n (a union over n
  costs Σ 2·δ/(4K²n²) < δ/K²), ≈ 2.5× more duels per query; the default follows duelpy.
- ``tie_margin`` γ (the knob): the paper assumes p_ij ≠ 1/2; sushi16 has an exact 1/2 and pairs within
  0.004 of it, whose queries would never end (γ = 0 is the paper read literally: such a query runs until
  the epoch's force-termination). With γ > 0 a query also stops once r_n < γ and is answered by the
  empirical majority (an indifference stop, independent of T).
- ln ln t is clipped at 0 (t ≤ e). When every pair Alg. 4 can draw is already decided, its rounds cost
  no duel; MAX_ALG4_ROUNDS stops such a loop (arms with equal Copeland scores never separate) and returns
  argmax L.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.algorithms.rng import randint
from banditrepro.recorder import new_recorder, record

MAX_ALG4_ROUNDS = 20000
MAX_EPOCH_LEN = np.int64(2) ** 62  # T_r for r ≥ 6 (2^64 and beyond) exceeds any horizon we run


@njit(cache=True, nogil=True, inline="always")
def kl_bernoulli(p, q):
    """kl(p, q) between Bernoulli means, 0 ln 0 = 0."""
    v = 0.0
    if p > 0.0:
        v += p * math.log(p / q)
    if p < 1.0:
        v += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return v


@njit(cache=True, nogil=True)
def kl_bounds(p, level):
    """(L, U) = (min, max) {q ∈ [0, 1] : kl(p, q) ≤ level}, by bisection to 1e-12."""
    lo = p
    if p > 0.0:
        a = 0.0
        b = p
        for _ in range(42):
            m = 0.5 * (a + b)
            if m <= 0.0 or kl_bernoulli(p, m) > level:
                a = m
            else:
                b = m
        lo = b
    hi = p
    if p < 1.0:
        a = p
        b = 1.0
        for _ in range(42):
            m = 0.5 * (a + b)
            if m >= 1.0 or kl_bernoulli(p, m) > level:
                b = m
            else:
                a = m
        hi = a
    return lo, hi


@njit(cache=True, nogil=True)
def epoch_schedule(r):
    """Alg. 3: (T_r, ln(1/δ_r)) of epoch r, T_r = 2^(2^r), δ_r = ln(T_r)/T_r (in logs: no overflow)."""
    ln_tr = (2.0 ** r) * math.log(2.0)
    length = np.int64(2) ** (np.int64(2) ** r) if r <= 5 else MAX_EPOCH_LEN
    return length, ln_tr - math.log(ln_tr)


@njit(cache=True, nogil=True, inline="always")
def pair_decided(w, n, log_c, anytime, tie_margin):
    """Alg. 2's stopping rule for the query of one pair (w wins in n duels); log_c = ln(K²/δ)."""
    if n == 0.0:
        return False
    rad = math.sqrt((log_c + (math.log(4.0) + 2.0 * math.log(n) if anytime else 0.0)) / (2.0 * n))
    return abs(w / n - 0.5) > rad or rad < tie_margin


@njit(cache=True, nogil=True)
def scb_identify(P, W, N, length, log_inv_delta, anytime, tie_margin, T, rng, tab, grid, cum, out, pos, Bl, s, L, U):
    """Algorithms 2 + 4, force-terminated after ``length`` comparisons; returns (â, comparisons used).

    W[a, b] / N[a, b] (a < b) are the pair statistics of the whole run (kept across epochs). ``T`` only
    stops the simulation (no decision depends on it).
    """
    K = P.shape[0]
    log_c = math.log(K * K) + log_inv_delta  # ln(K²/δ): the per-pair level δ/K²
    nB = K
    for i in range(K):
        Bl[i] = i
        s[i] = 0.0
        L[i] = 0.0
        U[i] = 1.0
    used = 0
    t = 0
    while True:
        t += 1
        # Alg. 4 line "pull every arm in B": a pull of i is Alg. 2's reward(i)
        for m in range(nB):
            i = Bl[m]
            r = randint(rng, K - 1)  # Alg. 2: opponent j ≠ i uniformly
            j = r + 1 if r >= i else r
            a = min(i, j)
            b = max(i, j)
            n = 0
            # Alg. 2: query (i, j) until the pair is decided (force-terminated with the epoch)
            while not pair_decided(W[a, b], N[a, b], log_c, anytime, tie_margin) and used + n < length \
                    and pos[0] + n < T:
                if rng.random() < P[a, b]:
                    W[a, b] += 1.0
                N[a, b] += 1.0
                n += 1
            if n > 0:
                record(tab, grid, cum, out, pos, a, b, n)
                used += n
            if used >= length or pos[0] >= T:
                # Alg. 3: force-termination; â = argmax L among the arms left
                best = Bl[0]
                for k in range(1, nB):
                    if L[Bl[k]] > L[best]:
                        best = Bl[k]
                return best, used
            pa = W[a, b] / N[a, b]
            if (pa > 0.5) if i == a else (pa < 0.5):  # Alg. 2: reward 1[i beats j]
                s[i] += 1.0
        # Alg. 4: KL confidence bounds after t pulls of every arm in B
        level = (math.log(4.0 * t * K) + log_inv_delta + 2.0 * math.log(max(math.log(t), 1.0))) / t
        max_l = 0.0
        max_u = 0.0
        for m in range(nB):
            i = Bl[m]
            L[i], U[i] = kl_bounds(s[i] / t, level)
            max_l = max(max_l, L[i])
            max_u = max(max_u, U[i])
        # Alg. 4: eliminate arms whose upper bound is below the best lower bound
        m2 = 0
        for m in range(nB):
            i = Bl[m]
            if U[i] >= max_l:
                Bl[m2] = i
                m2 += 1
        nB = m2
        # Alg. 4: stopping rule (ε = 0), plus |B| = 1 and the zero-cost loop guard
        if nB == 1 or (1.0 - max_l) <= (1.0 - max_u) or t >= MAX_ALG4_ROUNDS:
            break
    best = Bl[0]
    for m in range(1, nB):
        if L[Bl[m]] > L[best]:
            best = Bl[m]
    return best, used


@njit(cache=True, nogil=True)
def scb_kernel(P, T, tab, grid, rng, anytime, tie_margin):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    W = np.zeros((K, K))
    N = np.zeros((K, K))
    Bl = np.empty(K, np.int64)
    s = np.zeros(K)
    L = np.zeros(K)
    U = np.ones(K)
    r = 1
    while pos[0] < T:
        # Alg. 3: epoch r has T_r = 2^(2^r) comparisons and failure probability δ_r = ln(T_r)/T_r
        length, log_inv_delta = epoch_schedule(r)
        a, used = scb_identify(P, W, N, length, log_inv_delta, anytime, tie_margin, T, rng, tab, grid, cum, out,
                               pos, Bl, s, L, U)
        # Alg. 3: duel (â_r, â_r) for the rest of the epoch (the simulation ends at T)
        record(tab, grid, cum, out, pos, a, a, min(length - used, T - pos[0]))
        r += 1
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, anytime, tie_margin):
    return scb_kernel(instance.P, T, tab, grid, rng, anytime, tie_margin)


SPECS = {
    "scb": AlgorithmSpec(
        name="scb",
        ns_per_step=1108,
        colour="#bcbd22",
        label="SCB (reconstructed)",
        problem="duel",
        citation="Zoghi, Karnin, Whiteson, de Rijke, Copeland Dueling Bandits, NIPS 2015 (Algorithms 2-4, "
                 "anytime; Hoeffding pair test and tie margin reconstructed)",
        run=run,
        params=(Param("anytime", "bool", False,
                      "pair test valid uniformly over n (else duelpy's fixed-n radius)"),
                Param("tie_margin", "float", 0.05,
                      "a pair query also stops once its confidence radius is below this (0 = literal)",
                      low=0.0, high=0.5),),
        reconstructed=True,
    )
}
