"""Winner Stays (Chen & Frazier, Dueling Bandits with Weak Regret, ICML 2017): WS-W and WS-S.

WS-W (Alg. 1) keeps net-win counts C(t, i) = Σ_j q_ij(t) − q_ji(t) and duels
i_t ∈ argmax_i C(t−1, i), j_t ∈ argmax_{j≠i_t} C(t−1, j), ties broken in favour of i_{t−1}, then
j_{t−1}, else uniformly (docs/decisions.md#ties). With these tie rules the run decomposes exactly into rounds and
iterations (paper §4): in round ℓ the incumbent duels one challenger until one of the two reaches
C = −ℓ, the survivor meets a uniformly drawn arm not yet played this round, and after N−1 iterations
the round winner sits at (N−1)ℓ and every other arm at −ℓ. The next round opens with the winner
against the last loser (the tie rule prefers the previous pair). The fast kernels simulate this round
view, one uniform draw per duel and one ``record`` per iteration; ``ws_w_trace`` runs Alg. 1 literally,
step by step, and draws the same random numbers, so both produce the same duels (tested).

WS-S (Alg. 2, β > 1): round ℓ of WS-W (its state is never reset), then ⌊β^ℓ⌋ duels (k, k) of the round
winner k, which do not update C. WS-W's own previous pair, not the exploitation duel, feeds the tie
rule when the next round starts (WS-W is a subroutine with its own state).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from banditrepro import ReproError
from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.algorithms.rng import randint
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True, inline="always")
def duel_winner(P, a, b, rng):
    """One duel of a and b: a single uniform draw, read in the orientation (lower index, higher index)
    so that the literal Alg. 1 and the round view consume the random stream identically."""
    lo = min(a, b)
    hi = max(a, b)
    return lo if rng.random() < P[lo, hi] else hi


@njit(cache=True, nogil=True)
def pick_first(C, prev_i, prev_j, rng):
    """Alg. 1: i_t ∈ argmax_i C(t−1, i); ties -> i_{t−1}, then j_{t−1}, else uniform (prev = −1 at t = 1)."""
    K = C.shape[0]
    m = C[0]
    for k in range(1, K):
        m = max(m, C[k])
    if prev_i >= 0 and C[prev_i] == m:
        return prev_i
    if prev_j >= 0 and C[prev_j] == m:
        return prev_j
    n = 0
    for k in range(K):
        if C[k] == m:
            n += 1
    r = randint(rng, n)  # the r-th maximiser in index order
    for k in range(K):
        if C[k] == m:
            if r == 0:
                return k
            r -= 1
    return -1


@njit(cache=True, nogil=True)
def pick_second(C, i_t, prev_i, prev_j, rng):
    """Alg. 1: j_t ∈ argmax_{j≠i_t} C(t−1, j); ties -> i_{t−1}, then j_{t−1}, else uniform."""
    K = C.shape[0]
    first = True
    m = C[0]
    for k in range(K):
        if k != i_t and (first or C[k] > m):
            m = C[k]
            first = False
    if prev_i >= 0 and prev_i != i_t and C[prev_i] == m:
        return prev_i
    if prev_j >= 0 and prev_j != i_t and C[prev_j] == m:
        return prev_j
    n = 0
    for k in range(K):
        if k != i_t and C[k] == m:
            n += 1
    r = randint(rng, n)
    for k in range(K):
        if k != i_t and C[k] == m:
            if r == 0:
                return k
            r -= 1
    return -1


@njit(cache=True, nogil=True)
def exploit_length(beta, ell, cap):
    """WS-S exploitation of round ℓ: ⌊β^ℓ⌋ duels, at most ``cap`` (the steps left)."""
    if cap <= 0:
        return 0
    if ell * math.log(beta) >= math.log(cap) + 1.0:  # β^ℓ > cap: avoid overflow
        return cap
    return min(cap, np.int64(math.floor(beta ** ell)))


@njit(cache=True, nogil=True, inline="always")
def _ws_round(P, T, tab, grid, cum, out, pos, rng, C, free, state):
    """Play WS-W's round ℓ = state[0] to its end (True) or until T steps (False).

    ``state`` = [ℓ, round winner so far, last loser]; ``free`` marks the arms not yet played this round.
    """
    K = C.shape[0]
    ell = state[0]
    lo = -ell  # an iteration ends when one of its two arms reaches C = −ℓ
    for k in range(K):
        free[k] = True
    if ell == 1:
        # t = 1: all C = 0, no previous pair -> i_1 uniform, j_1 uniform among the others
        a = randint(rng, K)
        r = randint(rng, K - 1)
        b = r + 1 if r >= a else r
    else:
        # round start: the winner (unique max) against the last loser (tie rule: previous pair first)
        a = state[1]
        b = state[2]
    free[a] = False
    free[b] = False
    nfree = K - 2
    while True:
        # one iteration: duel (a, b) until one of them falls to −ℓ
        rem = T - pos[0]
        n = 0
        while n < rem and C[a] > lo and C[b] > lo:
            if duel_winner(P, a, b, rng) == a:
                C[a] += 1
                C[b] -= 1
            else:
                C[b] += 1
                C[a] -= 1
            n += 1
        record(tab, grid, cum, out, pos, a, b, n)
        if C[a] > lo and C[b] > lo:
            return False  # horizon reached inside the iteration
        winner = a if C[b] == lo else b
        loser = b if winner == a else a
        if nfree == 0:
            # round complete: winner at (N−1)ℓ, all others at −ℓ
            state[0] = ell + 1
            state[1] = winner
            state[2] = loser
            return True
        # next challenger: j_t = uniform over the arms still at −(ℓ−1), i.e. not yet played this round
        r = randint(rng, nfree)
        c = -1
        for k in range(K):
            if free[k]:
                if r == 0:
                    c = k
                    break
                r -= 1
        free[c] = False
        nfree -= 1
        a = winner
        b = c


@njit(cache=True, nogil=True)
def ws_w_kernel(P, T, tab, grid, rng):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    C = np.zeros(K, np.int64)
    free = np.ones(K, np.bool_)
    state = np.array([1, -1, -1], np.int64)
    while pos[0] < T:
        _ws_round(P, T, tab, grid, cum, out, pos, rng, C, free, state)
    return out, 0, pos[0]


@njit(cache=True, nogil=True)
def ws_s_kernel(P, T, tab, grid, rng, beta):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    C = np.zeros(K, np.int64)
    free = np.ones(K, np.bool_)
    state = np.array([1, -1, -1], np.int64)
    while pos[0] < T:
        # Alg. 2 exploration: round ℓ of WS-W
        if not _ws_round(P, T, tab, grid, cum, out, pos, rng, C, free, state):
            break
        # Alg. 2 exploitation: duel (k, k) ⌊β^ℓ⌋ times, k = argmax C = the round winner; C unchanged
        k = state[1]
        n = exploit_length(beta, state[0] - 1, T - pos[0])
        record(tab, grid, cum, out, pos, k, k, n)
    return out, 0, pos[0]


@njit(cache=True, nogil=True)
def _ws_w_trace(P, T, rng):
    K = P.shape[0]
    C = np.zeros(K, np.int64)
    hist = np.empty((T, K), np.int64)
    pairs = np.empty((T, 2), np.int64)
    ends = np.empty(T, np.int64)
    n_ends = 0
    ell = 1
    pi = -1
    pj = -1
    for t in range(T):
        # Alg. 1 lines: choose i_t, then j_t, with the tie rules
        i = pick_first(C, pi, pj, rng)
        j = pick_second(C, i, pi, pj, rng)
        w = duel_winner(P, i, j, rng)
        C[w] += 1
        C[i + j - w] -= 1
        hist[t] = C
        pairs[t, 0] = i
        pairs[t, 1] = j
        # paper §4: round ℓ has ended when one arm has (N−1)ℓ and all others −ℓ
        top = 0
        low = 0
        for k in range(K):
            if C[k] == (K - 1) * ell:
                top += 1
            elif C[k] == -ell:
                low += 1
        if top == 1 and low == K - 1:
            ends[n_ends] = t + 1
            n_ends += 1
            ell += 1
        pi = i
        pj = j
    return hist, pairs, ends[:n_ends].copy()


class WSTrace(NamedTuple):
    C: np.ndarray  # (T, K) int64: C(t, i) after step t = 1..T (row t−1)
    pairs: np.ndarray  # (T, 2) int64: (i_t, j_t)
    round_ends: np.ndarray  # steps t at which rounds ℓ = 1, 2, ... end


def ws_w_trace(P, T: int, rng: np.random.Generator) -> WSTrace:
    """Literal Alg. 1 with per-step C(t, ·), for the rounds figure (C(t, i) over t with round ends).

    Memory is T·K integers; meant for short horizons (the figure), not for the regret runs.
    """
    P = np.ascontiguousarray(P, dtype=np.float64)
    if int(T) < 1:
        raise ReproError(f"ws_w_trace: T must be a positive integer, got {T}")
    return WSTrace(*_ws_w_trace(P, int(T), rng))


def run_w(instance, T, tab, grid, rng):
    return ws_w_kernel(instance.P, T, tab, grid, rng)


def run_s(instance, T, tab, grid, rng, *, beta):
    return ws_s_kernel(instance.P, T, tab, grid, rng, beta)


_CITATION = "Chen & Frazier, Dueling Bandits with Weak Regret, ICML 2017"

SPECS = {
    "ws-w": AlgorithmSpec(
        name="ws-w",
        ns_per_step=36,
        colour="#d62728", label="WS-W", problem="duel", citation=_CITATION + " (Algorithm 1)", run=run_w,
    ),
    "ws-s": AlgorithmSpec(
        name="ws-s",
        ns_per_step=4,
        colour="#d62728", label="WS-S", problem="duel", citation=_CITATION + " (Algorithm 2)", run=run_s,
        params=(Param("beta", "float", 1.1, "exploitation growth β > 1: round ℓ exploits ⌊β^ℓ⌋ duels",
                      low=1.0, low_open=True, high=1e3),),
    ),
}
