"""thompson-duels: a learning dueling policy written for this example, Thompson sampling on the win counts.

Every step it draws one plausible preference matrix from independent Beta posteriors of the duels seen so
far, θ_ij ~ Beta(prior + w_ij, prior + w_ji) with θ_ji = 1 − θ_ij, and takes as first arm the arm that beats
the most others in that draw (its Copeland winner, ties at random). It then draws, for every arm j, how likely
j is to beat the first arm, and takes the most likely as second arm (the first arm itself counts as 1/2, so
when no arm seems to beat it, it duels itself). Once the Condorcet winner stands out both draws pick it and
the (CW, CW) duel costs no regret, so the regret grows about logarithmically instead of linearly. The idea is
that of Double Thompson Sampling (Wu & Liu, NeurIPS 2016) without its confidence-bound pruning; plain Python
and numpy, about 30 µs a step.
"""

import numpy as np

from banditrepro.algorithms import AlgorithmSpec, Param
from banditrepro.plugins import Recorder


def first_arm(wins: np.ndarray, prior: float, rng) -> int:
    """The Copeland winner of one posterior draw of the preference matrix (ties at random)."""
    K = wins.shape[0]
    upper = np.triu_indices(K, 1)
    draw = rng.beta(prior + wins[upper], prior + wins.T[upper])  # θ_ij for i < j
    beats = np.zeros((K, K), dtype=bool)
    beats[upper] = draw > 0.5
    beats.T[upper] = draw < 0.5
    score = beats.sum(axis=1)
    best = np.flatnonzero(score == score.max())
    return int(best[rng.integers(best.size)]) if best.size > 1 else int(best[0])


def run(instance, T, tab, grid, rng, *, prior):
    """The kernel contract of banditrepro.plugins: returns (out, n_batches, steps)."""
    P = instance.P
    wins = np.zeros(P.shape)  # wins[i, j]: duels of i against j that i won
    rec = Recorder(tab, grid)
    for _ in range(T):
        i = first_arm(wins, prior, rng)
        challenge = rng.beta(prior + wins[:, i], prior + wins[i, :])  # how likely each j beats i
        challenge[i] = 0.5
        j = int(np.argmax(challenge))
        rec.play(i, j)
        if i != j:  # the duel: i beats j with probability P[i, j]
            if rng.random() < P[i, j]:
                wins[i, j] += 1
            else:
                wins[j, i] += 1
    return rec.result()


SPEC = AlgorithmSpec(
    name="thompson-duels",
    label="Thompson duels (plugin)",
    problem="duel",
    citation="example plugin of banditrepro (examples/plugin), after Wu & Liu, Double Thompson Sampling (2016)",
    run=run,
    params=(Param("prior", "float", 1.0, "Beta prior pseudo-counts of every pair (both sides)", low=0.0,
                  low_open=True),),
)
