"""uniform-pairs: every step duels two arms drawn independently and uniformly at random.

A non-learning reference policy, written in plain Python to show the smallest plugin: the expected
regret per step is the mean over arms of Δ_i (each arm of the pair is uniform), so its cumulative
regret grows linearly at that rate, the line any learning algorithm must bend away from.
"""

from banditrepro.algorithms import AlgorithmSpec, Param
from banditrepro.plugins import Recorder


def run(instance, T, tab, grid, rng, *, self_duels):
    """The kernel contract of banditrepro.plugins: returns (out, n_batches, steps)."""
    P = instance.P
    K = P.shape[0]
    rec = Recorder(tab, grid)
    wins = [[0] * K for _ in range(K)]  # what a learner would see; kept to show the feedback loop
    for _ in range(T):
        i = int(rng.integers(0, K))
        j = int(rng.integers(0, K))
        while j == i and not self_duels:
            j = int(rng.integers(0, K))
        rec.play(i, j)
        if i != j:  # the duel: i beats j with probability P[i, j]
            if rng.random() < P[i, j]:
                wins[i][j] += 1
            else:
                wins[j][i] += 1
    return rec.result()


SPEC = AlgorithmSpec(
    name="uniform-pairs",
    label="Uniform pairs (plugin)",
    problem="duel",
    citation="example plugin of banditrepro (examples/plugin)",
    run=run,
    params=(Param("self_duels", "bool", True, "allow i = j (independent draws); false: two distinct arms"),),
)
