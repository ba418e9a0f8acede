"""BTM — Beat-the-Mean Bandit, online version (Yue & Joachims, ICML 2011).

Semantics of docs/decisions.md#c2b-baselines (Komiyama's ``policy_btm.hpp``): δ = 1/(2TK) and the library's "tight"
confidence radius c* = γ²·sqrt(log(1/δ)/n*) (the paper has a factor 3 in front), γ = 1.3 as in the C2B
experiments. The active set is kept as a sorted index list; P̂_b = w_b/n_b is cached and changes only
for the arm that just played (and for all arms after an elimination), so a step costs O(|W|).
Once one arm is left the remaining steps are recorded at once as (b, b).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True)
def scan_active(n, ph, act, nact):
    """One pass over W: (slot of b = argmin n_b with ties to the lowest index, n* = min n, min P̂, max P̂).

    ``act`` is sorted, so the first minimum is the lowest index."""
    slot = 0
    nstar = n[act[0]]
    pmin = ph[act[0]]
    pmax = pmin
    for k in range(1, nact):
        i = act[k]
        if n[i] < nstar:
            nstar = n[i]
            slot = k
        p = ph[i]
        if p < pmin:
            pmin = p
        elif p > pmax:
            pmax = p
    return slot, nstar, pmin, pmax


@njit(cache=True, nogil=True)
def draw_opponent(act, nact, slot, rng):
    """b' ~ Unif(W \\ {b}), b = act[slot]."""
    k = rng.integers(0, nact - 1)
    if k >= slot:
        k += 1
    return act[k]


@njit(cache=True, nogil=True)
def confidence(nstar, g2, log_inv_delta):
    """c* = γ²·sqrt(log(1/δ)/n*); 1 while some active arm has n = 0 (library)."""
    if nstar == 0:
        return 1.0
    return g2 * math.sqrt(log_inv_delta / nstar)


@njit(cache=True, nogil=True)
def worst_arm(ph, act, nact, pmin, rng):
    """The arm to remove: argmin P̂ over W, ties uniformly at random."""
    worst = -1
    ties = 0
    for k in range(nact):
        i = act[k]
        if ph[i] == pmin:
            ties += 1
            if rng.integers(0, ties) == 0:
                worst = i
    return worst


@njit(cache=True, nogil=True)
def remove_arm(act, nact, x, n, w, ph, cnt, win):
    """Drop x from W and forget every comparison against it (n_i −= N(i vs x), w_i −= W(i over x))."""
    k = 0
    for m in range(nact):
        if act[m] != x:
            act[k] = act[m]
            k += 1
    for m in range(k):
        i = act[m]
        n[i] -= cnt[i, x]
        w[i] -= win[i, x]
        ph[i] = w[i] / n[i] if n[i] > 0 else 0.5
    return k


@njit(cache=True, nogil=True)
def btm_kernel(P, T, tab, grid, rng, gamma):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    act = np.arange(K)  # the working set W, sorted
    nact = K
    n = np.zeros(K, np.int64)  # n_b: comparisons of b (as the played arm) against current W
    w = np.zeros(K, np.int64)  # w_b: wins among them
    ph = np.full(K, 0.5)  # P̂_b = w_b / n_b (1/2 while n_b = 0)
    cnt = np.zeros((K, K), np.int64)  # cnt[b, b']: comparisons of b against b'
    win = np.zeros((K, K), np.int64)  # win[b, b']: wins of b over b'
    g2 = gamma * gamma
    log_inv_delta = math.log(2.0 * T * K)  # δ = 1/(2TK)
    slot, nstar, pmin, pmax = scan_active(n, ph, act, nact)
    t = 0
    while t < T:
        if nact == 1:
            # A single arm left: exploit it for the remaining steps.
            record(tab, grid, cum, out, pos, act[0], act[0], T - t)
            break
        # BTM step: b = the least-compared arm of W (from the last scan); b' uniform from W \ {b}.
        b = act[slot]
        b2 = draw_opponent(act, nact, slot, rng)
        record(tab, grid, cum, out, pos, b, b2, 1)
        t += 1
        # BTM update: b's comparison counts and wins.
        n[b] += 1
        cnt[b, b2] += 1
        if rng.random() < P[b, b2]:
            w[b] += 1
            win[b, b2] += 1
        ph[b] = w[b] / n[b]
        # BTM elimination: if the worst arm is confidently below the best, remove it and its comparisons.
        slot, nstar, pmin, pmax = scan_active(n, ph, act, nact)
        c = confidence(nstar, g2, log_inv_delta)
        if pmin + c < pmax - c:
            x = worst_arm(ph, act, nact, pmin, rng)
            nact = remove_arm(act, nact, x, n, w, ph, cnt, win)
            slot, nstar, pmin, pmax = scan_active(n, ph, act, nact)
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, gamma):
    return btm_kernel(instance.P, T, tab, grid, rng, gamma)


SPECS = {
    "btm": AlgorithmSpec(
        name="btm",
        ns_per_step=128,
        colour="#9467bd",
        label="BTM",
        problem="duel",
        citation="Yue & Joachims, Beat the Mean Bandit, ICML 2011",
        run=run,
        params=(Param("gamma", "float", 1.3,
                      "relaxed stochastic transitivity γ (>= 1) in c* = γ²·sqrt(log(1/δ)/n*)", low=1.0),),
    )
}
