"""C2B and C2B-KL — Catching the Condorcet winner in Batches (Agarwal, Ghuge, Nagarajan, NeurIPS 2022).

Alg. 1 (Hoeffding elimination, radius γ_ij) and Alg. 2 / App. A (KL elimination, f(K) = 0.3 K^1.01,
the variant of every figure). docs/decisions.md#c2b-batches resolutions: a batch is the *set* of unordered pairs of
lines 7-11 (self-pairs skipped), each compared q_r = ⌊q^r⌋ times with q = T^(1/B); its comparisons run
round-robin (q_r passes over the pairs, the last batch cut at T) so R(t) is exact per comparison;
rounds continue past B while budget remains; once |A| = 1 the arm duels itself until T (one more batch).
Per batch the work is O(K²); per comparison only the recorder runs.

Two labelled variants measure that reading (never the default):
- ``pairs="literal"``: lines 7-11 read literally, as a multiset of ordered pairs: an undefeated i meets every
  active j *including itself*, so {i, j} is compared twice when both ends are undefeated, and (i, i) q_r times
  (pure regret, no information: self-duels do not update W, N).
- ``B_log="2"``: B = ⌊log₂ T⌋ + B_offset instead of ⌊ln T⌋ + B_offset (more, smaller batches).
An absolute ``B`` overrides both (B = 50, 100, 1000 in the rounds-needed study).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro import ReproError
from banditrepro.algorithms.base import AlgorithmSpec, Param
from banditrepro.recorder import new_recorder, record

LOG_BASES = ("e", "2")


def resolve_batches(T: int, B: int | None, B_offset: int, B_log: str = "e") -> int:
    """B = ⌊ln T⌋ + B_offset when B is None (binding decision; Fig. 2 uses B_offset = 6), at least 1.

    ``B_log="2"`` (a variant, not the paper's reading) uses ⌊log₂ T⌋; an absolute B ignores the log base.
    """
    if B_log not in LOG_BASES:
        raise ReproError(f"B_log must be one of {', '.join(LOG_BASES)}, got {B_log!r}")
    if B is not None:
        if B_offset != 0:
            raise ReproError(f"give either B={B} or B_offset={B_offset}, not both")
        return int(B)
    # the +1e-9 guards exact powers (log2(2**20) may come out as 19.999…); it moves no T of the manifest
    log_T = math.log(T) if B_log == "e" else math.log2(T) + 1e-9
    return max(1, int(math.floor(log_T)) + int(B_offset))


def batch_base(T: int, B: int) -> float:
    """q = T^(1/B)."""
    return float(T) ** (1.0 / B)


@njit(cache=True, nogil=True)
def batch_size(q, r):
    """q_r = ⌊q^r⌋ (q_0 = 1)."""
    return np.int64(math.floor(q ** r))


@njit(cache=True, nogil=True, inline="always")
def beats(W, N, i, j, a):
    """p̂_ij > 1/2 + sqrt(a / N_ij), false while N_ij = 0 (radius +∞, p̂_ij(0) = 1/2)."""
    n = N[i, j]
    return n > 0.0 and W[i, j] / n > 0.5 + math.sqrt(a / n)


@njit(cache=True, nogil=True)
def defeated_sets(W, N, act, a, D):
    """Alg. 1 line 5: D[i, j] = (j ∈ D_r(i)) for active i, j; c_ij = sqrt(a / N_ij), a = 2 ln(2K² q_{r-1})."""
    K = act.shape[0]
    for i in range(K):
        for j in range(K):
            D[i, j] = act[i] and act[j] and i != j and beats(W, N, i, j, a)


@njit(cache=True, nogil=True)
def pick_candidate(D, act, rng):
    """Alg. 1 line 6: i_r = argmax_{i ∈ A} |D_r(i)|, ties uniformly at random (binding decision)."""
    K = act.shape[0]
    best = -1
    cand = -1
    ties = 0
    for i in range(K):
        if not act[i]:
            continue
        s = 0
        for j in range(K):
            if D[i, j]:
                s += 1
        if s > best:
            best = s
            cand = i
            ties = 1
        elif s == best:
            ties += 1
            if rng.integers(0, ties) == 0:
                cand = i
    return cand


@njit(cache=True, nogil=True)
def round_pairs(D, act, ir, sel, pa, pb):
    """Alg. 1 lines 7-11 as a set of unordered pairs (a < b), written to pa/pb in lexicographic order.

    i ∈ D_r(i_r): the pair {i_r, i}; otherwise {i, j} for every active j ≠ i (self-pairs skipped).
    ``sel`` is a K×K scratch matrix. Returns the number m of distinct pairs.
    """
    K = act.shape[0]
    sel[:, :] = False
    for i in range(K):
        if not act[i] or i == ir:
            continue
        if D[ir, i]:  # lines 8-9: the candidate is the anchor against the arms it defeats
            sel[min(i, ir), max(i, ir)] = True
        else:  # lines 10-11: an undefeated arm meets every active arm
            for j in range(K):
                if act[j] and j != i:
                    sel[min(i, j), max(i, j)] = True
    return collect_pairs(sel, pa, pb)


@njit(cache=True, nogil=True)
def literal_pairs(D, act, ir, pa, pb):
    """Alg. 1 lines 7-11 read literally (variant ``pairs="literal"``): a multiset of pairs, written to pa/pb.

    For i ∈ A ∖ {i_r}: if i ∈ D_r(i_r), the pair (i_r, i) (lines 8-9); otherwise (i, j) for *every* j ∈ A,
    j = i included (lines 10-11). Nothing is merged: {i, j} appears twice when both i and j are undefeated
    by i_r, and (i, i) once per undefeated i. Entries are stored with a ≤ b, in the order generated.
    pa/pb need K² slots. Returns the number m of entries.
    """
    K = act.shape[0]
    m = 0
    for i in range(K):
        if not act[i] or i == ir:
            continue
        if D[ir, i]:  # lines 8-9
            pa[m] = min(i, ir)
            pb[m] = max(i, ir)
            m += 1
        else:  # lines 10-11, j = i not skipped
            for j in range(K):
                if act[j]:
                    pa[m] = min(i, j)
                    pb[m] = max(i, j)
                    m += 1
    return m


@njit(cache=True, nogil=True)
def collect_pairs(sel, pa, pb):
    """Upper-triangular selection matrix -> pair lists in lexicographic order; returns m."""
    K = sel.shape[0]
    m = 0
    for a in range(K):
        for b in range(a + 1, K):
            if sel[a, b]:
                pa[m] = a
                pb[m] = b
                m += 1
    return m


@njit(cache=True, nogil=True)
def run_batch(P, T, tab, grid, cum, out, pos, rng, W, N, pa, pb, m, qr):
    """One batch: every listed pair q_r times, round-robin, truncated at T; then update W and N.

    A pair listed twice (literal variant) is run twice as often: its entries are updated one after another.

    Regret is recorded per comparison (q_r passes over the m pairs); the outcomes of a pair are one
    Binomial(n, P[a, b]) draw, since nothing inside a batch depends on them.
    """
    remaining = T - pos[0]
    if m * qr <= remaining:
        full = qr
        extra = 0
    else:  # the last batch: full passes, then a partial pass over the first `extra` pairs
        full = remaining // m
        extra = remaining - full * m
    for _ in range(full):
        for k in range(m):
            record(tab, grid, cum, out, pos, pa[k], pb[k], 1)
    for k in range(extra):
        record(tab, grid, cum, out, pos, pa[k], pb[k], 1)
    for k in range(m):
        n = full + 1 if k < extra else full
        if n == 0:
            continue
        a = pa[k]
        b = pb[k]
        if a == b:  # a self-duel (literal variant only) carries no information: regret only, no update
            continue
        w = rng.binomial(n, P[a, b])
        W[a, b] += w
        W[b, a] += n - w
        N[a, b] += n
        N[b, a] += n


@njit(cache=True, nogil=True)
def hoeffding_eliminate(W, N, act, a):
    """Alg. 1 lines 13-14: drop every j with ∃ i ∈ A: p̂_ij > 1/2 + γ_ij, γ_ij = sqrt(a / N_ij),
    a = ln(K² B T) / 2; all at once against the active set of the round. Returns the number removed.

    A confident cycle (impossible under the analysis' good event) would empty A; then nothing is removed.
    """
    K = act.shape[0]
    drop = np.zeros(K, np.bool_)
    nd = 0
    na = 0
    for j in range(K):
        if not act[j]:
            continue
        na += 1
        for i in range(K):
            if act[i] and i != j and beats(W, N, i, j, a):
                drop[j] = True
                nd += 1
                break
    if nd == na:
        return 0
    for j in range(K):
        if drop[j]:
            act[j] = False
    return nd


@njit(cache=True, nogil=True, inline="always")
def kl_half(p):
    """KL(Bern(p) ‖ Bern(1/2)) with 0 log 0 = 0."""
    v = math.log(2.0)
    if p > 0.0:
        v += p * math.log(p)
    if p < 1.0:
        v += (1.0 - p) * math.log(1.0 - p)
    return v


@njit(cache=True, nogil=True)
def kl_index(W, N, I):
    """App. A: I_j = Σ_{i : p̂_ij > 1/2} N_ij KL(p̂_ij, 1/2), summed over all K arms (docs/decisions.md#c2b-batches)."""
    K = W.shape[0]
    for j in range(K):
        s = 0.0
        for i in range(K):
            n = N[i, j]
            if n > 0.0:
                p = W[i, j] / n
                if p > 0.5:
                    s += n * kl_half(p)
        I[j] = s
    return I


@njit(cache=True, nogil=True)
def kl_eliminate(W, N, act, thresh, I):
    """Alg. 2 lines 13-14: drop every active j with I_j − min_{A} I > thresh = ln T + f(K).

    The minimiser is never dropped, so A stays non-empty. Returns the number removed.
    """
    K = act.shape[0]
    kl_index(W, N, I)
    imin = np.inf
    for j in range(K):
        if act[j] and I[j] < imin:
            imin = I[j]
    nd = 0
    for j in range(K):
        if act[j] and I[j] - imin > thresh:
            act[j] = False
            nd += 1
    return nd


@njit(cache=True, nogil=True)
def only_arm(act):
    """The single active arm, or -1 when |A| > 1."""
    arm = -1
    for i in range(act.shape[0]):
        if act[i]:
            if arm >= 0:
                return -1
            arm = i
    return arm


@njit(cache=True, nogil=True)
def c2b_kernel(P, T, tab, grid, rng, B, use_kl, kweight, literal=False):
    K = P.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    W = np.zeros((K, K))
    N = np.zeros((K, K))
    act = np.ones(K, np.bool_)
    D = np.zeros((K, K), np.bool_)
    sel = np.zeros((K, K), np.bool_)
    I = np.zeros(K)
    npair = K * K if literal else K * (K - 1) // 2  # literal: ordered pairs and self-pairs
    pa = np.empty(npair, np.int64)
    pb = np.empty(npair, np.int64)
    q = T ** (1.0 / B)
    gamma_a = math.log(K * K * B * T) / 2.0  # eq. (2): γ_ij² N_ij
    kl_thresh = math.log(T) + kweight * K ** 1.01  # App. A: ln T + f(K)
    n_batches = 0
    r = 1
    while pos[0] < T:
        # Alg. 1 line 4: a single active arm is played against itself for the remaining trials
        arm = only_arm(act)
        if arm >= 0:
            record(tab, grid, cum, out, pos, arm, arm, T - pos[0])
            n_batches += 1
            break
        # lines 5-6: defeated sets with c_ij(r-1) (q_0 = 1), and the candidate
        c_a = 2.0 * math.log(2.0 * K * K * batch_size(q, r - 1))
        defeated_sets(W, N, act, c_a, D)
        ir = pick_candidate(D, act, rng)
        # lines 7-11: the batch, each distinct pair q_r times (literal variant: the multiset, each entry q_r times)
        if literal:
            m = literal_pairs(D, act, ir, pa, pb)
        else:
            m = round_pairs(D, act, ir, sel, pa, pb)
        run_batch(P, T, tab, grid, cum, out, pos, rng, W, N, pa, pb, m, batch_size(q, r))
        n_batches += 1
        # lines 12-14: elimination (Hoeffding for C2B, KL for C2B-KL)
        if use_kl:
            kl_eliminate(W, N, act, kl_thresh, I)
        else:
            hoeffding_eliminate(W, N, act, gamma_a)
        r += 1
    return out, n_batches, pos[0]


def run(instance, T, tab, grid, rng, *, B, B_offset, kweight=0.0, use_kl=False, pairs="once", B_log="e"):
    nb = resolve_batches(T, B, B_offset, B_log)
    return c2b_kernel(instance.P, T, tab, grid, rng, nb, use_kl, kweight, pairs == "literal")


def run_kl(instance, T, tab, grid, rng, *, B, B_offset, kweight, pairs="once", B_log="e"):
    return run(instance, T, tab, grid, rng, B=B, B_offset=B_offset, kweight=kweight, use_kl=True, pairs=pairs,
               B_log=B_log)


CITATION = ("Agarwal, Ghuge, Nagarajan, An Asymptotically Optimal Batched Algorithm for the Dueling Bandit "
            "Problem, NeurIPS 2022")

B_PARAMS = (
    Param("B", "int", None, "number of batches B; None = floor(ln T) + B_offset", low=1, allow_none=True),
    Param("B_offset", "int", 0, "added to floor(ln T) when B is None (Fig. 2: 6); B is at least 1"),
)

# variants of our reading; defaults reproduce the reading of docs/decisions.md#c2b-batches, so existing cell ids do
# not change
VARIANT_PARAMS = (
    Param("pairs", "str", "once", "once: each distinct unordered pair q_r times per batch "
          "(docs/decisions.md#c2b-batches); literal: Alg. 1 lines 7-11 as written, pairs from both ends and (i, i) "
          "included", choices=("once", "literal")),
    Param("B_log", "str", "e", "log base of the default B: e (⌊ln T⌋, docs/decisions.md#c2b-batches) or 2 "
          "(⌊log₂ T⌋, a variant)", choices=LOG_BASES),
)

SPECS = {
    "c2b": AlgorithmSpec(
        name="c2b",
        ns_per_step=21,
        colour="#ff9896",
        label="C2B",
        problem="duel",
        citation=CITATION + " (Alg. 1)",
        run=run,
        params=B_PARAMS + VARIANT_PARAMS,
        batched=True,
    ),
    "c2b-kl": AlgorithmSpec(
        name="c2b-kl",
        ns_per_step=6,
        colour="#d62728",
        label="C2B-KL",
        problem="duel",
        citation=CITATION + " (Alg. 2, App. A)",
        run=run_kl,
        params=B_PARAMS + (
            Param("kweight", "float", 0.3, "f(K) = kweight * K^1.01 in the KL elimination", low=0.0),
        ) + VARIANT_PARAMS,
        batched=True,
    ),
}
