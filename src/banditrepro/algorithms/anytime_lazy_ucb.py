"""Anytime-Lazy-UCB (Hu, Huang, Mehta 2021, arXiv 2102.07929) — RECONSTRUCTED stand-in
(docs/decisions.md#anytime-lazy-ucb).

The exact index constants of the paper were not found. Stand-in: the lazy epoch structure of Lazy-DP-TS
(fresh epochs of 1, 2, 4, … observations, private mean μ̃_j = (Σ fresh + Lap(1/ε)) / n_j over the last
completed epoch of n_j observations) with the AdaP-UCB index of Azize & Basu (2022),
    I_j(t) = μ̃_j + √(α ln(2t) / (2 n_j)) + α ln t / (ε n_j),   α = 3.1,
pulling the argmax (ties uniformly at random). Legends carry "(reconstructed)".
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param, Privacy
from banditrepro.algorithms.lazy_dp_ts import observe_lazy
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True, inline="always")
def index_terms(t, alpha, eps):
    """The arm-independent parts of the index at round t (1-based): √(α ln(2t) / 2) and α ln t / ε."""
    return math.sqrt(alpha * math.log(2.0 * t) / 2.0), alpha * math.log(t) / eps


@njit(cache=True, nogil=True, inline="always")
def ucb_index(mu_tilde_j, isqn, invn, sa2, b2):
    """I_j(t) = μ̃_j + √(α ln(2t) / (2n)) + α ln t / (ε n) for an arm whose last epoch had n observations,
    given 1/√n and 1/n."""
    return mu_tilde_j + sa2 * isqn + b2 * invn


@njit(cache=True, nogil=True)
def anytime_lazy_ucb_kernel(mu, T, tab, grid, rng, eps, alpha):
    K = mu.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    mu_tilde = np.zeros(K)
    r = np.zeros(K, np.int64)
    O = np.zeros(K, np.int64)
    esum = np.zeros(K)
    isqn = np.zeros(K)  # 1/√n and 1/n of the last completed epoch
    invn = np.zeros(K)
    t = 0
    # Initial epoch of size 1 (r = 0): one pull of every arm, published at once.
    for i in range(min(K, T)):
        record(tab, grid, cum, out, pos, i, i, 1)
        observe_lazy(i, mu, O, esum, r, mu_tilde, eps, rng)
        isqn[i] = 1.0
        invn[i] = 1.0
        t += 1
    while t < T:
        sa2, b2 = index_terms(t + 1.0, alpha, eps)  # round t+1 (1-based)
        # Pull the arm with the largest index (ties uniformly at random).
        i = 0
        best = -math.inf
        ties = 0
        for j in range(K):
            v = ucb_index(mu_tilde[j], isqn[j], invn[j], sa2, b2)
            if v > best:
                best = v
                i = j
                ties = 1
            elif v == best:
                ties += 1
                if rng.integers(0, ties) == 0:
                    i = j
        record(tab, grid, cum, out, pos, i, i, 1)
        n = observe_lazy(i, mu, O, esum, r, mu_tilde, eps, rng)
        if n:  # the epoch closed: the index now uses its n observations
            isqn[i] = 1.0 / math.sqrt(n)
            invn[i] = 1.0 / n
        t += 1
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, epsilon, alpha):
    return anytime_lazy_ucb_kernel(instance.means, T, tab, grid, rng, epsilon, alpha)


def _epsilon(params: dict, T: int) -> float:
    """(ε, 0)-DP for every horizon: each reward enters one Laplace-noised statistic."""
    return float(params["epsilon"])


SPECS = {
    "anytime-lazy-ucb": AlgorithmSpec(
        name="anytime-lazy-ucb",
        ns_per_step=51,
        colour="#637939",
        privacy=Privacy("pure", _epsilon, "(ε, 0)-DP, ε = {epsilon:g} (Laplace mechanism)"),
        label="Anytime-Lazy-UCB (reconstructed)",
        problem="mab",
        citation="Hu, Huang, Mehta, Near-optimal algorithms for differentially private online learning in a "
                 "stochastic environment, arXiv 2102.07929 (index: AdaP-UCB of Azize & Basu 2022)",
        run=run,
        params=(
            Param("epsilon", "float", 0.5, "privacy parameter ε of the Laplace mechanism", low=0.0, low_open=True),
            Param("alpha", "float", 3.1, "index exponent α of the AdaP-UCB stand-in (> 3 in its analysis)",
                  low=0.0, low_open=True),
        ),
        reconstructed=True,
    )
}
