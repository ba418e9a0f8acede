"""Generic claim tests (beats, comparable, late_growth), their interval verdicts, the quorum rule, the
manifest checks of ``claims.validate`` and the claims.csv writer, on hand-made summaries whose verdict is
known: a true difference is reproduced, a tie is inconclusive, a reversed difference is not reproduced,
a premise that never occurs is vacuous."""

from __future__ import annotations

import json
import math
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.claims import COLUMNS, check_figure, validate, write_claims
from banditrepro.claims.parts import quorum
from banditrepro.manifest import load_manifest
from banditrepro.verdicts import seed_of
from tests.claim_data import noisy, write_runs
from tests.helpers import layout_at

ROOT = Path(__file__).resolve().parents[2]
IDS = {"a": "rucb", "b": "rucb+alpha=0.6", "c": "rucb+alpha=0.7"}


def _fig(tmp_path: Path, test: dict, datasets=("sushi16", "mslr5"), extra: str = ""):
    panels = "\n".join(f"        - {{dataset: {d}, horizon: 1000}}" for d in datasets)
    (tmp_path / "m.yaml").write_text(f"""
t:
  title: t
  figures:
    f:
      title: f
      algorithms:
        - {{name: rucb, key: a, params: {{alpha: 0.51}}}}
        - {{name: rucb, key: b, params: {{alpha: 0.6}}}}
        - {{name: rucb, key: c, params: {{alpha: 0.7}}}}
      panels:
{panels}
      claims:
        - {{id: x, text: x, where: here, test: {json.dumps(test)}{extra}}}
""")
    return load_manifest(tmp_path / "m.yaml")[0]


def _run(tmp_path, test, finals: dict, halves: dict | None = None, datasets=("sushi16", "mslr5")) -> dict:
    """finals/halves: {key: [values per panel]} or {key: per-run array (same on every panel)}."""
    root = tmp_path / "summaries"
    for k, dataset in enumerate(datasets):
        for key, v in finals.items():
            v = v[k] if isinstance(v, list) else v
            h = None if halves is None or key not in halves else (
                halves[key][k] if isinstance(halves[key], list) else halves[key])
            write_runs(root, dataset, 1000, IDS[key], v, halves=h)
    fig = _fig(tmp_path, test, datasets)
    return check_figure(fig, pd.DataFrame(), layout_at(tmp_path))[0]


A = noisy(100.0, seed=1)


def test_beats_true_difference_tie_and_reversal(tmp_path):
    test = {"kind": "beats", "a": "a", "b": "b"}
    row = _run(tmp_path, test, {"a": A, "b": A * 1.5})
    assert row["verdict"] == vd.REPRODUCED
    assert 0.6 < row["ci_low"] < row["ci_high"] < 0.7  # ratio 1/1.5 with its interval
    # a tie: b's runs are a's with independent noise of mean 0
    e = np.random.default_rng(5).standard_normal(A.size)
    tie = _run(tmp_path, test, {"a": A, "b": A + 20 * (e - e.mean())})  # equal means, unpaired noise
    assert tie["verdict"] == vd.INCONCLUSIVE and tie["ci_low"] < 1 < tie["ci_high"]
    assert "runs would settle it" in tie["measured"]
    row = _run(tmp_path, test, {"a": A * 1.3, "b": A})
    assert row["verdict"] == vd.NOT_REPRODUCED and row["ci_low"] > 1


def test_beats_every_panel_versus_most_panels(tmp_path):
    datasets = ("sushi16", "mslr5", "six-rankers")
    finals = {"a": [A, A, A * 2], "b": [A * 1.5, A * 1.5, A]}  # a wins on two panels, loses on one
    every = _run(tmp_path, {"kind": "beats", "a": "a", "b": "b"}, finals, datasets=datasets)
    assert every["verdict"] == vd.NOT_REPRODUCED and "six-rankers" in every["measured"]
    most = _run(tmp_path, {"kind": "beats", "a": "a", "b": "b", "strict_majority": True}, finals, datasets=datasets)
    assert most["verdict"] == vd.REPRODUCED and most["ci_high"] < 1  # the 2nd best of 3 panels
    finals = {"a": [A, A * 2, A * 2], "b": [A * 1.5, A, A]}
    assert _run(tmp_path, {"kind": "beats", "a": "a", "b": "b", "strict_majority": True}, finals,
                datasets=datasets)["verdict"] == vd.NOT_REPRODUCED


def test_quorum_rule():
    R, N, I = vd.REPRODUCED, vd.NOT_REPRODUCED, vd.INCONCLUSIVE
    most = lambda vs: quorum(vs, len(vs) // 2 + 1)  # noqa: E731
    assert most([R, R, N]) == R and most([R, N, N]) == N and most([R, I, N]) == I
    assert most([R, R, N, N]) == N  # "not reproduced if not-reproduced panels ≥ half"
    assert most([R, R, I, N]) == I and most([R, R, R, N]) == R
    assert quorum([R, R, I], 3) == vd.combine([R, R, I]) == I
    assert quorum([vd.NOT_RUN], 1) == vd.NOT_RUN


def test_comparable_reports_break_even(tmp_path):
    test = {"kind": "comparable", "a": "a", "b": "b", "ratio": 1.5, "rationale": "r"}
    row = _run(tmp_path, test, {"a": A * 1.2, "b": A})
    assert row["verdict"] == vd.REPRODUCED and "break-even tolerance: reproduced for a factor ≥ 1.2" in row["measured"]
    row = _run(tmp_path, test, {"a": A * 2, "b": A})
    assert row["verdict"] == vd.NOT_REPRODUCED and "not reproduced for a factor < 2" in row["measured"]
    e = np.random.default_rng(7).standard_normal(A.size)
    on_edge = 1.5 * A + 20 * (e - e.mean())  # ratio a/b exactly 1/1.5, with spread: straddles the tolerance
    row = _run(tmp_path, test, {"a": A, "b": on_edge})
    assert row["verdict"] == vd.INCONCLUSIVE and row["ci_low"] < 1 / 1.5 < row["ci_high"]


def test_late_growth_vacuous_and_decided(tmp_path):
    test = {"kind": "late_growth", "a": "a", "b": "b", "flat": 0.1, "rationale": "r"}
    # b never beats a: the premise never occurs
    row = _run(tmp_path, test, {"a": A, "b": A * 2}, {"a": A * 0.95, "b": A})
    assert row["verdict"] == vd.VACUOUS and "premise never occurs" in row["measured"]
    # b beats a, still grows (half of its regret late) while a is flat (5 % late): reproduced
    row = _run(tmp_path, test, {"a": A * 2, "b": A}, {"a": A * 2 * 0.95, "b": A * 0.5})
    assert row["verdict"] == vd.REPRODUCED and "premise holds on 2/2" in row["measured"]
    assert "flat for a tolerance ≥ 0.05" in row["measured"]  # a's late share is 0.05 on every run
    # b beats a but a is not flat
    row = _run(tmp_path, test, {"a": A * 2, "b": A}, {"a": A * 2 * 0.5, "b": A * 0.5})
    assert row["verdict"] == vd.NOT_REPRODUCED
    # the late share needs per-run R(T/2) in the summaries (older summaries lack it: not run, and why)
    row = _run(tmp_path / "nohalves", test, {"a": A * 2, "b": A})
    assert row["verdict"] == vd.NOT_RUN and "R(T/2)" in row["measured"]


def test_not_run_panels_are_named(tmp_path):
    (tmp_path / "status").mkdir()
    (tmp_path / "status" / "mslr5.json").write_text(json.dumps({"available": False, "reason": "offline"}))
    row = _run(tmp_path, {"kind": "beats", "a": "a", "b": "b"}, {"a": A, "b": A * 1.5})
    assert row["verdict"] == vd.REPRODUCED and "not run: mslr5" in row["measured"]
    (tmp_path / "status" / "sushi16.json").write_text(json.dumps({"available": False, "reason": "offline"}))
    assert _run(tmp_path, {"kind": "beats", "a": "a", "b": "b"}, {"a": A, "b": A})["verdict"] == vd.NOT_RUN


def test_bootstrap_seeds_are_stable(tmp_path):
    test = {"kind": "beats", "a": "a", "b": "b"}
    r1 = _run(tmp_path, test, {"a": A, "b": A * 1.1})
    r2 = _run(tmp_path, test, {"a": A, "b": A * 1.1})
    assert (r1["ci_low"], r1["ci_high"]) == (r2["ci_low"], r2["ci_high"])
    assert seed_of("c2b/fig1", "x") == zlib.crc32(b"c2b/fig1/x")  # not hash(): the same in every process


@pytest.mark.parametrize("test, extra, problem", [
    ({"kind": "nope"}, None, "unknown test kind 'nope'"),
    ({"kind": "beats", "a": "a"}, None, "missing a required argument: 'b'"),
    ({"kind": "beats", "a": "a", "b": "b", "typo": 1}, None, "unexpected keyword argument 'typo'"),
    ({"kind": "beats", "a": "a", "b": "zz"}, None, "b = 'zz' is not an algorithm key"),
    ({"kind": "comparable", "a": "a", "b": "b", "ratio": 2}, None, "needs a one-line `rationale:`"),
    ({"kind": "beats", "a": "a", "b": "b", "panels": {"all_except": ["yahoo30"]}}, None, "not in the figure: yahoo30"),
    ({"kind": "beats", "a": "a", "b": "b"}, {"whyy": "x"}, "unknown field(s) whyy"),
])
def test_validate_names_the_claim_and_its_problem(tmp_path, test, extra, problem):
    fig = _fig(tmp_path, {"kind": "beats", "a": "a", "b": "b"})
    # built in code, past the manifest schema (user manifests and plugins reach validate the same way)
    fig = replace(fig, claims=({"id": "x", "text": "x", "test": test, **(extra or {})},))
    with pytest.raises(ReproError) as err:
        validate([fig])
    msg = str(err.value)
    assert msg.startswith("t/f: claim x: ") and problem in msg and "\n" not in msg


def test_validate_accepts_the_shipped_manifests():
    figs = load_manifest(ROOT / "config" / "figures")
    validate(figs)
    claims = [c for f in figs for c in f.claims]
    assert claims and all(c.get("where") for c in claims)  # every claim says where the paper states it


def test_write_claims_columns(tmp_path):
    root = tmp_path / "summaries"
    for key in ("a", "b"):
        write_runs(root, "sushi16", 1000, IDS[key], A * (1.5 if key == "b" else 1), metrics=("regret",))
    fig = _fig(tmp_path, {"kind": "beats", "a": "a", "b": "b"}, datasets=("sushi16",))
    tables = tmp_path / "tables" / "t"
    tables.mkdir(parents=True)
    (tables / "f.csv").write_text("x\n1\n")
    lines = write_claims([fig], layout_at(tmp_path), tmp_path / "claims.csv")
    df = pd.read_csv(tmp_path / "claims.csv")
    assert list(df.columns) == COLUMNS == ["paper", "figure", "claim_id", "claim", "test", "measured", "ci_low",
                                           "ci_high", "verdict"]
    assert set(df.verdict) <= set(vd.VERDICTS) and lines[0].startswith("[reproduced] t/f")
    assert math.isfinite(df.ci_low[0]) and df.ci_low[0] <= df.ci_high[0] < 1
