"""RMED1 / RMED2: the per-step decisions on hand-made states, the incremental statistics, whole runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.algorithms import get
from banditrepro.algorithms.rmed import (
    advance_loop,
    argmin_first,
    kl_half,
    most_losing,
    next_deficient,
    rmed1_opponent,
    rmed2_opponent,
    rmed_kernel,
    smallest_regret_arm,
    update_pair,
)
from tests.helpers import played_pairs


def trace(P, T, seed, mode, kweight=0.3, alpha=3.0):
    return played_pairs(rmed_kernel, P, T, seed, mode, kweight, alpha)


def brute_I(W, N):
    """I_i = Σ_{j: μ̂_ij < 1/2} N_ij KL(μ̂_ij, 1/2), straight from the definition."""
    K = W.shape[0]
    I = np.zeros(K)
    for i in range(K):
        for j in range(K):
            if i != j and N[i, j] > 0:
                p = W[i, j] / N[i, j]
                if p < 0.5:
                    kl = (p * math.log(p / 0.5) if p > 0 else 0.0) + (1 - p) * math.log((1 - p) / 0.5)
                    I[i] += N[i, j] * kl
    return I


def state(K):
    return (np.zeros((K, K)), np.zeros((K, K)), np.full((K, K), 0.5), np.zeros((K, K)), np.zeros((K, K)),
            np.zeros(K))


# ---------------------------------------------------------------- statistics


def test_kl_half():
    assert kl_half(0.5) == 0.0
    assert kl_half(0.0) == pytest.approx(math.log(2))
    assert kl_half(1.0) == pytest.approx(math.log(2))
    p = 0.3
    assert kl_half(p) == pytest.approx(p * math.log(p / 0.5) + (1 - p) * math.log((1 - p) / 0.5))
    assert kl_half(0.2) == pytest.approx(kl_half(0.8))


def test_incremental_divergence_matches_definition():
    """I_i updated from the two dueled rows only equals the full O(K²) sum after every duel."""
    rng = np.random.default_rng(0)
    K = 6
    W, N, ph, kl, C, I = state(K)
    for step in range(3000):
        a, b = rng.choice(K, size=2, replace=False)
        update_pair(W, N, ph, kl, C, I, a, b, rng.random() < 0.3 + 0.1 * (a > b))
        if step % 97 == 0 or step == 2999:
            np.testing.assert_allclose(I, brute_I(W, N), rtol=1e-12, atol=1e-12)
    mask = N > 0
    np.testing.assert_array_equal(ph[mask], (W / np.where(mask, N, 1))[mask])
    assert np.all(np.diag(ph) == 0.5)
    np.testing.assert_allclose(kl, kl.T)
    assert np.all(W + W.T == N)


def test_divergence_counts_only_losing_pairs():
    K = 3
    W, N, ph, kl, C, I = state(K)
    for won in (True, True, False):  # arm 0 beats arm 1 twice out of three
        update_pair(W, N, ph, kl, C, I, 0, 1, won)
    assert I[0] == 0.0  # μ̂_01 = 2/3 >= 1/2: no evidence against arm 0
    assert I[1] == pytest.approx(3 * kl_half(1 / 3))
    assert I[2] == 0.0
    update_pair(W, N, ph, kl, C, I, 2, 1, True)  # 1/1 for arm 2
    assert I[1] == pytest.approx(3 * kl_half(1 / 3) + math.log(2))


def test_argmin_ties_to_lowest_index():
    assert argmin_first(np.array([3.0, 0.0, 1.0, 0.0])) == 1
    assert argmin_first(np.array([0.0, 0.0])) == 0
    assert argmin_first(np.array([2.0, 1.0, 0.5])) == 2


# ---------------------------------------------------------------- exploration


def pairs_of(K):
    pi = np.array([i for i in range(K) for j in range(i + 1, K)], np.int64)
    pj = np.array([j for i in range(K) for j in range(i + 1, K)], np.int64)
    return pi, pj


def test_next_deficient_pair_is_lexicographic():
    K = 4
    pi, pj = pairs_of(K)
    N = np.ones((K, K))
    N[1, 3] = N[3, 1] = 0
    N[2, 3] = N[3, 2] = 0
    c = next_deficient(N, pi, pj, 0, 1)
    assert (pi[c], pj[c]) == (1, 3)
    N[1, 3] = N[3, 1] = 1
    c = next_deficient(N, pi, pj, c, 1)
    assert (pi[c], pj[c]) == (2, 3)
    N[2, 3] = N[3, 2] = 1
    assert next_deficient(N, pi, pj, c, 1) == len(pi)  # none left
    assert next_deficient(N, pi, pj, 0, 2) == 0  # a higher level starts over at (0, 1)


def test_rmed1_initial_phase_is_every_pair_once_in_order(six_rankers):
    K = six_rankers.n_arms
    n0 = K * (K - 1) // 2
    pairs = trace(six_rankers.P, n0 + 1, 1, 1)
    expected = [(i, j) for i in range(K) for j in range(i + 1, K)]
    assert [tuple(p) for p in pairs[:n0]] == expected
    assert pairs[n0, 0] == 0  # main phase: l(t) = first arm of L_C = [K]


def test_rmed2_keeps_every_pair_explored(mslr5):
    """RMED2: by the end every pair has N_ij >= α log log T, and exploitation still dominates."""
    K = mslr5.n_arms
    T = 3000
    for alpha in (3.0, 1.0):
        pairs = trace(mslr5.P, T, 2, 2, alpha=alpha)
        N = np.zeros((K, K))
        for i, j in pairs:
            if i != j:
                N[i, j] += 1
                N[j, i] += 1
        off = ~np.eye(K, dtype=bool)
        need = math.ceil(alpha * math.log(math.log(T) + 0.01))
        assert N[off].min() >= need
        # exploration is not all there is: late duels nearly all involve the Condorcet winner 0
        late = pairs[T // 2:]
        assert np.mean((late[:, 0] == 0) | (late[:, 1] == 0)) > (0.9 if alpha == 3.0 else 0.7)


# ---------------------------------------------------------------- opponent choice


def test_rmed1_opponent():
    ph = np.array([[0.5, 0.7, 0.4, 0.3],
                   [0.3, 0.5, 0.5, 0.500005],
                   [0.6, 0.5, 0.5, 0.3],
                   [0.7, 0.499995, 0.7, 0.5]])
    # î* in O_l: play î* even though arm 3 beats l more
    assert rmed1_opponent(ph, 0, 2) == 2
    # î* = 1 not in O_0 (μ̂_01 = 0.7): the arm of O_0 beating 0 most
    assert rmed1_opponent(ph, 0, 1) == 3
    # ties in μ̂_lj go to the last index; 0.500005 <= 0.50001 counts as an opponent
    assert most_losing(ph, 1) == 0
    assert rmed1_opponent(ph, 1, 3) == 3
    ph2 = np.array([[0.5, 0.6, 0.6], [0.4, 0.5, 0.4], [0.4, 0.6, 0.5]])
    assert most_losing(ph2, 1) == 2  # μ̂_10 = μ̂_12 = 0.4 tie: last
    # O_l empty: î* (here l itself: a self-duel)
    assert most_losing(ph2, 0) == -1
    assert rmed1_opponent(ph2, 0, 0) == 0


def test_rmed2_opponent():
    K = 4
    ph = np.full((K, K), 0.5)
    kl = np.zeros((K, K))
    N = np.full((K, K), 10.0)

    def set_p(i, j, p):
        ph[i, j], ph[j, i] = p, 1 - p
        kl[i, j] = kl[j, i] = kl_half(p)

    set_p(0, 1, 0.5)
    set_p(0, 2, 0.6)
    set_p(0, 3, 0.55)
    set_p(3, 1, 0.1)  # arm 3 is beaten by 0, 1 and 2, most clearly by 1
    set_p(3, 2, 0.4)
    set_p(1, 2, 0.55)
    # b*(3) = argmin max(μ̂_03 + μ̂_0j − 1, 0.01)/KL(μ̂_3j, 1/2) over all j with μ̂_3j < 1/2 (î* included)
    v = {j: max(ph[0, 3] + ph[0, j] - 1, 0.01) / kl[3, j] for j in range(K) if ph[3, j] < 0.5}
    assert sorted(v) == [0, 1, 2]
    bs = min(v, key=v.get)
    assert bs == 1
    assert smallest_regret_arm(ph, kl, 3, 0) == bs
    # î* = 0 is in O_3; (3, 0) drawn rarely relative to (3, b*): N_30 <= N_31 / log log t, play î*
    N[3, 0] = N[0, 3] = 4.0
    assert rmed2_opponent(ph, kl, N, 3, 0, 2.0) == 0
    # (3, 0) drawn often enough: play b*
    N[3, 0] = N[0, 3] = 6.0
    assert rmed2_opponent(ph, kl, N, 3, 0, 2.0) == 1
    # î* outside O_l: b* (always in O_l when it differs from î*, as μ̂_lb* < 1/2)
    ph[2, 0], ph[0, 2] = 0.7, 0.3  # î* = 0 no longer beats l = 2
    kl[2, 0] = kl[0, 2] = kl_half(0.7)
    # l = 2: μ̂_2j < 1/2 only for j = 1 (0.45): b*(2) = 1 is in O_2
    assert smallest_regret_arm(ph, kl, 2, 0) == 1
    assert rmed2_opponent(ph, kl, N, 2, 0, 2.0) == 1
    # nothing beats l = 1 empirically, so b*(1) falls back to î* (here î* = 3)
    ph[1, 0] = ph[0, 1] = 0.5
    assert smallest_regret_arm(ph, kl, 1, 3) == 3  # no j with μ̂_1j < 1/2
    # î* = 3 not in O_1 (μ̂_13 = 0.9): the arm of O_1 beating 1 most, the only one: 0 (μ̂_10 = 0.5)
    assert rmed2_opponent(ph, kl, N, 1, 3, 2.0) == 0
    # no arm beats l = î* = 0 empirically and O_0 is empty: b* = î* and m = î* (a self-duel)
    ph0 = np.array([[0.5, 0.6, 0.7], [0.4, 0.5, 0.5], [0.3, 0.5, 0.5]])
    kl0 = np.vectorize(kl_half)(ph0)
    assert smallest_regret_arm(ph0, kl0, 0, 0) == 0
    assert rmed2_opponent(ph0, kl0, np.ones((3, 3)), 0, 0, 2.0) == 0


# ---------------------------------------------------------------- loop sets


def test_advance_loop():
    K = 4
    I = np.array([0.0, 5.0, 20.0, 1.0])
    Lc = np.array([True, True, False, False])
    Lrc = ~Lc
    Ln = np.zeros(K, bool)
    # duel of l = 0; threshold log t + f(K) = 6: arms 0 (now in L_R^c) and 3 qualify, 2 does not;
    # 1 is still in L_R
    nlc = advance_loop(I, 0, 0, Lc, Lrc, Ln, 2, 6.0)
    assert nlc == 1
    assert Lc.tolist() == [False, True, False, False]
    assert Ln.tolist() == [True, False, False, True]
    # duel of l = 1 empties L_C: the next loop is L_N ∪ {1} (I_1 − I* = 5 <= 6)
    nlc = advance_loop(I, 0, 1, Lc, Lrc, Ln, nlc, 6.0)
    assert nlc == 3
    assert Lc.tolist() == [True, True, False, True]
    assert Lrc.tolist() == [False, False, True, False]
    assert not Ln.any()
    # a loop never ends empty: î* always qualifies
    I2 = np.array([0.0, 50.0])
    Lc2, Lrc2, Ln2 = np.array([True, False]), np.array([False, True]), np.zeros(2, bool)
    assert advance_loop(I2, 0, 0, Lc2, Lrc2, Ln2, 1, 1.0) == 1
    assert Lc2.tolist() == [True, False]


# ---------------------------------------------------------------- whole runs


@pytest.mark.parametrize("alg", ["rmed1", "rmed2"])
def test_regret_invariants_and_determinism(simulate, six_rankers, alg):
    T = 20_000
    r = simulate(alg, six_rankers, T)
    for name, curve in r.curves.items():
        assert np.all(np.diff(curve) >= -1e-12), name
    assert r.curves["regret"][-1] <= T * six_rankers.gaps.max() + 1e-9
    assert r.grid[-1] == T
    again = simulate(alg, six_rankers, T)
    other = simulate(alg, six_rankers, T, run=1)
    assert np.array_equal(r.curves["regret"], again.curves["regret"])
    assert not np.array_equal(r.curves["regret"], other.curves["regret"])


@pytest.mark.parametrize("mode", [1, 2])
def test_finds_condorcet_winner(easy3, mode):
    T = 20_000
    pairs = trace(easy3.P, T, 3, mode)
    late = pairs[T // 2:]
    assert np.mean((late[:, 0] == 0) & (late[:, 1] == 0)) > 0.95


@pytest.mark.parametrize("alg", ["rmed1", "rmed2"])
def test_sublinear_regret(simulate, mslr5, alg):
    T = 50_000
    r = simulate(alg, mslr5, T)
    g, R = r.grid, r.curves["regret"]
    mid = np.searchsorted(g, T // 2)
    assert R[-1] - R[mid] < 0.5 * R[mid]
    assert R[-1] < 0.1 * T * mslr5.gaps.mean()


def test_larger_kweight_explores_more(simulate, six_rankers):
    """f(K) widens the candidate set: a much larger kweight keeps more arms in play (more regret)."""
    T = 20_000
    base = np.mean([simulate("rmed1", six_rankers, T, run=r).curves["regret"][-1] for r in range(3)])
    wide = np.mean([simulate("rmed1", six_rankers, T, run=r, kweight=5.0).curves["regret"][-1]
                    for r in range(3)])
    assert wide > 1.5 * base


def test_parameters_are_validated():
    assert get("rmed1").label == "RMED1" and get("rmed2").label == "RMED2"
    assert get("rmed1").defaults == {"kweight": 0.3}
    assert get("rmed2").defaults == {"kweight": 0.3, "alpha": 3.0}
    with pytest.raises(ReproError, match="kweight"):
        get("rmed1").resolve({"kweight": -0.1})
    with pytest.raises(ReproError, match="alpha"):
        get("rmed2").resolve({"alpha": 0})
    with pytest.raises(ReproError, match="unknown parameter"):
        get("rmed1").resolve({"alpha": 3})


# ---------------------------------------------------------------- against a literal, non-incremental reference


def reference_rmed(P, T, seed, mode, kweight=0.3, alpha=3.0):
    """docs/decisions.md#c2b-baselines RMED step by step, recomputing every statistic from the win counts (O(K²) per
    step)."""
    rng = np.random.default_rng(seed)
    K = P.shape[0]
    W = np.zeros((K, K))
    Lc, Lrc, Ln = set(range(K)), set(), set()
    f = kweight * K**1.01

    def mu(i, j):
        n = W[i, j] + W[j, i]
        return 0.5 if i == j or n == 0 else W[i, j] / n

    def kl(p):  # KL(p, 1/2), 0 log 0 = 0
        return (p * math.log(2 * p) if p > 0 else 0.0) + ((1 - p) * math.log(2 * (1 - p)) if p < 1 else 0.0)

    def divergences():
        I = np.zeros(K)
        for i in range(K):
            for j in range(K):
                if mu(i, j) < 0.5:
                    I[i] += (W[i, j] + W[j, i]) * kl(mu(i, j))
        return I

    def most_losing_ref(l, O):
        return max(O, key=lambda j: (-mu(l, j), j))  # smallest μ̂_lj, ties to the last index

    pairs = []
    for t in range(1, T + 1):
        llt = math.log(math.log(t) + 0.01)
        N = W + W.T
        todo = [(i, j) for i in range(K) for j in range(i + 1, K)
                if (N[i, j] == 0 if mode == 1 else N[i, j] < alpha * llt)]
        if todo:
            a, b = todo[0]
        else:
            istar = int(np.argmin(divergences()))
            l = min(Lc)
            O = [j for j in range(K) if j != l and mu(l, j) <= 0.50001]
            if mode == 1:
                m = istar if istar in O else (most_losing_ref(l, O) if O else istar)
            else:
                cands = [j for j in range(K) if mu(l, j) < 0.5]
                v = {j: max(mu(istar, l) + mu(istar, j) - 1, 0.01) / kl(mu(l, j)) for j in cands}
                bs = min(cands, key=lambda j: (v[j], j)) if cands else istar
                if istar in O and N[l, istar] <= N[l, bs] / llt:
                    m = istar
                elif bs in O:
                    m = bs
                elif istar in O:
                    m = istar
                else:
                    m = most_losing_ref(l, O) if O else istar
            a, b = l, m
        pairs.append((a, b))
        if a != b:
            if rng.random() < P[a, b]:
                W[a, b] += 1
            else:
                W[b, a] += 1
        if not todo:
            I = divergences()
            Lc.discard(a)
            Lrc.add(a)
            Ln |= {j for j in Lrc if I[j] - I.min() <= math.log(t) + f}
            if not Lc:
                Lc, Lrc, Ln = set(Ln), set(range(K)) - Ln, set()
    return np.array(pairs)


@pytest.mark.parametrize("mode", [1, 2])
def test_kernel_matches_literal_reference(mslr5, six_rankers, mode):
    """Same generator, same duels: the incremental kernel takes exactly the reference's decisions."""
    for inst, T, seed in ((mslr5, 2500, 11), (six_rankers, 2500, 12)):
        np.testing.assert_array_equal(trace(inst.P, T, seed, mode), reference_rmed(inst.P, T, seed, mode))
