"""thompson-duels, the learning algorithm of the example plugin (examples/plugin): what it must do as a
learner, beside the contract every registered algorithm passes (tests/algorithms/test_contract.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from banditrepro import ReproError, algorithms
from banditrepro.instances import PreferenceMatrix
from tests.conftest import SIX_RANKERS
from tests.helpers import played_pairs
from tests.interface.test_plugin import example_installed  # noqa: F401  (fixture: fails if not installed)


def kernel(P, T, tab, grid, rng, prior=1.0):
    return algorithms.get("thompson-duels").run(PreferenceMatrix(P, name="m"), T, tab, grid, rng, prior=prior)


def test_it_is_a_registered_dueling_plugin(example_installed):  # noqa: F811
    spec = algorithms.get("thompson-duels")
    assert spec.problem == "duel" and "thompson-duels" in algorithms.names(plugins=True)
    with pytest.raises(ReproError, match="prior must be > 0"):
        algorithms.algorithm_id("thompson-duels", {"prior": 0})


def test_without_data_the_first_arm_is_uniform(example_installed):  # noqa: F811
    """No duel seen: every draw is symmetric, so the Copeland winner of a draw is uniform over the K arms
    (ties at random). Chi-square over 6,000 draws at p = 0.001: a tie rule favouring low indices fails it."""
    from banditrepro_uniform_pairs.thompson import first_arm

    rng = np.random.default_rng(3)
    wins = np.zeros((6, 6))
    counts = np.bincount([first_arm(wins, 1.0, rng) for _ in range(6000)], minlength=6)
    assert stats.chisquare(counts).pvalue > 1e-3, counts


def test_a_clear_winner_of_the_duels_so_far_is_the_first_arm(example_installed):  # noqa: F811
    from banditrepro_uniform_pairs.thompson import first_arm

    wins = np.full((5, 5), 50.0)
    np.fill_diagonal(wins, 0)
    wins[2, :] = 500
    wins[2, 2] = 0
    rng = np.random.default_rng(0)
    assert {first_arm(wins, 1.0, rng) for _ in range(200)} == {2}


def test_it_learns_to_duel_the_condorcet_winner_with_itself(example_installed, easy3):  # noqa: F811
    """Large gaps (easy3): over the second half of 2,000 steps it plays (CW, CW) in at least 90 % of the
    steps (the uniform policy: 1/9)."""
    pairs = played_pairs(kernel, easy3.P, 2000, 5)
    late = pairs[1000:]
    assert np.mean((late[:, 0] == 0) & (late[:, 1] == 0)) >= 0.9


def test_its_regret_is_far_below_the_uniform_policys(example_installed, simulate, six_rankers):  # noqa: F811
    """six-rankers, T = 3,000, 4 runs: the uniform policy's regret is T·mean(Δ) ≈ 182 (every run within 4 sd
    of it, tests/interface/test_plugin.py); a learner's mean final regret must be below half of that, and
    its regret over the second half of the horizon below its first half's (it flattens)."""
    P = SIX_RANKERS
    uniform = 3000 * (P[0] - 0.5).mean()
    runs = [simulate("thompson-duels", six_rankers, 3000, run=r) for r in range(4)]
    finals = [float(r.curves["regret"][-1]) for r in runs]
    assert np.mean(finals) < 0.5 * uniform, (finals, uniform)
    grid = runs[0].grid
    half = int(np.searchsorted(grid, 1500))
    early = np.mean([r.curves["regret"][half] for r in runs])
    assert np.mean(finals) - early < early
