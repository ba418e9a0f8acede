"""Beat-the-Mean: the per-step decisions on hand-made states, and whole runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.algorithms import get
from banditrepro.algorithms.btm import btm_kernel, confidence, draw_opponent, remove_arm, scan_active, worst_arm
from tests.helpers import played_pairs


def trace(P, T, seed, gamma=1.3):
    return played_pairs(btm_kernel, P, T, seed, gamma)


# ---------------------------------------------------------------- hand-made states


def test_scan_active():
    n = np.array([5, 3, 9, 3, 1], np.int64)
    ph = np.array([0.2, 0.6, 0.4, 0.9, 0.0])
    act = np.array([0, 1, 2, 3, 4], np.int64)
    # arm 4 (n = 1) is not in W: b = the lowest-index arm among the n = 3 ties
    slot, nstar, pmin, pmax = scan_active(n, ph, act, 4)
    assert (act[slot], nstar, pmin, pmax) == (1, 3, 0.2, 0.9)
    act2 = np.array([2, 3, 4, 0, 0], np.int64)
    slot, nstar, pmin, pmax = scan_active(n, ph, act2, 3)
    assert (act2[slot], nstar, pmin, pmax) == (4, 1, 0.0, 0.9)


def test_opponent_is_uniform_over_the_others():
    act = np.array([0, 2, 5, 7], np.int64)
    rng = np.random.default_rng(0)
    draws = np.array([draw_opponent(act, 4, 1, rng) for _ in range(8000)])  # b = act[1] = 2
    assert set(draws.tolist()) == {0, 5, 7}
    for x in (0, 5, 7):
        assert abs(np.mean(draws == x) - 1 / 3) < 0.03


def test_confidence_radius():
    g2, lid = 1.3**2, math.log(2 * 10**5 * 6)
    assert confidence(0, g2, lid) == 1.0
    assert confidence(100, g2, lid) == pytest.approx(1.69 * math.sqrt(lid / 100))
    # the tight radius has no factor 3 (library), so it is below 1/2 from about 4·γ⁴·log(1/δ) comparisons on
    n_half = 4 * 1.3**4 * lid
    assert confidence(int(n_half) + 1, g2, lid) < 0.5 < confidence(int(n_half) - 1, g2, lid)


def test_worst_arm_ties_are_random():
    ph = np.array([0.3, 0.1, 0.5, 0.1])
    act = np.arange(4)
    rng = np.random.default_rng(1)
    picks = np.array([worst_arm(ph, act, 4, 0.1, rng) for _ in range(4000)])
    assert set(picks.tolist()) == {1, 3}
    assert abs(np.mean(picks == 1) - 0.5) < 0.04
    # outside W no tie: only arm 1 remains a minimiser
    assert worst_arm(ph, np.array([0, 1, 2, 3]), 3, 0.1, rng) == 1


def test_remove_arm_forgets_its_comparisons():
    K = 4
    cnt = np.zeros((K, K), np.int64)
    win = np.zeros((K, K), np.int64)
    cnt[0] = [0, 4, 6, 2]
    win[0] = [0, 3, 2, 2]
    cnt[1] = [5, 0, 0, 5]
    win[1] = [1, 0, 0, 5]
    cnt[2] = [2, 2, 0, 2]
    win[2] = [1, 1, 0, 0]
    n = cnt.sum(axis=1)
    w = win.sum(axis=1)
    ph = np.where(n > 0, w / np.maximum(n, 1), 0.5)
    act = np.arange(K)
    nact = remove_arm(act, K, 3, n, w, ph, cnt, win)
    assert nact == 3 and act[:3].tolist() == [0, 1, 2]
    assert n[:3].tolist() == [10, 5, 4] and w[:3].tolist() == [5, 1, 2]
    assert ph[:3].tolist() == [0.5, 0.2, 0.5]
    # an arm whose every comparison was against the removed one falls back to P̂ = 1/2
    nact = remove_arm(act, nact, 0, n, w, ph, cnt, win)
    assert act[:2].tolist() == [1, 2] and n[1] == 0 and ph[1] == 0.5


# ---------------------------------------------------------------- whole runs


def test_round_robin_before_any_elimination(six_rankers):
    """b = argmin n_b (lowest index): 0, 1, ..., K−1, 0, 1, ... while nothing can be eliminated."""
    K = six_rankers.n_arms
    T = 10_000
    pairs = trace(six_rankers.P, T, 2)
    # c* >= 1/2 until n* >= 4γ⁴ log(2TK): no elimination before that
    n_safe = int(4 * 1.3**4 * math.log(2 * T * K))
    head = pairs[: K * n_safe]
    assert np.array_equal(head[:, 0], np.tile(np.arange(K), n_safe))
    assert np.all(head[:, 0] != head[:, 1])
    # the opponent is uniform over the others
    opp = np.bincount(head[head[:, 0] == 0, 1], minlength=K)
    assert opp[0] == 0 and opp[1:].min() > 0.6 * n_safe / (K - 1)


def test_eliminates_down_to_the_condorcet_winner(easy3):
    T = 20_000
    pairs = trace(easy3.P, T, 3)
    # once one arm is left it is played against itself to the end
    last = np.flatnonzero(pairs[:, 0] != pairs[:, 1]).max()
    assert last < T // 2
    assert np.all(pairs[last + 1:] == 0)


def test_gamma_slows_elimination(easy3):
    """A larger γ widens c*, so the winner is isolated later."""
    T = 30_000

    def isolated(gamma):
        p = trace(easy3.P, T, 4, gamma)
        return np.flatnonzero(p[:, 0] != p[:, 1]).max()

    assert isolated(1.6) > 1.5 * isolated(1.0)


def test_regret_invariants_and_determinism(simulate, six_rankers):
    T = 20_000
    r = simulate("btm", six_rankers, T)
    for name, curve in r.curves.items():
        assert np.all(np.diff(curve) >= -1e-12), name
    assert r.curves["regret"][-1] <= T * six_rankers.gaps.max() + 1e-9
    assert r.grid[-1] == T
    again = simulate("btm", six_rankers, T)
    other = simulate("btm", six_rankers, T, run=1)
    assert np.array_equal(r.curves["regret"], again.curves["regret"])
    assert not np.array_equal(r.curves["regret"], other.curves["regret"])


def test_regret_flattens_once_the_winner_is_found(simulate, mslr5):
    T = 200_000
    r = simulate("btm", mslr5, T)
    g, R = r.grid, r.curves["regret"]
    mid = np.searchsorted(g, T // 2)
    assert R[-1] - R[mid] < 0.1 * R[mid]
    assert R[-1] < 0.2 * T * mslr5.gaps.mean()


def test_parameters_are_validated():
    spec = get("btm")
    assert spec.label == "BTM" and spec.defaults == {"gamma": 1.3}
    with pytest.raises(ReproError, match="gamma"):
        spec.resolve({"gamma": 0.9})


# ---------------------------------------------------------------- against a literal reference


def reference_btm(P, T, seed, gamma=1.3):
    """docs/decisions.md#c2b-baselines BTM step by step with Python sets and dictionaries (ties in min P̂ by the same
    reservoir draw)."""
    rng = np.random.default_rng(seed)
    K = P.shape[0]
    W = set(range(K))
    n = dict.fromkeys(range(K), 0)
    w = dict.fromkeys(range(K), 0)
    wins = np.zeros((K, K), int)
    losses = np.zeros((K, K), int)
    delta = 1 / (2 * T * K)
    pairs = []
    for _ in range(T):
        if len(W) == 1:
            (b,) = W
            pairs.append((b, b))
            continue
        b = min(sorted(W), key=lambda i: n[i])
        others = sorted(W - {b})
        b2 = others[rng.integers(0, len(others))]
        pairs.append((b, b2))
        n[b] += 1
        if rng.random() < P[b, b2]:
            w[b] += 1
            wins[b, b2] += 1
        else:
            losses[b, b2] += 1
        Phat = {i: w[i] / n[i] if n[i] else 0.5 for i in W}
        nstar = min(n[i] for i in W)
        c = 1.0 if nstar == 0 else gamma**2 * math.sqrt(math.log(1 / delta) / nstar)
        if min(Phat.values()) + c < max(Phat.values()) - c:
            worst, ties = -1, 0
            for i in sorted(W):
                if Phat[i] == min(Phat.values()):
                    ties += 1
                    if rng.integers(0, ties) == 0:
                        worst = i
            W.remove(worst)
            for i in W:
                n[i] -= wins[i, worst] + losses[i, worst]
                w[i] -= wins[i, worst]
    return np.array(pairs)


def test_kernel_matches_literal_reference(mslr5, easy3):
    for inst, T, seed in ((mslr5, 30_000, 21), (easy3, 3000, 22)):
        ref = reference_btm(inst.P, T, seed)
        assert len(np.unique(ref[-1000:])) < inst.n_arms  # the comparison covers eliminations
        np.testing.assert_array_equal(trace(inst.P, T, seed), ref)
    assert np.all(ref[-100:] == 0)  # easy3: down to the Condorcet winner
