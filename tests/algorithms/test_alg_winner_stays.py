"""Winner Stays (WS-W, WS-S): tie rules, the round structure, the fast kernels against the literal
Alg. 1, WS-S's exploitation lengths, and weak/strong regret behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.algorithms.winner_stays import (
    exploit_length,
    pick_first,
    pick_second,
    ws_s_kernel,
    ws_w_kernel,
    ws_w_trace,
)
from banditrepro.instances import PreferenceMatrix
from tests.helpers import played_pairs


def utility_matrix(u):
    u = np.asarray(u, dtype=float)
    return (1.0 + u[:, None] - u[None, :]) / 2.0


# A total order in which the better arm always wins: every random choice is a tie break.
DETERMINISTIC5 = np.triu(np.ones((5, 5)), 1) + np.eye(5) * 0.5


# ------------------------------------------------------------------------------------ tie rules
def test_first_arm_prefers_previous_pair_then_uniform():
    rng = np.random.default_rng(0)
    C = np.array([1, 1, 0, -1], np.int64)
    assert pick_first(C, 1, 0, rng) == 1  # i_{t-1} among the maximisers
    assert pick_first(C, 0, 1, rng) == 0
    assert pick_first(C, 3, 1, rng) == 1  # i_{t-1} not a maximiser -> j_{t-1}
    assert pick_first(np.array([0, 2, 2, -1], np.int64), 0, 2, rng) == 2
    assert pick_first(np.array([5, 0, 0, -1], np.int64), 1, 2, rng) == 0  # unique max wins
    # neither previous arm is a maximiser -> uniform over the maximisers {1, 3}
    C = np.array([0, 3, -2, 3], np.int64)
    draws = np.array([pick_first(C, 0, 2, rng) for _ in range(2000)])
    assert set(draws) == {1, 3}
    assert 0.44 < np.mean(draws == 1) < 0.56


def test_second_arm_excludes_first_and_prefers_previous_pair():
    rng = np.random.default_rng(1)
    # the other member of the previous pair ties with unplayed arms at -(ℓ-1): it is kept
    C = np.array([6, -1, -1, -1, -2], np.int64)
    assert pick_second(C, 0, 0, 2, rng) == 2
    assert pick_second(C, 0, 3, 0, rng) == 3
    # previous pair already below the maximum -> uniform over the maximisers {1, 2, 3}
    draws = np.array([pick_second(C, 0, 0, 4, rng) for _ in range(3000)])
    assert set(draws) == {1, 2, 3}
    assert all(abs(np.mean(draws == k) - 1 / 3) < 0.04 for k in (1, 2, 3))
    # t = 1: all zero, no previous pair -> uniform over the arms other than i_t, never i_t
    Z = np.zeros(4, np.int64)
    draws = np.array([pick_second(Z, 2, -1, -1, rng) for _ in range(3000)])
    assert set(draws) == {0, 1, 3}
    # the argmax is taken over j != i_t even when i_t holds the global maximum
    assert pick_second(np.array([9, 4, 7, 7], np.int64), 0, 1, 3, rng) == 3


def test_first_pull_is_a_uniform_distinct_pair():
    counts = np.zeros((4, 4))
    rng = np.random.default_rng(2)
    Z = np.zeros(4, np.int64)
    for _ in range(6000):
        i = pick_first(Z, -1, -1, rng)
        j = pick_second(Z, i, -1, -1, rng)
        counts[i, j] += 1
    assert np.all(np.diag(counts) == 0)
    off = counts[~np.eye(4, dtype=bool)] / 6000
    assert np.all(np.abs(off - 1 / 12) < 0.02)


# ------------------------------------------------------------------------------ round structure
def test_made_up_run_with_deterministic_duels():
    """Better arm always wins: arm 0 wins round 1 and every later round takes exactly N−1 = 4 duels."""
    for seed in range(5):
        tr = ws_w_trace(DETERMINISTIC5, 200, np.random.default_rng(seed))
        ends = tr.round_ends
        assert len(ends) >= 30
        assert np.all(np.diff(ends) == 4)
        for ell, t in enumerate(ends, start=1):
            assert tr.C[t - 1].tolist() == [4 * ell] + [-ell] * 4
        # after round 1 the best arm is in every duel: no weak regret
        assert np.all((tr.pairs[ends[0]:] == 0).any(axis=1))
        # round 1: every arm is dueled, and an iteration with a better incumbent lasts one duel
        assert set(tr.pairs[:ends[0]].ravel()) == set(range(5))


def test_round_ends_of_a_real_run_on_mslr5(mslr5):
    """At the first time any arm reaches (N−1)ℓ, it is the round winner and all others sit at −ℓ."""
    K = 5
    T = 20000
    for seed in (0, 1):
        tr = ws_w_trace(mslr5.P, T, np.random.default_rng(seed))
        assert np.all(tr.C.sum(axis=1) == 0)  # one win and one loss per duel
        top = tr.C.max(axis=1)
        ell = 1
        found = []
        while True:
            hit = np.flatnonzero(top >= (K - 1) * ell)
            if hit.size == 0:
                break
            t = hit[0]
            assert top[t] == (K - 1) * ell
            assert sorted(tr.C[t].tolist()) == [-ell] * (K - 1) + [(K - 1) * ell]
            found.append(t + 1)
            ell += 1
        assert len(found) > 100
        np.testing.assert_array_equal(found, tr.round_ends)
        # every duel pairs two distinct arms, and within a round no arm goes below −ℓ
        assert np.all(tr.pairs[:, 0] != tr.pairs[:, 1])
        starts = np.concatenate([[0], tr.round_ends[:-1]])
        for ell, (s, e) in enumerate(zip(starts, tr.round_ends), start=1):
            assert tr.C[s:e].min() >= -ell


# -------------------------------------------------------------- fast kernels vs the literal Alg. 1
@pytest.mark.parametrize("which", ["mslr5", "util8"])
def test_ws_w_kernel_duels_exactly_as_literal_alg1(mslr5, which):
    P = mslr5.P if which == "mslr5" else utility_matrix(np.linspace(1, 0, 8))
    T = 4000
    for seed in (3, 4):
        played = played_pairs(ws_w_kernel, P, T, seed)
        tr = ws_w_trace(P, T, np.random.default_rng(seed))
        # the same unordered pair at every step (the kernel may record a duel as (i, j) or (j, i))
        np.testing.assert_array_equal(np.sort(played, axis=1), np.sort(np.asarray(tr.pairs), axis=1))


def test_ws_s_explores_with_ws_w_and_exploits_floor_beta_power(mslr5):
    """WS-S = WS-W's duels (state never reset, no update while exploiting) interleaved with runs of
    (k, k) of lengths ⌊β^ℓ⌋, k the winner of round ℓ."""
    T = 30000
    for beta in (1.1, 1.5, 2.0):
        played = np.sort(played_pairs(ws_s_kernel, mslr5.P, T, 7, beta), axis=1)  # unordered: i <= j
        is_self = played[:, 0] == played[:, 1]
        explore = [(int(i), int(j)) for i, j in played[~is_self]]
        tr = ws_w_trace(mslr5.P, len(explore), np.random.default_rng(7))
        assert [(min(i, j), max(i, j)) for i, j in tr.pairs] == explore
        # runs of self-duels: lengths ⌊β^ℓ⌋, the arm = winner of round ℓ of the exploration
        edges = np.flatnonzero(np.diff(np.concatenate([[0], is_self.astype(int), [0]])))
        starts, stops = edges[::2], edges[1::2]
        lengths = stops - starts
        assert len(lengths) >= 10
        for ell, n in enumerate(lengths[:-1], start=1):
            assert n == math.floor(beta ** ell)
        assert lengths[-1] <= math.floor(beta ** len(lengths))
        n_explore_before = np.cumsum(~is_self)[starts - 1]
        for ell, (s, n_before) in enumerate(zip(starts, n_explore_before), start=1):
            assert n_before == tr.round_ends[ell - 1]  # exploitation starts right after round ℓ
            winner = int(np.argmax(tr.C[tr.round_ends[ell - 1] - 1]))
            assert played[s, 0] == winner


def test_exploit_length_helper():
    for beta in (1.05, 1.1, 1.5, 2.0):
        for ell in range(1, 60):
            assert exploit_length(beta, ell, 10**9) == min(10**9, math.floor(beta ** ell))
    assert exploit_length(1.1, 5, 1) == 1
    assert exploit_length(1.1, 5, 0) == 0
    assert exploit_length(2.0, 10**6, 12345) == 12345  # no overflow


# ------------------------------------------------------------------------------- regret behaviour
def test_ws_w_weak_regret_is_flat_on_an_easy_instance(simulate):
    inst = PreferenceMatrix(utility_matrix(np.linspace(1, 0, 10)), name="util10-linear")
    T = 100_000
    finals, tenths, strong = [], [], []
    for run in range(4):
        res = simulate("ws-w", inst, T, run=run)
        weak = res.curves["weak_regret_binary"]
        finals.append(weak[-1])
        tenths.append(weak[np.searchsorted(res.grid, T // 10)])
        strong.append(res.curves["strong_regret_binary"][-1])
    # bounded: no weak regret after the first tenth of the horizon, and little before
    assert np.mean(finals) - np.mean(tenths) <= 1.0
    assert np.mean(finals) < 500
    # WS-W never duels an arm against itself, so its binary strong regret is linear
    assert min(strong) == T


def test_ws_s_strong_regret_is_sublinear(simulate, mslr5):
    T = 100_000
    res = simulate("ws-s", mslr5, T)
    strong = res.curves["strong_regret_binary"]
    half = strong[np.searchsorted(res.grid, T // 2)]
    assert strong[-1] < 0.05 * T
    assert strong[-1] - half < 0.5 * half  # most strong regret is paid early


@pytest.mark.parametrize("name", ["ws-w", "ws-s"])
def test_exact_steps_determinism_and_invariants(simulate, six_rankers, name):
    T = 12_345
    a = simulate(name, six_rankers, T, run=0)
    b = simulate(name, six_rankers, T, run=0)
    c = simulate(name, six_rankers, T, run=1)
    assert a.grid[-1] == T
    for m, curve in a.curves.items():
        np.testing.assert_array_equal(curve, b.curves[m])
        assert np.all(np.diff(curve) >= -1e-12)
    assert any(not np.array_equal(a.curves[m], c.curves[m]) for m in a.curves)
    gap_max = six_rankers.gaps.max()
    assert a.curves["regret"][-1] <= T * gap_max + 1e-9


def test_parameter_bounds_and_trace_arguments(simulate, mslr5):
    with pytest.raises(ReproError, match="beta"):
        simulate("ws-s", mslr5, 100, beta=1.0)
    with pytest.raises(ReproError):
        ws_w_trace(mslr5.P, 0, np.random.default_rng(0))
