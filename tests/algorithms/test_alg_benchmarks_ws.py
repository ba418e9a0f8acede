"""Winner Stays benchmarks: QSA (reconstructed), IF (IF2), CCB, SCB (reconstructed).

Per-step decisions on hand-made states, CCB's incremental kernel against a direct O(K²) transcription
of Algorithm 1, SCB's epoch schedule and independence of the horizon, QSA's per-query error rate, and
whole runs: exact T, determinism, sane regret.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from banditrepro import ReproError
from banditrepro.algorithms import get
from banditrepro.algorithms.ccb import ccb_challenger, ccb_kernel, ccb_reset, ccb_update_sets
from banditrepro.algorithms.interleaved_filter import if_filter, if_kernel
from banditrepro.algorithms.qsa import adaptive_query, insert_at, qsa_kernel, query_done
from banditrepro.algorithms.rng import randint
from banditrepro.algorithms.scb import epoch_schedule, kl_bernoulli, kl_bounds, pair_decided, scb_identify, scb_kernel
from banditrepro.manifest import load_manifest
from banditrepro.recorder import new_recorder
from tests.helpers import played_pairs

BENCHMARKS = ["qsa", "if", "ccb", "scb"]
DETERMINISTIC5 = np.triu(np.ones((5, 5)), 1) + np.eye(5) * 0.5  # the lower index always wins


pair_trace = played_pairs  # the pair played at every step


# ------------------------------------------------------------------------------------------ QSA
def test_qsa_insert_keeps_the_ranking_order():
    order = np.array([4, 7, 9, -1, -1], np.int64)
    assert insert_at(order, 3, 1, 5) == 4
    assert order[:4].tolist() == [4, 5, 7, 9]
    assert insert_at(order, 4, 4, 1) == 5
    assert order.tolist() == [4, 5, 7, 9, 1]


def test_qsa_query_stopping_rule_on_hand_made_counts():
    """r_n = sqrt(ln(4n²/δ)/(2n)); the query stops when |p̂ − 1/2| > r_n or r_n < γ."""
    lid = -math.log(0.05)
    n = 400
    rad = math.sqrt((lid + math.log(4 * n * n)) / (2 * n))
    assert not query_done(0, 0, lid, 0.0)
    assert query_done(math.ceil(n * (0.5 + rad) + 1), n, lid, 0.0)
    assert not query_done(math.floor(n * (0.5 + rad) - 1), n, lid, 0.0)
    assert query_done(math.floor(n * (0.5 - rad) - 1), n, lid, 0.0)  # y beats x confidently
    assert not query_done(n // 2, n, lid, 0.0)
    assert query_done(n // 2, n, lid, rad + 1e-9)  # indifference stop: radius below the tie margin
    assert not query_done(n // 2, n, lid, rad - 1e-9)


@pytest.mark.parametrize("p", [0.6, 0.4])
def test_qsa_query_error_rate_at_p06_is_below_delta(p):
    """Each query errs with probability < δ/2 by the anytime bound (module docstring). Measured: 0 errors in
    4000 queries at p = 0.6 and δ = 0.05 (mean ≈ 860 duels per query). The test asserts the exact
    binomial 95 % upper bound of the error rate is below δ: with 4000 queries it flips once ≥ 183
    answers are wrong (4.6 %); the old 15-duel majority (wrong 21 % at p = 0.6) fails it."""
    delta, M = 0.05, 4000
    rng = np.random.default_rng(7)
    wrong = 0
    for _ in range(M):
        w, k = adaptive_query(p, -math.log(delta), 0.05, 10**9, rng)
        wrong += (2 * w >= k) != (p > 0.5)
    upper = stats.beta.ppf(0.95, wrong + 1, M - wrong)
    assert upper < delta, (wrong, upper)


def test_qsa_adaptive_query_cost_grows_as_the_pair_gets_closer():
    rng = np.random.default_rng(3)
    lid = -math.log(0.05)
    cost = {p: np.mean([adaptive_query(p, lid, 0.0, 10**9, rng)[1] for _ in range(300)]) for p in (0.9, 0.7, 0.6)}
    assert cost[0.9] < cost[0.7] < cost[0.6]
    # the tie margin caps a query of equal arms: r_n < 0.1 after about ln(4n²/δ)/(2·0.01) duels
    w, k = adaptive_query(0.5, lid, 0.1, 10**9, rng)
    assert 500 < k < 1200
    assert adaptive_query(0.5, lid, 0.0, 777, rng)[1] == 777  # ... else only the limit (end of run) stops it


def test_qsa_sorts_noiseless_duels_with_binary_insertion():
    """Noiseless duels: every query takes the same n₁ duels; the top arm is found after ≤ Σ ⌈log2(m+1)⌉
    queries, no pair is queried twice, then (0, 0) forever."""
    T = 3000
    budget = sum(math.ceil(math.log2(m + 1)) for m in range(1, 5))
    rng = np.random.default_rng(0)
    n1 = adaptive_query(1.0, -math.log(0.05), 0.0, 10**9, rng)[1]
    for seed in range(6):
        pairs = pair_trace(qsa_kernel, DETERMINISTIC5, T, seed, 0.05, 0.0)
        explore = np.flatnonzero(pairs[:, 0] != pairs[:, 1])
        assert len(explore) % n1 == 0 and 0 < len(explore) <= budget * n1
        assert np.all(pairs[len(explore):] == 0)
        runs = pairs[explore].reshape(-1, n1, 2)
        assert np.all(runs == runs[:, :1])  # n₁ consecutive duels of one pair per query
        assert len({tuple(sorted(r[0])) for r in runs}) == len(runs)


def test_qsa_rejects_bad_parameters(simulate, mslr5):
    for bad in ({"delta": 0.0}, {"delta": 1.0}, {"tie_margin": -0.1}):
        with pytest.raises(ReproError):
            simulate("qsa", mslr5, 100, **bad)


# ------------------------------------------------------------------------------------------- IF
def test_if_filter_removes_beaten_arms_then_switches_with_pruning():
    rng = np.random.default_rng(0)
    t, c = 100, 0.1
    wins = np.zeros(6)
    # b̂ vs 1: 0.80 (confidently better), vs 2: 0.45 (open), vs 3: 0.30 (b' beats b̂),
    # vs 4: 0.60 (empirically beaten: pruned on the switch), vs 5: 0.52 (pruned too)
    wins[[1, 2, 3, 4, 5]] = [80, 45, 30, 60, 52]
    Wl = np.array([1, 2, 3, 4, 5, -1], np.int64)
    nW, bp = if_filter(Wl, 5, wins, t, c, rng)
    assert bp == 3
    assert Wl[:nW].tolist() == [2]
    # no confident loss: only the confident wins leave, b̂ stays
    wins[[1, 2, 4]] = [80, 45, 55]
    Wl = np.array([1, 2, 4, -1, -1, -1], np.int64)
    nW, bp = if_filter(Wl, 3, wins, t, c, rng)
    assert bp == -1
    assert Wl[:nW].tolist() == [2, 4]
    # two arms beat b̂ confidently: the new candidate is drawn uniformly among them
    wins[[1, 2]] = [10, 20]
    seen = set()
    for _ in range(200):
        Wl = np.array([1, 2, -1, -1, -1, -1], np.int64)
        nW, bp = if_filter(Wl, 2, wins, t, c, rng)
        assert nW == 1 and Wl[0] == 3 - bp
        seen.add(bp)
    assert seen == {1, 2}


def test_if_confidence_radius_and_exploitation_on_noiseless_duels():
    """c_t = sqrt(4 ln(1/δ)/t) with δ = 1/(TK²): b̂ needs t > 4 ln(TK²)/(1/2)² comparisons per arm."""
    K, T = 5, 5000
    pairs = pair_trace(if_kernel, DETERMINISTIC5, T, 0)
    self_duel = pairs[:, 0] == pairs[:, 1]
    first = int(np.argmax(self_duel))
    assert np.all(self_duel[first:]) and np.all(pairs[first:] == 0)
    t_needed = math.floor(4 * math.log(T * K * K) / 0.25) + 1
    # arm 0 must beat each other arm t_needed times in a row robin; earlier candidates cost more
    assert first >= t_needed * (K - 1)
    assert first <= t_needed * K * (K - 1)


# ------------------------------------------------------------------------------------------ CCB
def _ccb_state(K):
    return (np.ones(K, np.bool_), np.zeros((K, K), np.bool_), np.zeros((K, K), np.int64),
            np.zeros(K, np.int64))


def test_ccb_sets_on_a_hand_made_state():
    D = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], np.bool_)  # 0 beats 1, 2; 1 beats 2 (confidently)
    Crow, Ccol = D.sum(axis=1).astype(np.int64), D.sum(axis=0).astype(np.int64)
    kept = set()
    for seed in range(40):
        in_best, inB, Blist, nB = _ccb_state(3)
        n_best, LC = ccb_update_sets(D, Crow, Ccol, in_best, 3, inB, Blist, nB, 3, np.random.default_rng(seed))
        # 8B: arms 1 and 2 cannot be Copeland winners; B^1, B^2 = the arms that beat them
        # 8C: arm 0's score is settled at 2 = K−1 -> L_C = 0, every B^j keeps one element
        assert in_best.tolist() == [True, False, False] and n_best == 1 and LC == 0
        assert nB.tolist() == [0, 1, 1]
        assert Blist[1, 0] == 0 and inB[1].tolist() == [True, False, False]
        assert Blist[2, 0] in (0, 1) and inB[2].sum() == 1 and inB[2, Blist[2, 0]]
        kept.add(int(Blist[2, 0]))
    assert kept == {0, 1}  # the kept element is random
    # 8B empties B -> full reset, after which 8C installs arm 0 again
    in_best, inB, Blist, nB = _ccb_state(3)
    in_best[[0, 2]] = False
    n_best, LC = ccb_update_sets(D, Crow, Ccol, in_best, 1, inB, Blist, nB, 3, np.random.default_rng(0))
    assert in_best.all() and n_best == 3 and LC == 0 and nB.tolist() == [0, 0, 0]
    # reset clears the membership rows too
    inB[1, 2] = True
    Blist[1, 0] = 2
    nB[1] = 1
    assert ccb_reset(in_best, inB, Blist, nB) == (3, 3)
    assert not inB.any() and nB.sum() == 0


def test_ccb_challenger_rules():
    rng = np.random.default_rng(0)
    K = 4
    D = np.zeros((K, K), np.bool_)
    inB = np.zeros((K, K), np.bool_)
    isqT = np.zeros((K, K))
    pT = np.ones((K, K))
    pT[0] = [0.5, 0.4, 0.45, 0.3]  # u_j0 with s = 0: every arm loses to c = 0 -> (c, c)
    assert ccb_challenger(0, False, 0.0, pT, isqT, D, inB, rng) == 0
    pT[0] = [0.5, 0.5, 0.3, 0.3]  # a tie at 1/2 never selects c
    assert ccb_challenger(0, False, 0.0, pT, isqT, D, inB, rng) == 1
    pT[0] = [0.5, 0.6, 0.7, 0.2]
    D[2, 0] = True  # l_20 > 1/2: arm 2 is not eligible
    assert ccb_challenger(0, False, 0.0, pT, isqT, D, inB, rng) == 1
    # B^c branch: argmax over B^c even below 1/2; the bonus s·isqT counts
    inB[0, 3] = True
    assert ccb_challenger(0, True, 0.0, pT, isqT, D, inB, rng) == 3
    isqT[0, 1] = 1.0
    inB[0, 1] = True
    assert ccb_challenger(0, True, 0.2, pT, isqT, D, inB, rng) == 1
    # B^c holds only an ineligible arm -> all arms
    inB[0] = False
    inB[0, 2] = True
    assert ccb_challenger(0, True, 0.0, pT, isqT, D, inB, rng) == 1
    # ties are broken uniformly
    pT[0] = [0.5, 0.6, 0.6, 0.6]
    D[:] = False
    draws = [ccb_challenger(0, False, 0.0, pT, np.zeros((K, K)), D, inB, rng) for _ in range(3000)]
    assert all(abs(np.mean(np.array(draws) == k) - 1 / 3) < 0.04 for k in (1, 2, 3))


def ccb_direct(P, T, alpha, seed):
    """Algorithm 1 transcribed directly: U, L recomputed every step (O(K²)), lines 8A-8C every step.
    Shares the kernel's random stream draw for draw, and its set helpers (tested above)."""
    K = P.shape[0]
    rng = np.random.default_rng(seed)
    W = np.zeros((K, K))
    N = np.zeros((K, K))
    in_best, inB, Blist, nB = _ccb_state(K)
    n_best, LC = K, K
    seq = []
    for t in range(1, T + 1):
        lnt = math.log(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            phat = np.where(N > 0, W / N, 1.0)
            rad = np.where(N > 0, np.sqrt(alpha * lnt / N), np.inf)
        D = (phat - rad > 0.5) & (N > 0)
        np.fill_diagonal(D, False)
        Crow = D.sum(axis=1).astype(np.int64)
        Ccol = D.sum(axis=0).astype(np.int64)
        if (D & inB).any():  # 8A
            n_best, LC = ccb_reset(in_best, inB, Blist, nB)
        n_best, LC = ccb_update_sets(D, Crow, Ccol, in_best, n_best, inB, Blist, nB, LC, rng)
        open_pairs = [(i, Blist[i, m]) for i in range(K) for m in range(nB[i])
                      if not D[i, Blist[i, m]] and not D[Blist[i, m], i]]
        if rng.random() < 0.25 and open_pairs:
            c, d = open_pairs[randint(rng, len(open_pairs))]
        else:
            cbar = K - 1 - Ccol
            Ct = [i for i in range(K) if cbar[i] == cbar.max()]
            inter = [i for i in Ct if in_best[i]]
            if inter and rng.random() < 2 / 3:
                c = inter[randint(rng, len(inter))]
            else:
                c = Ct[randint(rng, len(Ct))]
            use_Bc = rng.random() < 0.5
            with np.errstate(divide="ignore"):
                isqT = np.where(N > 0, 1 / np.sqrt(N), 0.0).T.copy()
            d = ccb_challenger(c, use_Bc, math.sqrt(alpha * lnt), phat.T.copy(), isqT, D, inB, rng)
        seq.append((int(c), int(d)))
        if c != d:
            if rng.random() < P[c, d]:
                W[c, d] += 1
            else:
                W[d, c] += 1
            N[c, d] += 1
            N[d, c] += 1
    return np.array(seq)


@pytest.mark.parametrize("which, alpha", [("six", 0.51), ("easy3", 0.51), ("close4", 0.1)])
def test_ccb_kernel_equals_direct_algorithm_1(six_rankers, easy3, which, alpha):
    """Also checks the kernel's shortcuts: O(K) expiry of confident verdicts, 8A on the last pair only,
    8B-8C skipped while nothing changed. The small α on near-even arms makes wrong confident verdicts,
    hence disproven hypotheses (8A resets)."""
    u = np.array([0.6, 0.5, 0.45, 0.4])
    P = {"six": six_rankers.P, "easy3": easy3.P, "close4": (1 + u[:, None] - u[None, :]) / 2}[which]
    T = 2500
    for seed in (0, 1):
        np.testing.assert_array_equal(pair_trace(ccb_kernel, P, T, seed, alpha), ccb_direct(P, T, alpha, seed))


# ------------------------------------------------------------------------------------------ SCB
def test_kl_bounds_invert_the_kl_divergence():
    for p in (0.0, 0.1, 0.5, 0.93, 1.0):
        for level in (1e-3, 0.05, 0.7):
            lo, hi = kl_bounds(p, level)
            assert 0.0 <= lo <= p <= hi <= 1.0
            if 0.0 < lo:
                assert kl_bernoulli(p, lo) == pytest.approx(level, rel=1e-6)
            if hi < 1.0:
                assert kl_bernoulli(p, hi) == pytest.approx(level, rel=1e-6)
    assert kl_bounds(1.0, 0.1)[1] == 1.0 and kl_bounds(1.0, 0.1)[0] == pytest.approx(math.exp(-0.1))
    assert kl_bounds(0.0, 0.1)[0] == 0.0


def test_scb_pair_query_stopping_rule():
    """Fixed-n radius sqrt(ln(K²/δ)/(2n)) (duelpy's), or the anytime one with + ln 4 + 2 ln n."""
    log_c = math.log(25 / 0.01)
    assert not pair_decided(0.0, 0.0, log_c, False, 0.0)
    assert not pair_decided(6.0, 10.0, log_c, False, 0.0)  # 0.6 after 10 duels: undecided
    n = 400.0
    for anytime in (False, True):
        rad = math.sqrt((log_c + (math.log(4) + 2 * math.log(n) if anytime else 0.0)) / (2 * n))
        assert pair_decided(n * (0.5 + rad + 1e-3), n, log_c, anytime, 0.0)
        assert not pair_decided(n * (0.5 + rad - 1e-3), n, log_c, anytime, 0.0)
        assert pair_decided(n * (0.5 - rad - 1e-3), n, log_c, anytime, 0.0)
        assert pair_decided(n / 2, n, log_c, anytime, rad + 1e-9)  # tie margin: indifference stop
        assert not pair_decided(n / 2, n, log_c, anytime, rad - 1e-9)


def test_scb_epoch_schedule():
    """Alg. 3: T_r = 2^(2^r) and δ_r = ln(T_r)/T_r, depending on r only."""
    for r in range(1, 6):
        length, lid = epoch_schedule(r)
        assert length == 2 ** (2 ** r)
        assert lid == pytest.approx(-math.log(math.log(2.0 ** (2 ** r)) / 2.0 ** (2 ** r)), rel=1e-12)
    assert epoch_schedule(6)[0] == epoch_schedule(9)[0] > 10**18  # beyond any horizon we run
    assert math.isfinite(epoch_schedule(9)[1])


def _identify(P, W, N, length, lid, rng, tie_margin=0.0):
    K = P.shape[0]
    tab = np.zeros((1, K, K))
    grid = np.array([10**12], np.int64)
    cum, out, pos = new_recorder(tab, grid)
    a, used = scb_identify(P, W, N, length, lid, False, tie_margin, 10**12, rng, tab, grid, cum, out, pos,
                           np.empty(K, np.int64), np.zeros(K), np.zeros(K), np.ones(K))
    assert pos[0] == used
    return a, used


COPELAND5 = np.array([  # arm 0 beats 1, 2, 3 and loses to 4: Copeland winner, no Condorcet winner
    [0.5, 0.9, 0.9, 0.9, 0.1],
    [0.1, 0.5, 0.9, 0.9, 0.1],
    [0.1, 0.1, 0.5, 0.9, 0.9],
    [0.1, 0.1, 0.1, 0.5, 0.9],
    [0.9, 0.9, 0.1, 0.1, 0.5],
])  # Copeland scores 3, 2, 2, 1, 2


def test_scb_identify_on_hand_made_states():
    K = 5
    lid = epoch_schedule(4)[1]
    # every pair already decided (kept from earlier epochs): Alg. 4 finds the Copeland winner for free
    N = np.triu(np.full((K, K), 1e6), 1)
    W = COPELAND5 * N
    for seed in range(5):
        a, used = _identify(COPELAND5, W.copy(), N.copy(), 10**6, lid, np.random.default_rng(seed))
        assert (a, used) == (0, 0)
    # a fresh state: Alg. 2 queries pairs until decided; the winner is still arm 0, at a cost
    W, N = np.zeros((K, K)), np.zeros((K, K))
    a, used = _identify(COPELAND5, W, N, 10**6, lid, np.random.default_rng(0))
    assert a == 0 and 0 < used < 10**6
    decided = [pair_decided(W[i, j], N[i, j], math.log(K * K) + lid, False, 0.0)
               for i in range(K) for j in range(i + 1, K) if N[i, j] > 0]
    assert all(decided)
    assert np.all((W / np.maximum(N, 1) > 0.5)[N > 0] == (COPELAND5 > 0.5)[N > 0])
    # force-termination: an exact tie never decides; the epoch ends after exactly `length` duels
    tie = np.full((2, 2), 0.5)
    a, used = _identify(tie, np.zeros((2, 2)), np.zeros((2, 2)), 1000, lid, np.random.default_rng(0))
    assert used == 1000 and a in (0, 1)
    # ... unless the tie margin stops the query
    a, used = _identify(tie, np.zeros((2, 2)), np.zeros((2, 2)), 10**6, lid, np.random.default_rng(0), 0.05)
    assert 0 < used < 10**4


@pytest.mark.parametrize("which", ["mslr5", "sushi_like"])
def test_scb_never_reads_the_horizon(mslr5, which):
    """The pairs played over the first t steps are identical for two horizons (same seed): no decision
    depends on T, including force-terminations and epochs cut by the end of the shorter run."""
    P = mslr5.P if which == "mslr5" else COPELAND5
    short, long = 30_000, 70_000
    for seed in (0, 1):
        for tie_margin in (0.0, 0.05):
            a = pair_trace(scb_kernel, P, short, seed, False, tie_margin)
            b = pair_trace(scb_kernel, P, long, seed, False, tie_margin)
            np.testing.assert_array_equal(a, b[:short])
    a = pair_trace(qsa_kernel, mslr5.P, 5_000, 3, 0.05, 0.05)
    b = pair_trace(qsa_kernel, mslr5.P, 40_000, 3, 0.05, 0.05)
    np.testing.assert_array_equal(a, b[:5_000])  # QSA neither


def test_scb_finds_the_copeland_winner_without_a_condorcet_winner():
    """By t = 65,812 (end of epoch 4) SCB exploits arm 0, which beats 3 of 4 arms but loses to arm 4."""
    for seed in range(3):
        pairs = pair_trace(scb_kernel, COPELAND5, 65_812, seed, False, 0.0)
        assert pairs[-1].tolist() == [0, 0]
        assert np.mean(np.all(pairs[276:] == 0, axis=1)) > 0.9  # epoch 4 is mostly exploitation


def test_scb_epochs_double_squared_and_exploit_the_winner():
    """Epoch r spans T_r = 2^(2^r) comparisons and ends with (â_r, â_r); with noiseless duels
    â_r = arm 0 once its pairs are decided."""
    T = 70_000
    pairs = pair_trace(scb_kernel, DETERMINISTIC5, T, 0, False, 0.0)
    ends = np.cumsum([2 ** (2 ** r) for r in range(1, 5)])  # 4, 20, 276, 65812
    assert ends.tolist() == [4, 20, 276, 65812]
    for e in ends[2:]:
        assert pairs[e - 1].tolist() == [0, 0]  # last step of the epoch: exploitation of arm 0
    step = np.diff(np.concatenate([[0], (pairs[:, 0] == pairs[:, 1]).astype(int), [0]]))
    block_ends = np.flatnonzero(step == -1)
    assert set(ends[2:].tolist()) <= set(block_ends.tolist())
    assert len(block_ends) <= 5


# ---------------------------------------------------------------------------------- whole runs
@pytest.mark.parametrize("name", BENCHMARKS)
def test_exact_steps_determinism_invariants(simulate, mslr5, name):
    T = 12_345
    a = simulate(name, mslr5, T, run=0)
    b = simulate(name, mslr5, T, run=0)
    c = simulate(name, mslr5, T, run=1)
    assert a.grid[-1] == T
    for m, curve in a.curves.items():
        np.testing.assert_array_equal(curve, b.curves[m])
        assert np.all(np.diff(curve) >= -1e-12)
    assert any(not np.array_equal(a.curves[m], c.curves[m]) for m in a.curves)
    assert a.curves["regret"][-1] <= T * mslr5.gaps.max() + 1e-9
    assert a.curves["strong_regret_binary"][-1] <= T


@pytest.mark.parametrize("name", BENCHMARKS)
def test_regret_is_far_below_linear_on_an_easy_instance(simulate, easy3, name):
    T = 50_000
    finals, halves = [], []
    for run in range(3):
        res = simulate(name, easy3, T, run=run)
        r = res.curves["regret"]
        finals.append(r[-1])
        halves.append(r[np.searchsorted(res.grid, T // 2)])
    linear = T * easy3.gaps.mean()  # uniform play
    assert np.mean(finals) < 0.02 * linear
    # the curve flattens: the second half adds little
    assert np.mean(finals) - np.mean(halves) < 0.2 * np.mean(finals) + 1.0


def test_labels_and_reconstruction_flags():
    assert get("qsa").reconstructed and get("qsa").label == "QSA (reconstructed)"
    assert get("scb").reconstructed and get("scb").label.endswith("(reconstructed)")
    assert get("if").label == "IF" and not get("if").reconstructed
    assert get("ccb").label == "CCB" and get("ccb").defaults == {"alpha": 0.51}
    assert get("scb").defaults == {"anytime": False, "tie_margin": 0.05}
    assert get("qsa").defaults == {"delta": 0.05, "tie_margin": 0.05}


def test_manifest_legends_name_the_knob_setting_they_run():
    """Every SCB/QSA line of the WS figures says its tie margin in the legend, and the -knob claim rows
    re-run their claim with the alternative lines (and only those swapped)."""
    figs = {f.id: f for f in load_manifest(Path(__file__).parents[2] / "config/figures/winner-stays.yaml",
                                           papers=["winner-stays"])}
    seen = set()
    for f in figs.values():
        for ref in f.panels[0].algorithms if f.panels else ():
            if ref.name in ("scb", "qsa"):
                gamma = get(ref.name).resolve(ref.params)["tie_margin"]
                assert f"γ = {gamma:g}" in ref.label and "reconstructed" in ref.label
                seen.add(ref.key)
        claims = {c["id"]: c for c in f.claims}
        for cid, c in claims.items():
            if cid.endswith("-knob"):
                base = claims[cid[: -len("-knob")]]["test"]
                swapped = [o.replace("-alt", "") for o in c["test"]["others"]]
                assert swapped == base["others"] and c["test"]["others"] != base["others"]
    assert seen == {"scb", "scb-alt", "qsa", "qsa-alt"}
