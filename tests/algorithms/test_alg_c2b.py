"""C2B (Alg. 1) and C2B-KL (Alg. 2 / App. A): batch schedule, round structure, elimination, regret."""

from __future__ import annotations

import math

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.algorithms import get
from banditrepro.algorithms.c2b import (
    batch_base,
    batch_size,
    c2b_kernel,
    defeated_sets,
    hoeffding_eliminate,
    kl_eliminate,
    kl_index,
    literal_pairs,
    pick_candidate,
    resolve_batches,
    round_pairs,
)
from banditrepro.grid import regret_grid
from banditrepro.instances import PreferenceMatrix
from banditrepro.regret import regret_table

ALGS = ("c2b", "c2b-kl")


# ---------------------------------------------------------------- batch schedule (docs/decisions.md#c2b-batches
# numbers)
@pytest.mark.parametrize("T, offset, B, q", [
    (10**5, 0, 11, 2.848), (10**5, 6, 17, 1.968), (10**6, 0, 13, 2.894), (10**6, 6, 19, 2.069),
])
def test_known_B_and_q(T, offset, B, q):
    assert resolve_batches(T, None, offset) == B
    assert batch_base(T, B) == pytest.approx(q, abs=5e-4)
    qq = batch_base(T, B)
    assert batch_size(qq, 0) == 1
    assert batch_size(qq, 1) == math.floor(q)  # q_1 = 1 when q < 2
    assert T - 1 <= batch_size(qq, B) <= T  # q_B = ⌊T⌋ up to rounding


def test_B_resolution_and_bounds():
    assert resolve_batches(10**5, 7, 0) == 7
    assert resolve_batches(2, None, 0) == 1  # ⌊ln 2⌋ = 0 -> at least one batch
    with pytest.raises(ReproError, match="not both"):
        resolve_batches(10**5, 7, 6)
    with pytest.raises(ReproError, match="B must be >= 1"):
        get("c2b").resolve({"B": 0})
    with pytest.raises(ReproError, match="kweight"):
        get("c2b-kl").resolve({"kweight": -1})
    assert get("c2b-kl").defaults == {"B": None, "B_offset": 0, "kweight": 0.3, "pairs": "once", "B_log": "e"}
    assert get("c2b-kl").label == "C2B-KL" and not get("c2b-kl").reconstructed


# ---------------------------------------------------------------- one round on a hand-made state
def _state(K, entries, n=100):
    """W, N with N = n for the listed pairs (i, j, p̂_ij) and nothing else compared."""
    W = np.zeros((K, K))
    N = np.zeros((K, K))
    for i, j, p in entries:
        W[i, j], W[j, i] = p * n, (1 - p) * n
        N[i, j] = N[j, i] = n
    return W, N


def _round_start(W, N, act, a, rng=None):
    """Alg. 1 lines 5–6 on a hand-made state: defeated sets D, candidate i_r, empty pair buffers."""
    K = act.shape[0]
    D = np.zeros((K, K), np.bool_)
    defeated_sets(W, N, act, a, D)
    ir = pick_candidate(D, act, rng or np.random.default_rng(0))
    return D, ir, np.empty(K * K, np.int64), np.empty(K * K, np.int64)


def _schedule(W, N, act, a, rng=None):
    D, ir, pa, pb = _round_start(W, N, act, a, rng)
    m = round_pairs(D, act, ir, np.zeros(D.shape, np.bool_), pa, pb)
    return D, ir, list(zip(pa[:m].tolist(), pb[:m].tolist()))


def test_round_schedule_on_hand_state():
    K = 5
    a = 2 * math.log(2 * K * K * 1)  # c_ij = sqrt(a / 100) ≈ 0.28 at N = 100: defeat needs p̂ > 0.78
    W, N = _state(K, [(0, 1, 0.90), (0, 2, 0.85), (0, 3, 0.60), (3, 4, 0.95), (1, 2, 0.50), (2, 4, 0.77)])
    act = np.ones(K, np.bool_)
    D, ir, pairs = _schedule(W, N, act, a)
    # line 5: D(0) = {1, 2}, D(3) = {4}; 0.60 and 0.77 (≤ 1/2 + c) are not confident, N = 0 never is
    assert {(i, j) for i, j in zip(*np.nonzero(D))} == {(0, 1), (0, 2), (3, 4)}
    assert ir == 0  # line 6: |D(0)| = 2 is the unique maximum
    # lines 7-11: 1, 2 ∈ D(0) meet only the anchor 0; 3, 4 meet every active arm; {1, 2} is never
    # scheduled; duplicates ({3, 4} from both ends, {0, 3} ...) appear once; no self-pairs
    assert pairs == [(0, 1), (0, 2), (0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]

    act[4] = False  # eliminated arms are neither in D nor in any pair
    D, ir, pairs = _schedule(W, N, act, a)
    assert not D[:, 4].any() and not D[4].any() and ir == 0
    assert pairs == [(0, 1), (0, 2), (0, 3), (1, 3), (2, 3)]

    # the candidate 3 defeats 0 and 4 (0's own defeat of 1 does not matter)
    W, N = _state(K, [(3, 0, 0.95), (3, 4, 0.95), (0, 1, 0.95)])
    D, ir, pairs = _schedule(W, N, np.ones(K, np.bool_), a)
    assert ir == 3
    # 0, 4 ∈ D(3): only {3, 0}, {3, 4}; 1, 2 ∉ D(3): all their pairs
    assert pairs == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]


def test_first_round_all_pairs_and_random_candidate():
    K = 4
    W, N = np.zeros((K, K)), np.zeros((K, K))
    act = np.array([True, False, True, True])
    rng = np.random.default_rng(3)
    counts = np.zeros(K, int)
    for _ in range(3000):
        D, ir, pairs = _schedule(W, N, act, 1.0, rng)
        counts[ir] += 1
        assert pairs == [(0, 2), (0, 3), (2, 3)]  # nothing defeated yet: every active pair
    assert counts[1] == 0
    assert np.all(np.abs(counts[[0, 2, 3]] / 3000 - 1 / 3) < 0.04)  # ties broken uniformly


# ---------------------------------------------------------------- elimination rules
def test_hoeffding_elimination_on_hand_state():
    K, B, T = 4, 11, 10**5
    a = math.log(K * K * B * T) / 2  # γ = sqrt(a / N) ≈ 0.289 at N = 100
    W, N = _state(K, [(0, 1, 0.80), (0, 2, 0.75), (1, 3, 0.90), (2, 3, 0.50)])
    act = np.ones(K, np.bool_)
    # 0 drops 1; 0.75 < 1/2 + γ keeps 2; 1 still drops 3 in the same round (all at once, against A)
    assert hoeffding_eliminate(W, N, act, a) == 2
    assert act.tolist() == [True, False, True, False]
    act = np.array([True, False, True, True])
    assert hoeffding_eliminate(W, N, act, a) == 0  # only active arms eliminate
    assert act.tolist() == [True, False, True, True]
    # a confident 3-cycle would empty A: nothing is removed
    W, N = _state(3, [(0, 1, 0.95), (1, 2, 0.95), (2, 0, 0.95)])
    act = np.ones(3, np.bool_)
    assert hoeffding_eliminate(W, N, act, a) == 0 and act.all()


def _kl(p):
    return sum(x * math.log(x / 0.5) for x in (p, 1 - p) if x > 0)


def test_kl_index_and_elimination_on_hand_state():
    K = 4
    pm = {(0, 1): 0.7, (0, 2): 0.8, (0, 3): 0.9, (1, 2): 0.6, (1, 3): 0.7, (2, 3): 0.55}
    W, N = _state(K, [(i, j, p) for (i, j), p in pm.items()])
    I = np.zeros(K)
    kl_index(W, N, I)
    expect = [0.0, 100 * _kl(0.7), 100 * (_kl(0.8) + _kl(0.6)), 100 * (_kl(0.9) + _kl(0.7) + _kl(0.55))]
    assert I == pytest.approx(expect)
    assert expect[1] == pytest.approx(8.228, abs=1e-3) and expect[2] == pytest.approx(21.29, abs=1e-2)
    act = np.ones(K, np.bool_)
    assert kl_eliminate(W, N, act, 15.0, I) == 2 and act.tolist() == [True, True, False, False]
    act = np.ones(K, np.bool_)
    kl_eliminate(W, N, act, 25.0, I)
    assert act.tolist() == [True, True, True, False]
    # I* is the minimum over the active set; the sums still run over all K arms (docs/decisions.md#c2b-batches)
    act = np.array([False, True, True, True])
    kl_eliminate(W, N, act, 15.0, I)
    assert act.tolist() == [False, True, True, False]  # 21.29 − 8.23 ≤ 15 keeps 2
    # a certain winner with zero-loss record: KL(1, 1/2) = ln 2 (0 log 0 = 0)
    W, N = _state(2, [(0, 1, 1.0)], n=10)
    kl_index(W, N, I[:2])
    assert I[1] == pytest.approx(10 * math.log(2))


# ---------------------------------------------------------------- whole runs
def _kernel(alg, inst, T, seed=0, B=None, B_offset=0):
    _, tab = regret_table(inst)
    grid = regret_grid(T)
    nb = resolve_batches(T, B, B_offset)
    rng = np.random.default_rng(seed)
    out, n_batches, steps = c2b_kernel(inst.P, T, tab, grid, rng, nb, alg == "c2b-kl", 0.3)
    return grid, tab, out, n_batches, steps


@pytest.mark.parametrize("alg", ALGS)
def test_single_batch_is_exact_round_robin(alg, six_rankers):
    """B = 1: q_1 = T, so the one batch is all 15 pairs round-robin, cut at T; R(t) is exact per step."""
    T = 10_007
    grid, tab, out, n_batches, steps = _kernel(alg, six_rankers, T, B=1)
    assert steps == T and n_batches == 1
    pairs = [(a, b) for a in range(6) for b in range(a + 1, 6)]
    per = np.array([[tab[k, a, b] for a, b in pairs] for k in range(tab.shape[0])])  # metrics × pairs
    prefix = np.concatenate([np.zeros((per.shape[0], 1)), np.cumsum(per, axis=1)], axis=1)
    expect = (grid // 15)[None, :] * prefix[:, -1:] + prefix[:, grid % 15]
    np.testing.assert_allclose(out, expect, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("T", [1, 2, 3, 17, 1000, 12_345])
@pytest.mark.parametrize("offset", [0, 6])
def test_exact_T_steps_and_regret_invariants(alg, T, offset, six_rankers, simulate):
    grid, tab, out, n_batches, steps = _kernel(alg, six_rankers, T, seed=T, B_offset=offset)
    assert steps == T
    res = simulate(alg, six_rankers, T, B_offset=offset)
    for metric, curve in res.curves.items():
        assert np.all(np.diff(curve) >= -1e-9), metric
        assert curve[-1] <= T * tab.max() + 1e-9
    assert res.curves["regret"][-1] > 0  # round 1 compares every pair, some of them cost regret
    assert 1 <= res.n_batches


@pytest.mark.parametrize("alg", ALGS)
def test_easy_instance_batches_and_flat_regret(alg, easy3, simulate):
    T = 10**5
    for offset, B in ((0, 11), (6, 17)):
        for run in range(4):
            res = simulate(alg, easy3, T, run=run, B_offset=offset)
            # at most B batches, +1 for the exploitation of the single remaining arm
            assert res.n_batches <= B + 1
            R = res.curves["regret"]
            # the Condorcet winner (arm 0) is kept and played alone: the curve is flat well before T
            assert R[-1] == R[np.searchsorted(res.grid, T // 10)]
            assert R[-1] < 300


def test_six_rankers_far_below_linear(six_rankers, simulate):
    T = 10**5
    _, tab = regret_table(six_rankers)
    uniform = T * tab[0][np.triu_indices(6, 1)].mean()  # regret of comparing random distinct pairs
    finals = {alg: np.mean([simulate(alg, six_rankers, T, run=r).curves["regret"][-1] for r in range(3)])
              for alg in ALGS}
    assert finals["c2b-kl"] < 0.2 * uniform
    assert finals["c2b"] < 0.5 * uniform
    assert finals["c2b-kl"] < finals["c2b"]  # the KL rule eliminates sooner (why the paper uses it)


def test_random_instance_K30_finds_winner(simulate):
    u = np.linspace(1.0, 0.0, 30)  # utility model, smallest gap Δ = 1/58
    inst = PreferenceMatrix(0.5 + (u[:, None] - u[None, :]) / 2, name="u30")
    res = simulate("c2b-kl", inst, 10**6)
    R = res.curves["regret"]
    assert R[-1] - R[np.searchsorted(res.grid, 5 * 10**5)] == 0  # exploiting arm 0 in the second half
    assert res.n_batches <= 13 + 1  # B = 13 at T = 1e6, +1 for the exploitation phase


# ---------------------------------------------------------------- variants: literal Alg. 1, log₂ T
@pytest.mark.parametrize("T, B_log, offset, B", [
    (10**5, "e", 0, 11), (10**5, "2", 0, 16), (10**6, "2", 0, 19), (2**20, "2", 0, 20), (2**20 - 1, "2", 0, 19),
    (10**5, "2", 6, 22), (10**6, "e", 0, 13),
])
def test_log2_batches(T, B_log, offset, B):
    assert resolve_batches(T, None, offset, B_log) == B


def test_variant_params_validated_and_ids():
    from banditrepro.algorithms import algorithm_id

    assert resolve_batches(10**5, 1000, 0, "2") == 1000  # an absolute B ignores the log base
    with pytest.raises(ReproError, match="B_log"):
        resolve_batches(10**5, None, 0, "10")
    with pytest.raises(ReproError, match="pairs must be one of once, literal"):
        get("c2b-kl").resolve({"pairs": "both"})
    with pytest.raises(ReproError, match="B_log must be one of e, 2"):
        get("c2b-kl").resolve({"B_log": 10})
    # defaults keep the ids of the existing cells; the variants get their own
    assert algorithm_id("c2b-kl", {"pairs": "once", "B_log": "e"}) == "c2b-kl"
    assert algorithm_id("c2b-kl", {"pairs": "literal"}) == "c2b-kl+pairs=literal"
    assert algorithm_id("c2b-kl", {"B_log": 2}) == "c2b-kl+B_log=2"


def _literal(W, N, act, a, rng=None):
    D, ir, pa, pb = _round_start(W, N, act, a, rng)
    m = literal_pairs(D, act, ir, pa, pb)
    return ir, sorted(zip(pa[:m].tolist(), pb[:m].tolist()))


def test_literal_pairs_on_hand_state():
    """The hand state of test_round_schedule_on_hand_state, read literally: D(0) = {1, 2}, i_r = 0."""
    K = 5
    a = 2 * math.log(2 * K * K * 1)
    W, N = _state(K, [(0, 1, 0.90), (0, 2, 0.85), (0, 3, 0.60), (3, 4, 0.95), (1, 2, 0.50), (2, 4, 0.77)])
    act = np.ones(K, np.bool_)
    ir, pairs = _literal(W, N, act, a)
    assert ir == 0
    # 1, 2 ∈ D(0): (0, 1), (0, 2) once; 3 and 4 undefeated: each meets every active arm, itself included,
    # so {3, 4} twice (from both ends) and (3, 3), (4, 4) once
    assert pairs == [(0, 1), (0, 2), (0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (3, 3), (3, 4), (3, 4), (4, 4)]
    # the set reading is exactly the distinct non-self entries
    _, _, once = _schedule(W, N, act, a)
    assert sorted({p for p in pairs if p[0] != p[1]}) == once
    # round 1 (nothing defeated) on K = 3 active arms of 4: (K−1)·K entries, the candidate's self-pair absent
    act = np.array([True, False, True, True])
    ir, pairs = _literal(np.zeros((4, 4)), np.zeros((4, 4)), act, 1.0, np.random.default_rng(5))
    others = [i for i in (0, 2, 3) if i != ir]
    assert len(pairs) == 2 * 3 and (ir, ir) not in pairs
    assert all((i, i) in pairs for i in others)
    assert pairs.count(tuple(sorted(others))) == 2  # the pair of the two non-candidates, from both ends


def _kernel_v(inst, T, seed, literal, B):
    _, tab = regret_table(inst)
    grid = regret_grid(T)
    out, nb, steps = c2b_kernel(inst.P, T, tab, grid, np.random.default_rng(seed), B, True, 0.3, literal)
    return grid, tab, out, nb, steps


def test_literal_single_batch_counts(six_rankers):
    """B = 1, round 1: every arm but the candidate is undefeated, so the batch holds 5·6 = 30 entries per pass:
    each of the 10 pairs without the candidate twice, the 5 candidate pairs once, 5 self-pairs. Regret per
    pass is therefore fixed whichever arm is the candidate: compare with the exact sum."""
    T = 30 * 100
    _, tab = regret_table(six_rankers)
    for seed in range(5):
        grid, _, out, nb, steps = _kernel_v(six_rankers, T, seed, True, 1)
        assert steps == T and nb == 1
        rng = np.random.default_rng(seed)
        ir = pick_candidate(np.zeros((6, 6), np.bool_), np.ones(6, np.bool_), rng)
        pass_regret = sum(tab[0, min(i, j), max(i, j)] for i in range(6) if i != ir for j in range(6))
        assert out[0, -1] == pytest.approx(100 * pass_regret, rel=1e-12)


def test_literal_self_duels_do_not_inform_and_cost_regret(easy3, simulate):
    """Self-duels cost Δ_i each and carry no information, so the literal variant pays more on easy3 but still
    finds the winner and goes flat; its regret is above the set reading's in every paired run."""
    T = 10**5
    for run in range(4):
        once = simulate("c2b-kl", easy3, T, run=run)
        lit = simulate("c2b-kl", easy3, T, run=run, pairs="literal")
        R = lit.curves["regret"]
        assert R[-1] == R[np.searchsorted(lit.grid, T // 10)]
        assert R[-1] > once.curves["regret"][-1]


def test_log2_variant_uses_more_batches(six_rankers, simulate):
    T = 10**5
    e = simulate("c2b-kl", six_rankers, T, run=0)
    two = simulate("c2b-kl", six_rankers, T, run=0, B_log="2")
    assert two.n_batches > e.n_batches  # B = 16 instead of 11: smaller batches, more of them
    assert simulate("c2b-kl", six_rankers, T, run=0, B=16).curves["regret"][-1] == two.curves["regret"][-1]
