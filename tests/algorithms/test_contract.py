"""One contract, checked for every registered algorithm (built in and installed plugins alike): the spec's
fields are valid, the same seed gives the same bytes, another run a different stream, and the regret curves
obey their invariants. Algorithm-specific behaviour is tested in the test_alg_*.py files beside this one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.colors import is_color_like

from banditrepro import algorithms
from banditrepro.algorithms.base import DEFAULT_NS_PER_STEP, PLUGIN_COLOURS, Privacy
from banditrepro.seeds import cell_generator

NAMES = algorithms.names(plugins=True)
T = 3000
T_STREAM = 20_000  # DP-SE draws only at its epochs' ends (its first ends after ~11k pulls)


def _instance(spec, six_rankers, bernoulli5):
    return six_rankers if spec.problem == "duel" else bernoulli5


def test_the_example_plugin_is_among_the_checked_algorithms():
    assert "uniform-pairs" in NAMES  # examples/plugin is installed in the venv (README)


@pytest.mark.parametrize("name", NAMES)
def test_spec_fields_are_valid(name):
    spec = algorithms.get(name)
    assert spec.name == name and spec.label and spec.citation
    assert spec.problem in ("duel", "mab")
    spec.resolve({})  # the defaults pass their own checks
    assert spec.cost_ns_per_step > 0 and math.isfinite(spec.cost_ns_per_step)
    assert is_color_like(spec.line_colour)
    if spec.privacy is not None:
        assert isinstance(spec.privacy, Privacy)
        level = spec.privacy.level(spec.resolve({}), 10**4)
        assert level > 0 and math.isfinite(level)
        spec.privacy.formula.format(**spec.resolve({}))


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_bytes_other_run_other_stream(name, simulate, six_rankers, bernoulli5, monkeypatch):
    import banditrepro.cell as cell

    streams = []

    def recording_generator(*key):
        rng = cell_generator(*key)
        streams.append((rng, rng.bit_generator.state["state"]["state"]))
        return rng

    monkeypatch.setattr(cell, "cell_generator", recording_generator)
    inst = _instance(algorithms.get(name), six_rankers, bernoulli5)
    a, b, c = (simulate(name, inst, T_STREAM, run=r) for r in (0, 0, 1))
    for m in a.curves:
        assert a.curves[m].tobytes() == b.curves[m].tobytes()
    assert a.n_batches == b.n_batches
    (r0, s0), (_, s0_again), (r1, s1) = streams
    assert s0 == s0_again and s1 != s0  # the other run gets another stream …
    assert r0.bit_generator.state["state"]["state"] != s0  # … and the kernel draws from the one it is given


@pytest.mark.parametrize("name", NAMES)
def test_regret_invariants(name, simulate, six_rankers, bernoulli5):
    res = simulate(name, _instance(algorithms.get(name), six_rankers, bernoulli5), T)
    assert res.grid[-1] == T and np.all(np.diff(res.grid) > 0)
    for m, curve in res.curves.items():
        assert curve.shape == res.grid.shape
        assert np.all(curve >= -1e-12), m  # every step's regret is non-negative
        assert np.all(np.diff(curve) >= -1e-9), m  # cumulative: never decreases
        assert curve[-1] <= T * (1 + 1e-12), m  # at most 1 per step


def test_a_spec_without_colour_or_cost_gets_the_documented_defaults():
    spec = algorithms.AlgorithmSpec("my-algo", "Mine", "duel", "me", run=lambda *a, **k: None)
    assert spec.cost_ns_per_step == DEFAULT_NS_PER_STEP
    assert spec.line_colour in PLUGIN_COLOURS
    assert spec.line_colour == algorithms.AlgorithmSpec("my-algo", "x", "mab", "y", run=None).line_colour
