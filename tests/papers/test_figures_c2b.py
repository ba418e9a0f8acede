"""C2B study "how many rounds suffice?": manifest, the c2b-rounds figure kind and the c2b_rounds_needed claim."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.atomic import write_npz
from banditrepro.claims import Context, check_figure
from banditrepro.figures import DRAWERS, build_figure
from banditrepro.manifest import cells, load_manifest
from banditrepro.papers.c2b.figures import line_batches, roles, rounds_table
from tests.helpers import layout_at, summary_file

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "config" / "figures" / "c2b.yaml"
SERIES = ["c2b-B0", "c2b-B3", "c2b-B6", "c2b-B12", "c2b-B24", "c2b-B50", "c2b-B100", "c2b-B1000"]


def _figs(path=MANIFEST):
    return {f.id: f for f in load_manifest(path, papers=["c2b", "c2bt"])}


# --- the manifest -----------------------------------------------------------------------------------


def test_manifest_keys_batches_and_shared_cells():
    figs = _figs()
    fig = figs["rounds-needed"]
    assert fig.kind == "c2b-rounds" and fig.kind in DRAWERS
    assert [p.dataset for p in fig.panels] == [p.dataset for p in figs["fig1"].panels]  # every Fig. 1 dataset
    keys = [r.key for r in fig.panels[0].algorithms]
    assert keys == SERIES + ["c2b-literal", "c2b-log2", "rucb", "rmed"]
    role = roles(fig)
    assert [k for k in keys if role[k] == "series"] == SERIES
    assert role["c2b-literal"] == role["c2b-log2"] == "variants" and role["rucb"] == role["rmed"] == "bands"
    by_T = {}
    for p in fig.panels:
        refs = {r.key: r for r in p.algorithms}
        by_T[p.horizon] = [line_batches(refs[k], p.horizon) for k in SERIES + ["c2b-literal", "c2b-log2"]]
    assert by_T[100000] == [11, 14, 17, 23, 35, 50, 100, 1000, 11, 16]
    assert by_T[1000000] == [13, 16, 19, 25, 37, 50, 100, 1000, 13, 19]
    # variants are labelled as such; the literal variant runs the multiset schedule
    refs = {r.key: r for r in fig.panels[0].algorithms}
    assert refs["c2b-literal"].label.startswith("variant:") and refs["c2b-literal"].params["pairs"] == "literal"
    assert refs["c2b-log2"].label.startswith("variant:") and refs["c2b-log2"].params["B_log"] == "2"
    assert "VARIANTS" in fig.caption
    # B = ⌊ln T⌋ and ⌊ln T⌋ + 6 are the cells of Figs. 1 and 2, and RUCB / RMED1 are Fig. 1's
    f1 = {r.key: r.id for r in figs["fig1"].panels[0].algorithms}
    f2 = {r.key: r.id for r in figs["fig2"].panels[0].algorithms}
    assert refs["c2b-B0"].id == f1["c2b"] and refs["c2b-B6"].id == f2["c2b"]
    assert refs["rucb"].id == f1["rucb"] and refs["rmed"].id == f1["rmed"]
    others = set(cells([f for k, f in figs.items() if k != "rounds-needed"]))
    new = set(cells([fig])) - others
    assert len(new) == 8 * 6  # 8 new lines (B3, B12, B24, 50, 100, 1000, literal, log2) on 6 panels


# --- figure and claims on hand-made summaries -------------------------------------------------------

MINI = """
c2bt:
  title: t
  figures:
    r:
      title: r
      kind: c2b-rounds
      layout: [1, 2]
      options: {series: [s0, s6, s12, s1000], variants: [lit], bands: [ref]}
      algorithms:
        - {name: c2b-kl, key: s0}
        - {name: c2b-kl, key: s6, params: {B_offset: 6}}
        - {name: c2b-kl, key: s12, params: {B_offset: 12}}
        - {name: c2b-kl, key: s1000, params: {B: 1000}}
        - {name: c2b-kl, key: lit, params: {pairs: literal}, label: "variant: literal"}
        - {name: rucb, key: ref}
      panels:
        - {dataset: six-rankers, horizon: 1000}
        - {dataset: yahoo30, horizon: 1000}
      claims:
        - {id: x, text: x, test: {kind: c2b_rounds_needed, reference: ref, claim_key: s6, mode: beats}}
"""


def _summary(path, finals, runs=None):
    finals = np.asarray(finals, dtype=float)
    runs = np.arange(finals.size) if runs is None else np.asarray(runs)
    grid = np.array([0, 500, 1000])
    curve = np.outer(np.ones(3), [0, 0.5, 1.0]) * finals.mean()
    write_npz(path, {"grid": grid, "runs": runs, "n_runs": np.int64(finals.size), "horizon": np.int64(grid[-1]),
                     "regret_final": finals,
                     "regret_mean": curve[0], "regret_lo": curve[0] * 0.9, "regret_hi": curve[0] * 1.1,
                     "n_batches": np.full(finals.size, 5)})


def _setup(tmp_path, finals: dict[str, np.ndarray], claim: dict | None = None):
    text = MINI if claim is None else MINI.replace(
        "{kind: c2b_rounds_needed, reference: ref, claim_key: s6, mode: beats}", json.dumps(claim))
    (tmp_path / "m.yaml").write_text(text)
    fig = _figs(tmp_path / "m.yaml")["r"]
    status = tmp_path / "status"
    status.mkdir(exist_ok=True)
    (status / "yahoo30.json").write_text(json.dumps({"available": False, "reason": "offline"}))
    for ref in fig.panels[0].algorithms:
        _summary(summary_file("six-rankers", 1000, ref.id, tmp_path / "summaries"), finals[ref.key])
    return fig, status


def _finals(ref_mean=100.0, **means):
    rng = np.random.default_rng(4)
    noise = rng.normal(0, 5, 40)  # shared by run index: the lines are paired, as common random numbers make them
    base = {"s0": 300.0, "s6": 200.0, "s12": 150.0, "s1000": 100.0, "lit": 400.0, "ref": ref_mean}
    base.update(means)
    return {k: m + noise + rng.normal(0, 1, 40) for k, m in base.items()}


def test_rounds_table_and_figure(tmp_path):
    fig, status = _setup(tmp_path, _finals())
    out = tmp_path / "out"
    df = build_figure(fig, layout_at(tmp_path), out / "r.png", out / "r.pdf", out / "r.csv")
    for ext in ("png", "pdf", "csv", "md", "tex"):
        assert (out / f"r.{ext}").stat().st_size > 500
    ok = df[df.status == "ok"].set_index("algorithm")
    assert ok.loc[["s0", "s6", "s12", "s1000", "lit"], "B"].tolist() == [6, 12, 18, 1000, 6]  # ⌊ln 1000⌋ = 6
    assert ok.loc["ref", "B"] == "" and ok.loc["ref", "role"] == "bands" and ok.loc["lit", "role"] == "variants"
    assert ok.loc["s6", "mean_final_regret"] == pytest.approx(_finals()["s6"].mean())
    assert ok.loc["s6", "ci95_low"] < ok.loc["s6", "mean_final_regret"] < ok.loc["s6", "ci95_high"]
    assert (df[df.dataset == "yahoo30"].status == "not-run").all()


def test_roles_must_cover_every_line(tmp_path):
    (tmp_path / "m.yaml").write_text(MINI.replace("variants: [lit], ", ""))
    with pytest.raises(ReproError, match="'lit' is in none of"):
        rounds_table(_figs(tmp_path / "m.yaml")["r"], layout_at(tmp_path))
    (tmp_path / "m.yaml").write_text(MINI.replace("variants: [lit], bands: [ref]", "variants: [lit, ref]"))
    with pytest.raises(ReproError, match="no number of batches"):
        rounds_table(_figs(tmp_path / "m.yaml")["r"], layout_at(tmp_path))


def _verdict(tmp_path, finals, claim=None):
    fig, status = _setup(tmp_path, finals, claim)
    table = rounds_table(fig, layout_at(tmp_path))
    return check_figure(fig, table, layout_at(tmp_path))[0]


def test_rounds_needed_beats(tmp_path):
    # B+6 at 2× the reference: not reproduced; reaches only at B = 1000 (equal means: the interval straddles 1)
    row = _verdict(tmp_path, _finals())
    assert row["verdict"] == "not reproduced"
    assert "smallest B reaching RUCB: six-rankers: B = 1000;" in row["measured"]
    assert "not run: yahoo30" in row["measured"]
    # B+6 clearly below the reference: reproduced; and the smallest reaching B is then 12 (= ⌊ln 1000⌋ + 6)
    row = _verdict(tmp_path, _finals(s6=60.0))
    assert row["verdict"] == "reproduced" and "reaching RUCB: six-rankers: B = 12;" in row["measured"]
    # B+6 equal to the reference up to independent noise: the interval straddles 1
    row = _verdict(tmp_path, _finals(s6=100.0))
    assert row["verdict"] == "inconclusive" and "runs would settle it" in row["measured"]
    # nothing reaches: said so
    row = _verdict(tmp_path, _finals(s1000=130.0))
    assert "smallest B reaching RUCB: six-rankers: not within B ≤ 1000;" in row["measured"]


def test_rounds_needed_comparable_states_the_break_even(tmp_path):
    claim = {"kind": "c2b_rounds_needed", "reference": "ref", "claim_key": "s6", "mode": "comparable", "ratio": 1.5}
    assert _verdict(tmp_path, _finals(s6=120.0), claim)["verdict"] == "reproduced"
    row = _verdict(tmp_path, _finals(), claim)  # ratio ≈ 2
    assert row["verdict"] == "not reproduced"
    flip = float(row["measured"].split("reproduced for a factor ≥ ")[1].split(",")[0].split(";")[0])
    assert 2.0 < flip < 2.2
    with pytest.raises(ReproError, match="mode must be"):
        _verdict(tmp_path, _finals(), dict(claim, mode="close"))
    with pytest.raises(ReproError, match="not in options.series"):
        _verdict(tmp_path, _finals(), dict(claim, claim_key="lit"))


def test_outcome_interval_and_unpaired_runs(tmp_path):
    from banditrepro.claims import TESTS

    fig, status = _setup(tmp_path, _finals())
    table = rounds_table(fig, layout_at(tmp_path))
    ctx = Context(fig, table, layout_at(tmp_path))
    out = TESTS["c2b_rounds_needed"](ctx, reference="ref", claim_key="s6")
    assert out.ci_low > 1.0 and out.ci_low < 2.0 < out.ci_high  # the ratio ≈ 2 of the deciding panel
    # a reference run with more runs (a figure asked for more) is paired on the common runs only
    ref_id = next(r.id for r in fig.panels[0].algorithms if r.key == "ref")
    _summary(summary_file("six-rankers", 1000, ref_id, tmp_path / "summaries"), np.full(60, 100.0), runs=np.arange(60))
    ctx.min_runs = 0
    TESTS["c2b_rounds_needed"](ctx, reference="ref", claim_key="s6")
    assert ctx.min_runs == 40
