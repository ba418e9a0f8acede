"""SCOMP2 and PCOMP — batched dueling bandits (Agarwal, Ghuge, Nagarajan, ICML 2022, arXiv 2202.10660).

Both are **reconstructions** (docs/decisions.md#scomp2-and-pcomp): the pseudocode of arXiv 2202.10660 was not
available (the stored copies hold only its abstract and summaries: PCOMP compares all pairs of an active set and
eliminates; SCOMP2 draws a random seed set, uses an undefeated seed arm as candidate to eliminate active
arms, and switches to PCOMP when the seed set turns out sub-optimal; at most 2B+1 batches).

SCOMP2 (reconstructed), q = T^(1/B), q_r = ⌊q^r⌋, γ_ij = sqrt(ln(K² B T) / (2 N_ij)):
  seed set S: ⌈√K⌉ arms uniformly at random without replacement;
  phase 1, rounds r = 1..B: candidate s_r = the active seed arm that no other active seed arm defeats
    (p̂ > 1/2 + γ) and that defeats the most active arms (ties at random); compare every pair {s, j},
    s ∈ S ∩ A, j ∈ A, j ≠ s, q_r times; eliminate j if p̂_{s_r j} > 1/2 + γ; if every active seed arm is
    now defeated by some active arm, switch to phase 2;
  phase 2 (= PCOMP), rounds r = 1..B (q_r restarts): all pairs of A q_r times; eliminate j if
    ∃ i ∈ A: p̂_ij > 1/2 + γ_ij;
  whenever |A| = 1, or after the last round of a phase without a switch: play (a, a) until T with a the
    active arm beating the most active arms empirically (p̂ > 1/2; ties at random) — the final batch.
PCOMP (reconstructed): phase 2 from the start, then the final batch (at most B+1 batches).
Batches run as in C2B (``c2b.run_batch``): distinct unordered pairs, round-robin, truncated at T.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro import ReproError
from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.algorithms.c2b import (
    B_PARAMS,
    batch_size,
    beats,
    collect_pairs,
    hoeffding_eliminate,
    only_arm,
    resolve_batches,
    run_batch,
)
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True)
def draw_seeds(K, s, rng, seed):
    """Seed set: s distinct arms uniformly at random (partial Fisher-Yates), as a mask."""
    perm = np.arange(K)
    seed[:] = False
    for k in range(s):
        j = rng.integers(k, K)
        perm[k], perm[j] = perm[j], perm[k]
        seed[perm[k]] = True


@njit(cache=True, nogil=True)
def seed_candidate(W, N, act, seed, a, rng):
    """Phase 1: an active seed arm defeated by no other active seed arm, defeating the most active arms
    (ties uniformly at random); -1 if every active seed arm is defeated within the seed set."""
    K = act.shape[0]
    best = -1
    cand = -1
    ties = 0
    for s in range(K):
        if not (act[s] and seed[s]):
            continue
        undefeated = True
        for x in range(K):
            if x != s and act[x] and seed[x] and beats(W, N, x, s, a):
                undefeated = False
                break
        if not undefeated:
            continue
        wins = 0
        for j in range(K):
            if j != s and act[j] and beats(W, N, s, j, a):
                wins += 1
        if wins > best:
            best = wins
            cand = s
            ties = 1
        elif wins == best:
            ties += 1
            if rng.integers(0, ties) == 0:
                cand = s
    return cand


@njit(cache=True, nogil=True)
def seed_pairs(act, seed, sel, pa, pb):
    """Phase 1 batch: the distinct unordered pairs {s, j}, s ∈ S ∩ A, j ∈ A \\ {s}; returns m."""
    K = act.shape[0]
    sel[:, :] = False
    for s in range(K):
        if act[s] and seed[s]:
            for j in range(K):
                if act[j] and j != s:
                    sel[min(s, j), max(s, j)] = True
    return collect_pairs(sel, pa, pb)


@njit(cache=True, nogil=True)
def all_pairs(act, sel, pa, pb):
    """PCOMP batch: every unordered pair of active arms; returns m."""
    K = act.shape[0]
    sel[:, :] = False
    for i in range(K):
        for j in range(i + 1, K):
            sel[i, j] = act[i] and act[j]
    return collect_pairs(sel, pa, pb)


@njit(cache=True, nogil=True)
def eliminate_by(W, N, act, c, a):
    """Phase 1: drop every active j ≠ c that the candidate c defeats (p̂_cj > 1/2 + γ_cj)."""
    nd = 0
    for j in range(act.shape[0]):
        if j != c and act[j] and beats(W, N, c, j, a):
            act[j] = False
            nd += 1
    return nd


@njit(cache=True, nogil=True)
def seeds_all_defeated(W, N, act, seed, a):
    """Phase 1 switch rule: every active seed arm is defeated by some active arm."""
    K = act.shape[0]
    for s in range(K):
        if not (act[s] and seed[s]):
            continue
        hit = False
        for i in range(K):
            if i != s and act[i] and beats(W, N, i, s, a):
                hit = True
                break
        if not hit:
            return False
    return True


@njit(cache=True, nogil=True)
def best_arm(W, N, act, rng):
    """Final batch: the active arm with p̂_ij > 1/2 against the most active arms (ties at random)."""
    K = act.shape[0]
    best = -1
    arm = -1
    ties = 0
    for i in range(K):
        if not act[i]:
            continue
        wins = 0
        for j in range(K):
            if j != i and act[j] and N[i, j] > 0.0 and W[i, j] > 0.5 * N[i, j]:
                wins += 1
        if wins > best:
            best = wins
            arm = i
            ties = 1
        elif wins == best:
            ties += 1
            if rng.integers(0, ties) == 0:
                arm = i
    return arm


@njit(cache=True, nogil=True)
def scomp_kernel(P, T, tab, grid, rng, B, n_seeds, pcomp_only):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    W = np.zeros((K, K))
    N = np.zeros((K, K))
    act = np.ones(K, np.bool_)
    seed = np.zeros(K, np.bool_)
    sel = np.zeros((K, K), np.bool_)
    npair = K * (K - 1) // 2
    pa = np.empty(npair, np.int64)
    pb = np.empty(npair, np.int64)
    q = T ** (1.0 / B)
    gamma_a = math.log(K * K * B * T) / 2.0  # γ_ij² N_ij
    phase = 2 if pcomp_only else 1
    if phase == 1:
        draw_seeds(K, n_seeds, rng, seed)
    n_batches = 0
    r = 1
    while pos[0] < T:
        arm = only_arm(act)
        if arm < 0 and r > B:  # a phase used its B rounds without a switch: final batch
            arm = best_arm(W, N, act, rng)
        if arm >= 0:  # final batch: the remaining (or best remaining) arm against itself until T
            record(tab, grid, cum, out, pos, arm, arm, T - pos[0])
            n_batches += 1
            break
        qr = batch_size(q, r)
        if phase == 1:
            # phase 1: candidate from the seed set, seeded comparisons, elimination by the candidate
            c = seed_candidate(W, N, act, seed, gamma_a, rng)
            if c < 0:  # no undefeated seed arm: the seed set is sub-optimal
                phase = 2
                r = 1
                continue
            m = seed_pairs(act, seed, sel, pa, pb)
            run_batch(P, T, tab, grid, cum, out, pos, rng, W, N, pa, pb, m, qr)
            n_batches += 1
            eliminate_by(W, N, act, c, gamma_a)
            if seeds_all_defeated(W, N, act, seed, gamma_a):  # switch to PCOMP on the remaining arms
                phase = 2
                r = 1
            else:
                r += 1
        else:
            # phase 2 (PCOMP): all pairs of A, elimination by any active arm
            m = all_pairs(act, sel, pa, pb)
            run_batch(P, T, tab, grid, cum, out, pos, rng, W, N, pa, pb, m, qr)
            n_batches += 1
            hoeffding_eliminate(W, N, act, gamma_a)
            r += 1
    return out, n_batches, pos[0]


def seed_set_size(K: int, seed_size: int | None) -> int:
    """|S| = ⌈√K⌉ by default (docs/decisions.md#scomp2-and-pcomp), at most K."""
    if seed_size is None:
        return math.ceil(math.sqrt(K))
    if seed_size > K:
        raise ReproError(f"scomp2: seed_size={seed_size} exceeds the number of arms K={K}")
    return int(seed_size)


def run_scomp2(instance, T, tab, grid, rng, *, B, B_offset, seed_size):
    nb = resolve_batches(T, B, B_offset)
    s = seed_set_size(instance.n_arms, seed_size)
    return scomp_kernel(instance.P, T, tab, grid, rng, nb, s, False)


def run_pcomp(instance, T, tab, grid, rng, *, B, B_offset):
    nb = resolve_batches(T, B, B_offset)
    return scomp_kernel(instance.P, T, tab, grid, rng, nb, 0, True)


CITATION = "Agarwal, Ghuge, Nagarajan, Batched Dueling Bandits, ICML 2022 (arXiv 2202.10660)"

SPECS = {
    "scomp2": AlgorithmSpec(
        name="scomp2",
        ns_per_step=14,
        colour="#ff7f0e",
        label="SCOMP2 (reconstructed)",
        problem="duel",
        citation=CITATION + "; reconstruction of docs/decisions.md#scomp2-and-pcomp",
        run=run_scomp2,
        params=B_PARAMS + (
            Param("seed_size", "int", None, "seed-set size |S|; None = ceil(sqrt(K))", low=1,
                  allow_none=True),
        ),
        reconstructed=True,
        batched=True,
    ),
    "pcomp": AlgorithmSpec(
        name="pcomp",
        ns_per_step=16,
        colour="#ffbb78",
        label="PCOMP (reconstructed)",
        problem="duel",
        citation=CITATION + "; reconstruction of docs/decisions.md#scomp2-and-pcomp (phase 2 from the start)",
        run=run_pcomp,
        params=B_PARAMS,
        reconstructed=True,
        batched=True,
    ),
}
