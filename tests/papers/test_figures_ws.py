"""Winner Stays figure kinds (ws-curves, ws-matrices, ws-rounds), their manifest, and the claim tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.aggregate import load_summary, write_summary
from banditrepro.algorithms.winner_stays import ws_w_trace
from banditrepro.cell import run_cell, write_cell
from banditrepro.claims import check_figure
from banditrepro.figures import DRAWERS, build_figure
from banditrepro.figures.panels import panel_metrics
from banditrepro.instances import PreferenceMatrix
from banditrepro.manifest import cells, load_manifest
from banditrepro.papers.winner_stays.figures import late_share
from banditrepro.papers.winner_stays.instance_figures import iterations, matrices_table, rounds_table
from banditrepro.seeds import cell_generator
from tests.claim_data import noisy, write_runs
from tests.conftest import MSLR5, SIX_RANKERS
from tests.helpers import layout_at, summary_file

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "config/figures/winner-stays.yaml"


def _figs(path=MANIFEST, max_horizon=None):
    return {f.id: f for f in load_manifest(path, papers=["winner-stays", "wst"], max_horizon=max_horizon)}


def _write_prepared(folder: Path, name: str, P: np.ndarray, **extra) -> PreferenceMatrix:
    inst = PreferenceMatrix(P, name=name)
    rec = {"name": name, "kind": "duel", "matrix": inst.P.tolist(), "labels": list(inst.labels),
           "condorcet_winner": inst.condorcet_winner, "condorcet_label": inst.labels[inst.condorcet_winner],
           "min_margin": float(inst.gaps[inst.gaps > 0].min()), **extra}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(rec))
    return inst


# --- the manifest -----------------------------------------------------------------------------------


def test_manifest_is_complete_and_labels_reconstructions():
    figs = _figs()
    assert set(figs) == {"fig2-weak-regret", "fig3-strong-regret", "beta-sensitivity", "preference-matrices",
                         "rounds"}
    for f in figs.values():
        assert f.kind in DRAWERS, f.kind
    fig3 = figs["fig3-strong-regret"]
    refs = {r.key: r for r in fig3.panels[0].algorithms}
    assert set(refs) == {"ws-s", "if", "btm", "rucb", "rmed1", "rmed2", "ccb", "scb", "scb-alt"}
    assert refs["btm"].params["gamma"] == 1.3 and refs["rucb"].params["alpha"] == 0.51
    assert refs["ws-s"].params["beta"] == 1.1
    assert panel_metrics(fig3) == ["strong_regret_binary"] * 2 + ["strong_regret_utility"] * 2
    assert sorted(p.dataset for p in fig3.panels) == ["mslr5", "mslr5", "sushi16", "sushi16"]
    # reconstructions and the Yelp substitute are said in captions and legends
    assert "reconstructed" in refs["scb"].label and "reconstructed" in refs["scb-alt"].label
    fig2 = figs["fig2-weak-regret"]
    assert "reconstructed" in next(r for r in fig2.panels[0].algorithms if r.key == "qsa").label
    assert "QSA is reconstructed" in fig2.caption and "substitute for Yelp" in fig2.caption
    assert "SCB" in fig3.caption and "reconstructed" in fig3.caption
    betas = [r.params["beta"] for r in figs["beta-sensitivity"].panels[0].algorithms]
    assert betas == [1.05, 1.1, 1.2, 1.3, 1.5, 2.0, 3.0, 5.0, 10.0]  # docs/decisions.md#ws-beta-grid
    # WS-S β = 1.1 of Fig. 3 and of the β study is one cell; matrix/rounds figures need no cells
    ids = cells(list(figs.values()))
    lines = [(p.dataset, p.horizon, r.id) for f in figs.values() for p in f.panels for r in p.algorithms]
    assert ("sushi16", 100000, "ws-s") in ids and set(ids) == set(lines)
    assert lines.count(("sushi16", 100000, "ws-s")) >= 2  # drawn twice, computed once
    assert not cells([figs["preference-matrices"], figs["rounds"]])


def test_panel_metrics_must_match_the_panels(tmp_path):
    text = MANIFEST.read_text().replace("panel_metrics: [strong_regret_binary, strong_regret_binary, "
                                        "strong_regret_utility, strong_regret_utility]",
                                        "panel_metrics: [strong_regret_binary]", 1)
    bad = tmp_path / "ws.yaml"
    bad.write_text(text)
    with pytest.raises(ReproError, match="panel_metrics has 1 entries for 4 panels"):
        panel_metrics(_figs(bad)["fig3-strong-regret"])


def test_late_share():
    grid = np.arange(1, 101)
    assert late_share(grid, grid.astype(float)) == pytest.approx(0.5)
    assert late_share(grid, np.minimum(grid, 30).astype(float)) == 0.0
    assert late_share(grid, np.zeros(100)) == 0.0


# --- ws-curves end to end on real cells -------------------------------------------------------------

WST = """
wst:
  title: test paper
  figures:
    strong:
      title: strong
      kind: ws-curves
      axes: {yscale: log}
      layout: [1, 2]
      options: {panel_metrics: [strong_regret_binary, strong_regret_utility]}
      algorithms:
        - {name: ws-s, key: ws-s}
        - {name: rmed1, key: rmed1}
      panels:
        - {dataset: mslr5, horizon: 400, title: binary}
        - {dataset: mslr5, horizon: 400, title: utility}
      claims:
        - {id: c, text: beats, test: {kind: ws_beats_all, a: ws-s, others: [rmed1]}}
"""


@pytest.fixture(scope="module")
def wst_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("wst")
    prepared, root = base / "prepared", base / "summaries"
    inst = _write_prepared(prepared, "mslr5", MSLR5)
    (base / "wst.yaml").write_text(WST)
    fig = _figs(base / "wst.yaml")["strong"]
    for ref in fig.panels[0].algorithms:
        paths = []
        for run in range(3):
            res = run_cell(ref.name, ref.params, inst, 400, run, 11)
            paths.append(base / "cells" / ref.id / f"run{run}.npz")
            write_cell(res, paths[-1])
        write_summary(paths, summary_file("mslr5", 400, ref.id, root))
    return base, fig, prepared, root


def test_ws_curves_table_reads_each_panels_metric(wst_run):
    base, fig, prepared, root = wst_run
    out = base / "out"
    df = build_figure(fig, layout_at(base), out / "f.png", out / "f.pdf", out / "f.csv")
    for ext in ("png", "pdf", "csv", "md", "tex"):
        assert (out / f"f.{ext}").stat().st_size > 500
    assert list(df.metric) == ["strong_regret_binary"] * 2 + ["strong_regret_utility"] * 2
    for _, row in df.iterrows():
        s = load_summary(summary_file("mslr5", 400, row.algorithm_id, root))
        assert row.mean_final_regret == pytest.approx(s[f"{row.metric}_final"].mean())
        assert row.runs == 3 and 0.0 <= row.late_share <= 1.0
    b = df[(df.algorithm == "ws-s") & (df.panel_index == 0)].mean_final_regret.item()
    u = df[(df.algorithm == "ws-s") & (df.panel_index == 1)].mean_final_regret.item()
    assert b != u  # binary vs utility strong regret of the same runs
    rows = check_figure(fig, pd.read_csv(out / "f.csv"), layout_at(base))
    assert rows[0]["verdict"] in vd.VERDICTS and "holds for" in rows[0]["measured"] and "/2" in rows[0]["measured"]


# --- claim tests on hand-made summaries --------------------------------------------------------------


def _claim(tmp_path, test: dict, finals: dict, late: dict | None = None, metrics=("m_regret", "m_regret")):
    """Run one claim on a two-panel ws-curves figure; finals {key: [mean per panel]} become 30 paired runs
    around each mean (10 % noise), late {key: [late share per panel]} the runs' curves at T/2."""
    keys = list(finals)
    algos = "\n".join(f"        - {{name: ws-s, key: {k}, params: {{beta: {1.05 + 0.1 * i:.2f}}}}}"
                      for i, k in enumerate(keys))
    (tmp_path / "c.yaml").write_text(f"""
wst:
  title: t
  figures:
    f:
      title: f
      kind: ws-curves
      options: {{panel_metrics: [{metrics[0]}, {metrics[1]}]}}
      algorithms:
{algos}
      panels:
        - {{dataset: sushi16, horizon: 100}}
        - {{dataset: mslr5, horizon: 100}}
      claims:
        - {{id: x, text: x, test: {json.dumps(test)}}}
""")
    fig = _figs(tmp_path / "c.yaml")["f"]
    root = tmp_path / "summaries"
    for k, p in enumerate(fig.panels):
        for key in keys:
            ref = next(r for r in p.algorithms if r.key == key)
            f = noisy(finals[key][k], seed=k)
            share = (late or {}).get(key, [0.0, 0.0])[k]
            write_runs(root, p.dataset, p.horizon, ref.id, f, metrics=set(metrics), halves=f * (1 - share))
    return check_figure(fig, pd.DataFrame(), layout_at(tmp_path))[0]


def test_beats_all(tmp_path):
    test = {"kind": "ws_beats_all", "a": "a", "others": ["b", "c"]}
    assert _claim(tmp_path, test, {"a": [1, 1], "b": [2, 3], "c": [5, 1.5]})["verdict"] == vd.REPRODUCED
    row = _claim(tmp_path, test, {"a": [1, 2], "b": [2, 3], "c": [5, 1.5]})
    assert row["verdict"] == vd.NOT_REPRODUCED and "3/4" in row["measured"] and "mslr5" in row["measured"]


def test_flat_and_below(tmp_path):
    test = {"kind": "ws_flat_and_below", "a": "a", "others": ["b"], "flat": 0.1}
    row = _claim(tmp_path, test, {"a": [1, 1], "b": [2, 3]}, {"a": [0.05, 0.0]})
    assert row["verdict"] == vd.REPRODUCED and "break-even flatness tolerance" in row["measured"]
    assert _claim(tmp_path, test, {"a": [1, 1], "b": [2, 3]}, {"a": [0.05, 0.3]})["verdict"] == vd.NOT_REPRODUCED
    assert _claim(tmp_path, test, {"a": [1, 4], "b": [2, 3]})["verdict"] == vd.NOT_REPRODUCED
    # only the panels of the requested metric count
    test["metric"] = "x_regret"
    row = _claim(tmp_path, test, {"a": [1, 4], "b": [2, 3]}, metrics=("x_regret", "y_regret"))
    assert row["verdict"] == vd.REPRODUCED and "mslr5" not in row["measured"]


def test_beta_pattern(tmp_path):
    test = {"kind": "ws_beta_pattern", "keys": ["b1", "b2", "b3"]}
    u_shape = {"b1": [9, 9], "b2": [3, 3], "b3": [5, 5]}
    late = {"b1": [0.4, 0.4], "b2": [0.1, 0.1], "b3": [0.05, 0.05]}
    row = _claim(tmp_path, test, u_shape, late)
    assert row["verdict"] == vd.REPRODUCED and "D 1.667 [" in row["measured"]  # D = min(9, 5) / 3
    monotone = {"b1": [9, 9], "b2": [5, 5], "b3": [3, 3]}
    row = _claim(tmp_path, test, monotone, late)
    assert row["verdict"] == vd.NOT_REPRODUCED and "D 0.6" in row["measured"]  # the best β is the largest
    # a small β that ends higher but is no longer accruing regret does not "explore too long"
    late_flat = {"b1": [0.0, 0.0], "b2": [0.1, 0.1], "b3": [0.05, 0.05]}
    assert _claim(tmp_path, test, u_shape, late_flat)["verdict"] == vd.NOT_REPRODUCED


# --- ws-matrices and ws-rounds --------------------------------------------------------------------------


def test_matrices_table_reproduces_the_prepared_matrices(tmp_path):
    _write_prepared(tmp_path / "prepared", "six-rankers", SIX_RANKERS)
    _write_prepared(tmp_path / "prepared", "mslr5", MSLR5)
    (tmp_path / "m.yaml").write_text(MANIFEST.read_text().replace("dataset: sushi16, horizon: 1,",
                                                                  "dataset: six-rankers, horizon: 1,"))
    fig = _figs(tmp_path / "m.yaml")["preference-matrices"]
    df = matrices_table(fig, layout_at(tmp_path))
    six = df[df.dataset == "six-rankers"][[f"p_vs_{j}" for j in range(6)]].to_numpy()
    ms = df[df.dataset == "mslr5"][[f"p_vs_{j}" for j in range(5)]].to_numpy()
    np.testing.assert_allclose(six, SIX_RANKERS, atol=5e-5)
    np.testing.assert_allclose(ms, np.round(MSLR5, 4))
    assert df[df.dataset == "mslr5"]["p_vs_5"].isna().all()  # K = 5 < 6: blank column
    assert list(df[df.condorcet_winner == "yes"].arm) == [0, 0]
    out = tmp_path / "out"
    build_figure(fig, layout_at(tmp_path), out / "m.png", out / "m.pdf", out / "m.csv")
    assert (out / "m.png").stat().st_size > 1000 and "p\\_vs\\_4" in (out / "m.tex").read_text()


def test_iterations_follow_the_round_structure():
    T, K = 3000, 5
    tr = ws_w_trace(MSLR5, T, cell_generator(3, "test-rounds", 0))
    its = iterations(tr.C, tr.pairs, tr.round_ends)
    # iterations tile [1, T]
    assert its[0]["t_start"] == 1 and its[-1]["t_end"] == T
    assert all(a["t_end"] + 1 == b["t_start"] for a, b in zip(its, its[1:]))
    assert len(tr.round_ends) >= 3
    for ell, end in enumerate(tr.round_ends, start=1):
        in_round = [r for r in its if r["round"] == ell]
        assert len(in_round) == K - 1 and in_round[-1]["t_end"] == end and in_round[-1]["round_end"]
        C = tr.C[end - 1]
        assert C[in_round[-1]["winner"]] == (K - 1) * ell and np.sum(C == -ell) == K - 1
        # inside an iteration the same pair is dueled throughout
        for r in in_round:
            pairs = np.sort(tr.pairs[r["t_start"] - 1:r["t_end"]], axis=1)
            assert (pairs == pairs[0]).all()


def test_rounds_table_is_seeded(tmp_path):
    _write_prepared(tmp_path / "prepared", "mslr5", MSLR5)
    fig = _figs()["rounds"]
    a = rounds_table(fig, layout_at(tmp_path))
    b = rounds_table(fig, layout_at(tmp_path))
    pd.testing.assert_frame_equal(a, b)
    assert a.length.sum() == fig.panels[0].horizon
    other = fig.__class__(**{**fig.__dict__, "extra": {**fig.extra, "run": 1}})
    assert not rounds_table(other, layout_at(tmp_path)).equals(a)
