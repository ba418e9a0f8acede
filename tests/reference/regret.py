"""Regret, literally from the papers' definitions, accumulated one step (or n identical steps) at a time.

Dueling (C2B paper §1.2): a* is the Condorcet winner (P[a*, j] > 1/2 for all j ≠ a*), Δ_j = P[a*, j] − 1/2,
r(t) = (Δ_{i_t} + Δ_{j_t}) / 2. Winner Stays (§3 and §5): binary weak r(t) = 1[a* ∉ {i_t, j_t}], binary
strong r(t) = 1 − 1[i_t = j_t = a*], utility weak u_1 − max(u_i, u_j), utility strong u_1 − (u_i + u_j)/2
with u_i = 2(1 − p_{1,i}) (arm 1 = a*). Multi-armed (DP-TS-UCB paper §3): pseudo-regret Σ_t (μ_1 − μ_{i_t}).

``marks``: steps t at which R(t) is also kept (e.g. a mid-horizon value), exact inside a block of n steps.
"""

from __future__ import annotations

DUEL_METRICS = ("regret", "weak_regret_binary", "strong_regret_binary", "weak_regret_utility",
                "strong_regret_utility")  # the names the production cells use


def condorcet_winner(P) -> int:
    K = len(P)
    for a in range(K):
        if all(P[a][j] > 0.5 for j in range(K) if j != a):
            return a
    raise ValueError("no Condorcet winner")


class _Meter:
    names: tuple[str, ...] = ()

    def __init__(self, marks=()):
        self.t = 0
        self.total = [0.0] * len(self.names)
        self.marks = sorted(int(m) for m in marks)
        self.at = {}  # mark -> {metric: R(mark)}

    def _add(self, r: list[float], n: int) -> None:
        for m in self.marks:
            if self.t < m <= self.t + n:
                self.at[m] = {k: v + (m - self.t) * x for k, v, x in zip(self.names, self.total, r)}
        self.t += n
        self.total = [v + n * x for v, x in zip(self.total, r)]

    def finals(self) -> dict[str, float]:
        return dict(zip(self.names, self.total))


class DuelRegret(_Meter):
    """Every dueling metric; ``add(i, j, n)`` accounts n plays of the pair (i, j)."""

    names = DUEL_METRICS

    def __init__(self, P, marks=()):
        super().__init__(marks)
        self.cw = condorcet_winner(P)
        K = len(P)
        self.gap = [P[self.cw][j] - 0.5 for j in range(K)]
        self.u = [2.0 * (1.0 - P[self.cw][j]) for j in range(K)]

    def add(self, i: int, j: int, n: int = 1) -> None:
        cw, u, gap = self.cw, self.u, self.gap
        self._add([(gap[i] + gap[j]) / 2.0,
                   0.0 if cw in (i, j) else 1.0,
                   0.0 if i == j == cw else 1.0,
                   u[cw] - max(u[i], u[j]),
                   u[cw] - (u[i] + u[j]) / 2.0], n)


class PseudoRegret(_Meter):
    """R(T) = T·μ_1 − Σ_t μ_{i_t}; ``add(i, n)`` accounts n pulls of arm i."""

    names = ("regret",)

    def __init__(self, means, marks=()):
        super().__init__(marks)
        self.gap = [max(means) - m for m in means]

    def add(self, i: int, n: int = 1) -> None:
        self._add([self.gap[i]], n)
