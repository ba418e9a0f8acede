"""C2B-KL, literally: Agarwal, Ghuge, Nagarajan (NeurIPS 2022), Algorithm 2 (App. A) = Algorithm 1 with the
KL elimination criterion, read with the decisions of docs/decisions.md:

- B = ⌊ln T⌋ (+ B_offset; Fig. 2 uses 6), q = T^(1/B), q_r = ⌊q^r⌋, f(K) = 0.3·K^1.01, natural logs;
- a batch is the *set* of unordered pairs of lines 7-11 (duplicates merged, self-pairs skipped), each pair
  compared q_r times; the comparisons run round-robin over the pairs (lexicographic order) and the last
  batch is cut at T; if budget remains after round B, rounds continue (r > B);
- I_j sums over all K arms; the min I* is over the active set; ties in line 6 are uniform at random.
"""

from __future__ import annotations

import math

from tests.reference.regret import DuelRegret


def kl_bernoulli(p: float, q: float) -> float:
    """D_KL(B(p) ‖ B(q)) with 0 log 0 = 0."""
    d = 0.0
    if p > 0.0:
        d += p * math.log(p / q)
    if p < 1.0:
        d += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return d


def c2b_kl(P, T: int, rng, B: int | None = None, B_offset: int = 0, kweight: float = 0.3, marks=()):
    """One run; returns (DuelRegret meter, number of batches)."""
    K = len(P)
    if B is None:
        B = max(1, math.floor(math.log(T)) + B_offset)
    q = T ** (1.0 / B)  # "q = T^{1/B}"
    fK = kweight * K**1.01  # "we set f(K) = 0.3 K^{1.01}"
    meter = DuelRegret(P, marks)
    wins = [[0] * K for _ in range(K)]  # wins[i][j]: # i wins against j
    N = [[0] * K for _ in range(K)]  # N_{i,j}(r)

    def p_hat(i, j):  # eq. (7); p̂_ij(0) = 1/2 (line 2)
        return wins[i][j] / N[i][j] if N[i][j] else 0.5

    A = set(range(K))  # line 2: active arms A <- B, r <- 1
    r = 1
    batches = 0
    while meter.t < T:  # line 3 (we stop at exactly T comparisons)
        # line 4: a single active arm is played against itself for the remaining trials
        if len(A) == 1:
            (i,) = A
            meter.add(i, i, T - meter.t)
            batches += 1
            break
        # line 5: D_r(i) = {j ∈ A : p̂_ij(r-1) > 1/2 + c_ij(r-1)}, c_ij(r-1) = sqrt(2 log(2K² q_{r-1}) / N_ij(r-1))
        q_prev = math.floor(q ** (r - 1))
        D = {}
        for i in A:
            D[i] = set()
            for j in A:
                if j != i and N[i][j] > 0:  # N = 0: radius +∞, nothing is defeated yet
                    c = math.sqrt(2.0 * math.log(2.0 * K * K * q_prev) / N[i][j])
                    if p_hat(i, j) > 0.5 + c:
                        D[i].add(j)
        # line 6: i_r = argmax_{i ∈ A} |D_r(i)|, ties uniformly at random (docs/decisions.md#c2b-batches)
        best = max(len(D[i]) for i in A)
        tied = sorted(i for i in A if len(D[i]) == best)
        ir = tied[int(rng.integers(len(tied)))]
        # lines 7-11: the pairs of this batch
        pairs = set()
        for i in A - {ir}:  # line 7
            if i in D[ir]:  # line 8
                pairs.add((min(ir, i), max(ir, i)))  # line 9: compare (i_r, i)
            else:  # line 10
                for j in A:  # line 11: compare (i, j) for each j ∈ A (j = i skipped)
                    if j != i:
                        pairs.add((min(i, j), max(i, j)))
        pairs = sorted(pairs)
        # each pair q_r times, round-robin, truncated at T
        qr = math.floor(q**r)
        full, extra = divmod(min(qr * len(pairs), T - meter.t), len(pairs))
        counts = [full + (1 if k < extra else 0) for k in range(len(pairs))]
        for _ in range(full):
            for a, b in pairs:
                meter.add(a, b)
        for a, b in pairs[:extra]:
            meter.add(a, b)
        # the outcomes arrive together at the end of the batch
        for (a, b), n in zip(pairs, counts):
            if n == 0:
                continue
            w = int((rng.random(n) < P[a][b]).sum())  # n duels: a wins each w.p. p_ab
            wins[a][b] += w
            wins[b][a] += n - w
            N[a][b] += n
            N[b][a] += n
        batches += 1
        # line 12: p̂_ij(r); App. A: I_j(r) = Σ_{i : p̂_ij(r) ≥ 1/2} D_KL(p̂_ij(r), 1/2)·N_ij(r), over all K arms
        I = {}
        for j in range(K):
            s = 0.0
            for i in range(K):
                if i != j and N[i][j] > 0 and p_hat(i, j) >= 0.5:
                    s += kl_bernoulli(p_hat(i, j), 0.5) * N[i][j]
            I[j] = s
        I_star = min(I[j] for j in A)  # I*(r) = min_{j ∈ A} I_j(r)
        # lines 13-14: eliminate every j with I_j(r) − I*(r) > log(T) + f(K)
        A = {j for j in A if not I[j] - I_star > math.log(T) + fK}
        r += 1  # line 15
    return meter, batches
