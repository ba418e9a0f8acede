"""WS-W, literally: Chen & Frazier, "Dueling Bandits with Weak Regret" (ICML 2017), Algorithm 1, as the
paper's §4 text and docs/decisions.md#winner-stays state it (the extracted text lacks the box):

    C(t, i) = Σ_{j≠i} q_ij(t) − q_ji(t)            (net wins up to and including t)
    i_t ∈ argmax_i C(t−1, i),       ties: i_{t−1} if tied, else j_{t−1} if tied, else uniform
    j_t ∈ argmax_{j≠i_t} C(t−1, j), ties: the same preference for the previous pair, else uniform

At t = 1 every C is 0 and there is no previous pair: "WS-W pulls two randomly chosen arms" (§4 example).
"""

from __future__ import annotations

from tests.reference.regret import DuelRegret


class WinnerStays:
    """The state of Algorithm 1 (C and the previous pair); ``step`` plays one duel and returns it."""

    def __init__(self, P, rng):
        self.P = P
        self.rng = rng
        self.K = len(P)
        self.C = [0] * self.K
        self.prev = None  # (i_{t-1}, j_{t-1})

    def _choose(self, arms):
        """argmax of C over ``arms``; ties -> i_{t−1}, then j_{t−1}, else uniform (§4: "we break ties to
        prioritize pulling previously pulled arms")."""
        top = max(self.C[a] for a in arms)
        M = [a for a in arms if self.C[a] == top]
        if self.prev is not None:
            for a in self.prev:
                if a in M:
                    return a
        return M[int(self.rng.integers(len(M)))]

    def step(self):
        i = self._choose(range(self.K))
        j = self._choose([a for a in range(self.K) if a != i])
        winner, loser = (i, j) if self.rng.random() < self.P[i][j] else (j, i)
        self.C[winner] += 1  # q_{winner, loser} += 1
        self.C[loser] -= 1
        self.prev = (i, j)
        return i, j


def ws_w(P, T: int, rng, marks=()):
    meter = DuelRegret(P, marks)
    ws = WinnerStays(P, rng)
    for _ in range(T):
        meter.add(*ws.step())
    return meter
