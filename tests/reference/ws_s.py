"""WS-S, literally: Chen & Frazier (ICML 2017), Algorithm 2 (§4.3 text and docs/decisions.md#winner-stays), β > 1 (β =
1.1 in §5):

    for ℓ = 1, 2, ...:
        exploration: run WS-W (Algorithm 1, its state never reset) until round ℓ ends, i.e. until
                     C(t, Z) = (N−1)ℓ for one arm Z and C(t, i) = −ℓ for all others (§4's definition of t_ℓ);
        exploitation: duel (k, k) ⌊β^ℓ⌋ times, k = argmax_i C(t, i) = Z(ℓ); these duels do not change C.

WS-W is a subroutine: its previous pair (for the tie rule) is its own last duel, not the (k, k) duels.
"""

from __future__ import annotations

import math

from tests.reference.regret import DuelRegret
from tests.reference.ws_w import WinnerStays


def round_over(C, ell) -> bool:
    N = len(C)
    return sum(c == (N - 1) * ell for c in C) == 1 and sum(c == -ell for c in C) == N - 1


def ws_s(P, T: int, rng, beta: float = 1.1, marks=()):
    meter = DuelRegret(P, marks)
    ws = WinnerStays(P, rng)
    ell = 1
    while meter.t < T:
        # exploration phase of round ℓ
        while meter.t < T and not round_over(ws.C, ell):
            meter.add(*ws.step())
        if meter.t >= T:
            break
        # exploitation phase: k = argmax C, (k, k) for ⌊β^ℓ⌋ steps (cut at T)
        k = max(range(len(P)), key=lambda a: ws.C[a])
        meter.add(k, k, min(math.floor(beta**ell), T - meter.t))
        ell += 1
    return meter
