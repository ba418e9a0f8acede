"""DP-SE — differentially private successive elimination (Sajed & Sheffet, ICML 2019).

docs/decisions.md#dp-se: epoch e has Δ_e = 2^{-e} and every active arm is pulled
R_e = ⌈max{32 ln(8|S|e²/β)/Δ_e², 8 ln(4|S|e²/β)/(ε Δ_e)}⌉ times on fresh samples; the private mean is the
epoch mean plus Lap(1/(ε R_e)); an arm is dropped when μ̃_max − μ̃_a > Δ_e/2. The last arm is pulled until T.
ε = 0.5 and β = 1/T as in Azize & Basu's runs. The pulls of an epoch are interleaved round-robin (so R(t) is
smooth); only the epoch's reward sum matters, drawn as one Binomial(R_e, μ_a) per arm (the law of R_e
Bernoulli rewards). If T ends inside an epoch the run stops there.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from banditrepro.algorithms.base import AlgorithmSpec, Param, Privacy
from banditrepro.recorder import new_recorder, record


@njit(cache=True, nogil=True)
def epoch_length(n_active, e, beta, eps, cap):
    """R_e of epoch e with n_active arms, capped at ``cap`` (the rounds left) to stay in int64."""
    d = 2.0**-e
    a = 32.0 * math.log(8.0 * n_active * e * e / beta) / (d * d)
    b = 8.0 * math.log(4.0 * n_active * e * e / beta) / (eps * d)
    R = math.ceil(max(a, b))
    return cap if R >= cap else int(R)


@njit(cache=True, nogil=True)
def eliminate(active, n_active, mu_tilde, delta):
    """Keep the arms with μ̃_max − μ̃_a <= Δ_e/2 (order preserved in ``active[:n]``); return the new count."""
    best = -math.inf
    for k in range(n_active):
        best = max(best, mu_tilde[active[k]])
    n = 0
    for k in range(n_active):
        a = active[k]
        if best - mu_tilde[a] <= delta / 2.0:
            active[n] = a
            n += 1
    return n


@njit(cache=True, nogil=True)
def dp_se_kernel(mu, T, tab, grid, rng, eps, beta):
    K = mu.shape[0]
    cum, out, pos = new_recorder(tab, grid)
    active = np.arange(K)
    n_active = K
    mu_tilde = np.zeros(K)
    t = 0
    e = 0
    while n_active > 1 and t < T:
        e += 1
        delta = 2.0**-e
        R = epoch_length(n_active, e, beta, eps, T + 1)
        # Pull every active arm R_e times (round-robin), stopping at T.
        done = True
        for _ in range(R):
            for k in range(n_active):
                if t >= T:
                    done = False
                    break
                record(tab, grid, cum, out, pos, active[k], active[k], 1)
                t += 1
            if not done:
                break
        if not done:
            break
        # Private epoch means: fresh-sample mean + Lap(1/(ε R_e)); then eliminate.
        for k in range(n_active):
            a = active[k]
            mu_tilde[a] = rng.binomial(R, mu[a]) / R + rng.laplace(0.0, 1.0 / (eps * R))
        n_active = eliminate(active, n_active, mu_tilde, delta)
    # One arm left: pull it until T.
    if t < T:
        record(tab, grid, cum, out, pos, active[0], active[0], T - t)
    return out, 0, pos[0]


def run(instance, T, tab, grid, rng, *, epsilon, beta):
    b = 1.0 / T if beta is None else beta
    return dp_se_kernel(instance.means, T, tab, grid, rng, epsilon, b)


def _epsilon(params: dict, T: int) -> float:
    """(ε, 0)-DP for every horizon: each reward enters one Laplace-noised statistic."""
    return float(params["epsilon"])


SPECS = {
    "dp-se": AlgorithmSpec(
        name="dp-se",
        ns_per_step=1,
        colour="#8c6d31",
        privacy=Privacy("pure", _epsilon, "(ε, 0)-DP, ε = {epsilon:g} (Laplace mechanism)"),
        label="DP-SE",
        problem="mab",
        citation="Sajed & Sheffet, An optimal private stochastic-MAB algorithm based on an optimal private "
                 "stopping rule, ICML 2019",
        run=run,
        params=(
            Param("epsilon", "float", 0.5, "privacy parameter ε of the Laplace mechanism", low=0.0, low_open=True),
            Param("beta", "float", None, "failure probability β (None = 1/T)", low=0.0, high=1.0, low_open=True,
                  high_open=True, allow_none=True),
        ),
    )
}
