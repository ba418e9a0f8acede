"""Winner Stays' simulated data as a generative model: a fresh utility instance per run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.aggregate import load_summary, write_summary
from banditrepro.cell import load_npz, run_cell, write_cell
from banditrepro.datasets.catalog import load_catalog, load_prepared
from banditrepro.datasets.derive import utility_model
from banditrepro.instances import PreferenceMatrix, UtilityModel
from banditrepro.papers.winner_stays.figures import top_gap_stats
from banditrepro.seeds import cell_seed_sequence, instance_seed_sequence

CATALOG = Path(__file__).resolve().parents[2] / "config" / "datasets.yaml"
SEED = 12345


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prep")
    cat = load_catalog(CATALOG)
    for name in ("utility10", "utility100", "utility10-fixed", "utility100-fixed"):
        assert cat.raw_inputs(name) == []
        cat.prepare(name, folder / "raw", folder)
    return folder


def test_generative_dataset_is_prepared_as_a_model(prepared):
    rec = json.loads((prepared / "utility10.json").read_text())
    assert rec["generative"] == {"model": "utility_model", "n": 10} and "matrix" not in rec
    model = load_prepared(prepared / "utility10.json")
    assert isinstance(model, UtilityModel) and model.n_arms == 10 and model.name == "utility10"
    assert load_prepared(prepared / "utility100.json").n_arms == 100


def test_fixed_datasets_keep_the_former_single_draws(prepared):
    # utility10/utility100 used to be these draws (seeds 10 and 100); their top gaps are the near-ties
    # p_12 = 0.50046 and 0.50095 that motivated the change
    for name, n, seed, gap in (("utility10-fixed", 10, 10, 0.00046214691219548243),
                               ("utility100-fixed", 100, 100, 0.0009486944768190009)):
        inst = load_prepared(prepared / f"{name}.json")
        P, u = utility_model(n, seed)
        assert isinstance(inst, PreferenceMatrix) and np.array_equal(inst.P, P)
        assert inst.P[0, 1] - 0.5 == pytest.approx(gap, rel=1e-12)
        assert json.loads((prepared / f"{name}.json").read_text())["utilities"] == u.tolist()


def test_runs_draw_different_instances_and_every_algorithm_of_a_run_the_same(prepared):
    model = load_prepared(prepared / "utility10.json")
    by_run = {}
    for run in (0, 1, 2):
        drawn = [run_cell(alg, None, model, 300, run, SEED).drawn for alg in ("ws-w", "rucb", "ws-s")]
        for d in drawn[1:]:  # same (base seed, run): same instance whatever the algorithm
            assert np.array_equal(d["instance_utilities"], drawn[0]["instance_utilities"])
        u = drawn[0]["instance_utilities"]
        assert u.shape == (10,) and np.all(np.diff(u) < 0) and 0 <= u.min() and u.max() <= 1
        assert drawn[0]["instance_top_gap"] == pytest.approx((u[0] - u[1]) / 2, abs=1e-15)
        by_run[run] = u
    assert not np.array_equal(by_run[0], by_run[1]) and not np.array_equal(by_run[1], by_run[2])
    # and a different base seed draws another instance for the same run
    other = run_cell("ws-w", None, model, 300, 0, SEED + 1).drawn["instance_utilities"]
    assert not np.array_equal(other, by_run[0])


def test_regret_is_measured_on_the_runs_instance(prepared):
    # the generative cell equals the cell of its drawn matrix given explicitly under the same name (the
    # algorithm's stream depends on the name and run only), and differs from the fixed draw's cell
    model = load_prepared(prepared / "utility10.json")
    run = 4
    gen = run_cell("ws-w", None, model, 2000, run, SEED)
    drawn, u = model.draw(instance_seed_sequence(SEED, "utility10", run))
    assert np.array_equal(u, gen.drawn["instance_utilities"]) and drawn.name == "utility10"
    explicit = run_cell("ws-w", None, PreferenceMatrix(drawn.P, name="utility10"), 2000, run, SEED)
    for metric in gen.curves:
        assert np.array_equal(gen.curves[metric], explicit.curves[metric]), metric
    fixed = load_prepared(prepared / "utility10-fixed.json")
    fixed_named = run_cell("ws-w", None, PreferenceMatrix(fixed.P, name="utility10"), 2000, run, SEED)
    assert not np.array_equal(gen.curves["strong_regret_utility"], fixed_named.curves["strong_regret_utility"])
    # utility regret is in units of this run's utilities: the strong regret per step is u_1 − (u_i + u_j)/2
    # ≤ u_1 − u_K, so R(T) ≤ T (u_1 − u_K) of the drawn u
    assert 0 < gen.curves["strong_regret_utility"][-1] <= 2000 * (u[0] - u[-1]) + 1e-9


def test_instance_stream_is_apart_from_the_algorithms():
    a = cell_seed_sequence(SEED, "utility10", 3).generate_state(4)
    b = instance_seed_sequence(SEED, "utility10", 3).generate_state(4)
    assert not np.array_equal(a, b)
    assert np.array_equal(b, instance_seed_sequence(SEED, "utility10", 3).generate_state(4))
    with pytest.raises(ValueError):
        instance_seed_sequence(SEED, "utility10", -1)


def test_cells_record_the_instance_and_summary_keeps_the_top_gaps(prepared, tmp_path):
    model = load_prepared(prepared / "utility10.json")
    paths = []
    for run in range(5):
        res = run_cell("ws-w", None, model, 500, run, SEED)
        p = tmp_path / f"{run}.npz"
        write_cell(res, p)
        cell = load_npz(p)
        assert cell["instance"] == "utility10"  # summarize's same-instance check stays valid
        assert np.array_equal(cell["instance_utilities"], res.drawn["instance_utilities"])
        paths.append(p)
    write_summary(paths, tmp_path / "s.npz")
    s = load_summary(tmp_path / "s.npz")
    gaps = np.array([load_npz(p)["instance_top_gap"] for p in paths])
    assert np.array_equal(s["instance_top_gap"], gaps) and s["instance_utilities"].shape == (5, 10)
    st = top_gap_stats(s)
    assert st["top_gap_median"] == pytest.approx(np.median(gaps))
    assert st["top_gap_q05"] <= st["top_gap_median"] <= st["top_gap_q95"]
    assert top_gap_stats({"weak_regret_utility_final": np.zeros(3)}) == {}
    # a cell of the fixed draw mixed in (no recorded instance) is refused, not silently dropped
    fixed = run_cell("ws-w", None, PreferenceMatrix(utility_model(10, 10)[0], name="utility10"), 500, 9, SEED)
    write_cell(fixed, tmp_path / "9.npz")
    with pytest.raises(ReproError, match=r"records \[.*instance_top_gap"):
        write_summary([*paths, tmp_path / "9.npz"], tmp_path / "t.npz")


def test_top_gap_distribution_is_wide_unlike_the_fixed_near_tie():
    # over 200 runs the N = 10 top gap (u_(1) − u_(2))/2 has mean 1/(2·11) ≈ 0.045 (the spacing of uniforms is
    # Beta(1, N)); the fixed draw's 0.00046 is below the 5 % quantile (≈ 0.0026)
    model = UtilityModel(10, name="utility10")
    g = np.array([model.draw(instance_seed_sequence(SEED, "utility10", r))[0].P[0, 1] - 0.5 for r in range(200)])
    assert abs(g.mean() - 1 / 22) < 4 * g.std(ddof=1) / np.sqrt(200)
    assert np.quantile(g, 0.05) > 0.00046214691219548243
