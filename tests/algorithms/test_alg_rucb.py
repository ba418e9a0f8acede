"""RUCB: the per-step decisions on hand-made states, and whole runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.algorithms import get
from banditrepro.algorithms.rucb import _refresh_pair, choose_c, choose_d, row_max, rucb_kernel
from tests.helpers import played_pairs

trace = played_pairs


def freq(draw, n=4000, K=4):
    counts = np.zeros(K)
    for _ in range(n):
        counts[draw()] += 1
    return counts / n


# ---------------------------------------------------------------- thresholds (the O(K) candidate test)


def test_threshold_equals_direct_ucb_test():
    """U_cj = p̂ + sqrt(α ln t / N) >= 1/2  <=>  ln t >= thr[c, j] (the kernel's shortcut)."""
    rng = np.random.default_rng(0)
    alpha = 0.51
    for _ in range(200):
        K = 3
        W = np.zeros((K, K))
        N = np.zeros((K, K))
        n = rng.integers(1, 60)
        W[0, 1] = rng.integers(0, n + 1)
        W[1, 0] = n - W[0, 1]
        N[0, 1] = N[1, 0] = n
        thr = np.zeros((K, K))
        pT = np.ones((K, K))
        isqT = np.zeros((K, K))
        _refresh_pair(W, N, alpha, thr, pT, isqT, 0, 1)
        for x, y in ((0, 1), (1, 0)):
            p = W[x, y] / n
            assert pT[y, x] == p and isqT[y, x] == pytest.approx(1 / math.sqrt(n))
            for t in (1, 2, 10, 100, 10**4, 10**6):
                u = p + math.sqrt(alpha * math.log(t) / n)
                if abs(u - 0.5) > 1e-9:
                    assert (u >= 0.5) == (math.log(t) >= thr[x, y])
    thr = np.array([[0.0, 2.0, 7.0], [0.0, 0.0, 0.0], [3.0, 1.0, 0.0]])
    assert [row_max(thr, a) for a in range(3)] == [7.0, 0.0, 3.0]


# ---------------------------------------------------------------- steps 1-2: candidates and hypothesis


def test_candidates_without_hypothesis_are_uniform():
    rng = np.random.default_rng(1)
    cand = np.empty(4, np.int64)
    rowmax = np.array([0.0, 5.0, 0.5, 5.0])  # ln t = 1: C = {0, 2}
    hyps = set()

    def draw():
        c, h = choose_c(rowmax, 1.0, -1, cand, rng)
        hyps.add(h)
        return c

    f = freq(draw)
    assert f[1] == 0 and f[3] == 0
    assert abs(f[0] - 0.5) < 0.04 and abs(f[2] - 0.5) < 0.04
    assert hyps == {-1}


def test_single_candidate_becomes_hypothesis():
    cand = np.empty(3, np.int64)
    c, h = choose_c(np.array([5.0, 0.0, 5.0]), 1.0, -1, cand, np.random.default_rng(2))
    assert (c, h) == (1, 1)
    # a hypothesis outside C is replaced by the single candidate
    c, h = choose_c(np.array([5.0, 0.0, 5.0]), 1.0, 2, cand, np.random.default_rng(2))
    assert (c, h) == (1, 1)


def test_hypothesis_outside_candidates_is_reset():
    cand = np.empty(4, np.int64)
    rng = np.random.default_rng(3)
    rowmax = np.array([0.0, 5.0, 0.0, 0.0])  # C = {0, 2, 3}; B = {1} is not in C
    for _ in range(200):
        c, h = choose_c(rowmax, 1.0, 1, cand, rng)
        assert h == -1 and c in (0, 2, 3)


def test_hypothesis_played_half_the_time():
    """|B| = 1, B ⊂ C: c = the B arm w.p. 1/2, else uniform over C \\ B."""
    rng = np.random.default_rng(4)
    cand = np.empty(4, np.int64)
    rowmax = np.array([0.0, 0.0, 0.0, 9.0])  # C = {0, 1, 2}, B = {1}

    def draw():
        c, h = choose_c(rowmax, 1.0, 1, cand, rng)
        assert h == 1
        return c

    f = freq(draw, n=8000)
    assert f[3] == 0
    assert abs(f[1] - 0.5) < 0.03
    assert abs(f[0] - 0.25) < 0.03 and abs(f[2] - 0.25) < 0.03


def test_empty_candidate_set_draws_any_arm():
    rng = np.random.default_rng(5)
    cand = np.empty(4, np.int64)
    rowmax = np.full(4, 9.0)

    def draw():
        c, h = choose_c(rowmax, 1.0, 2, cand, rng)
        assert h == -1
        return c

    f = freq(draw)
    assert np.all(np.abs(f - 0.25) < 0.04)


# ---------------------------------------------------------------- step 3: the challenger


def test_challenger_is_the_largest_ucb_against_c():
    K = 4
    pT = np.array([[0.5, 0.3, 0.45, 0.2],
                   [0.6, 0.5, 0.1, 0.1],
                   [0.1, 0.1, 0.5, 0.1],
                   [0.1, 0.1, 0.1, 0.5]])
    isqT = np.full((K, K), 0.1)
    rng = np.random.default_rng(6)
    # row c holds p̂_jc over j: for c = 0, U_20 = 0.45 + 0.1 s is the largest for every s > 0.5
    assert choose_d(pT, isqT, 0, 1.0, rng) == 2
    # small bonus: every U_j0 < 1/2, so c itself (U_cc = 1/2) is the challenger
    assert choose_d(pT, isqT, 0, 0.1, rng) == 0
    assert choose_d(pT, isqT, 1, 0.5, rng) == 0


def test_challenger_ties_are_random():
    pT = np.array([[0.5, 1.0, 1.0], [1.0, 0.5, 1.0], [1.0, 1.0, 0.5]])  # never compared: U = 1
    isqT = np.zeros((3, 3))
    rng = np.random.default_rng(7)
    f = freq(lambda: choose_d(pT, isqT, 1, 2.0, rng), K=3)
    assert f[1] == 0 and abs(f[0] - 0.5) < 0.04 and abs(f[2] - 0.5) < 0.04


# ---------------------------------------------------------------- whole runs


def test_first_duels_are_between_distinct_arms(easy3):
    pairs = trace(rucb_kernel, easy3.P, 3, 8, 0.51)
    assert np.all(pairs[:, 0] != pairs[:, 1])  # U = 1 > U_cc = 1/2 for every unseen pair


def test_regret_invariants(simulate, six_rankers):
    T = 20_000
    r = simulate("rucb", six_rankers, T)
    gmax = six_rankers.gaps.max()
    for name, curve in r.curves.items():
        assert np.all(np.diff(curve) >= -1e-12), name
    assert r.curves["regret"][-1] <= T * gmax + 1e-9
    assert r.grid[-1] == T
    assert r.curves["strong_regret_binary"][-1] <= T


def test_finds_condorcet_winner(easy3):
    T = 20_000
    pairs = trace(rucb_kernel, easy3.P, T, 9, 0.51)
    late = pairs[T // 2:]
    assert np.mean((late[:, 0] == 0) & (late[:, 1] == 0)) > 0.95


def test_sublinear_regret(simulate, mslr5):
    T = 50_000
    r = simulate("rucb", mslr5, T)
    g, R = r.grid, r.curves["regret"]
    mid = np.searchsorted(g, T // 2)
    # the second half costs far less than the first (log-like growth, not linear)
    assert R[-1] - R[mid] < 0.5 * R[mid]
    # and the total is far below uniform play (mean regret per step = mean gap)
    assert R[-1] < 0.1 * T * mslr5.gaps.mean()


def test_alpha_must_be_positive():
    with pytest.raises(ReproError, match="alpha"):
        get("rucb").resolve({"alpha": 0})
    with pytest.raises(ReproError, match="alpha"):
        get("rucb").resolve({"alpha": -1})


# ---------------------------------------------------------------- against a literal reference


def reference_rucb(P, T, seed, alpha=0.51):
    """docs/decisions.md#c2b-baselines RUCB step by step from the full U matrix (random draws in the kernel's order)."""
    rng = np.random.default_rng(seed)
    K = P.shape[0]
    W = np.zeros((K, K))
    hyp = None
    pairs = []
    for t in range(1, T + 1):
        s = math.sqrt(alpha * math.log(t))
        U = np.ones((K, K))
        for i in range(K):
            for j in range(K):
                n = W[i, j] + W[j, i]
                if i == j:
                    U[i, j] = 0.5
                elif n > 0:
                    U[i, j] = W[i, j] / n + s * (1 / math.sqrt(n))
        C = [c for c in range(K) if all(U[c] >= 0.5)]
        if hyp not in C:
            hyp = None
        if not C:
            c = rng.integers(0, K)
        elif len(C) == 1:
            hyp = c = C[0]
        elif hyp is not None:
            if rng.random() < 0.5:
                c = hyp
            else:
                rest = [x for x in C if x != hyp]
                c = rest[rng.integers(0, len(rest))]
        else:
            c = C[rng.integers(0, len(C))]
        # d = argmax_j U_jc, ties by reservoir sampling in index order
        best, d, ties = -1.0, c, 0
        for j in range(K):
            if U[j, c] > best:
                best, d, ties = U[j, c], j, 1
            elif U[j, c] == best:
                ties += 1
                if rng.integers(0, ties) == 0:
                    d = j
        pairs.append((c, d))
        if c != d:
            if rng.random() < P[c, d]:
                W[c, d] += 1
            else:
                W[d, c] += 1
    return np.array(pairs)


def test_kernel_matches_literal_reference(mslr5, six_rankers, easy3):
    """Same generator, same duels: the kernel's threshold shortcut takes exactly the reference's decisions."""
    for inst, T, seed in ((mslr5, 3000, 31), (six_rankers, 3000, 32), (easy3, 3000, 33)):
        ref = reference_rucb(inst.P, T, seed)
        np.testing.assert_array_equal(trace(rucb_kernel, inst.P, T, seed, 0.51), ref)
    assert np.mean(np.all(ref[-500:] == 0, axis=1)) > 0.9  # easy3: the self-duel branch (d = c) is covered
