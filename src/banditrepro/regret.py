"""Regret definitions as per-step tables.

Every metric is a table ``tab[m, i, j]`` = instantaneous regret of playing (i, j) at one step, so a
kernel accumulates all metrics of a run at once (one run gives binary and utility regret alike,
docs/decisions.md#regret). A multi-armed pull of arm i is recorded as the pair (i, i).
"""

from __future__ import annotations

import numpy as np

from banditrepro.instances import BernoulliArms, PreferenceMatrix

# Names end in / contain "regret": cell files store one array per metric under these names.
DUEL_METRICS = (
    "regret",  # C2B: (Δ_i + Δ_j) / 2
    "weak_regret_binary",  # WS: 1 unless the Condorcet winner is in the duel
    "strong_regret_binary",  # WS: 1 unless both arms are the Condorcet winner
    "weak_regret_utility",  # WS: u_1 − max(u_i, u_j)
    "strong_regret_utility",  # WS: u_1 − (u_i + u_j) / 2
)
MAB_METRICS = ("regret",)  # pseudo-regret μ* − μ_i


def utilities(instance: PreferenceMatrix) -> np.ndarray:
    """u_i = 2 (1 − p_{1,i}) with arm 1 the Condorcet winner (Winner Stays §5); u_1 = 1.

    For the utility model p_ij = (1 + u_i − u_j)/2 this recovers the utilities up to a shift, so the
    regret differences are exactly those of the model.
    """
    cw = instance.condorcet_winner
    return 2.0 * (1.0 - instance.P[cw])


def duel_regret_table(instance: PreferenceMatrix) -> np.ndarray:
    K = instance.n_arms
    cw = instance.condorcet_winner
    gap = instance.gaps
    u = utilities(instance)
    i, j = np.meshgrid(np.arange(K), np.arange(K), indexing="ij")
    tab = np.empty((len(DUEL_METRICS), K, K))
    tab[0] = (gap[i] + gap[j]) / 2
    tab[1] = ((i != cw) & (j != cw)).astype(float)
    tab[2] = ((i != cw) | (j != cw)).astype(float)
    tab[3] = u[cw] - np.maximum(u[i], u[j])
    tab[4] = u[cw] - (u[i] + u[j]) / 2
    return tab


def mab_regret_table(instance: BernoulliArms) -> np.ndarray:
    K = instance.n_arms
    tab = np.zeros((1, K, K))
    tab[0][np.arange(K), np.arange(K)] = instance.gaps
    return tab


def regret_table(instance) -> tuple[tuple[str, ...], np.ndarray]:
    if instance.kind == "duel":
        return DUEL_METRICS, duel_regret_table(instance)
    return MAB_METRICS, mab_regret_table(instance)
