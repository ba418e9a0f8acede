"""``banditrepro compare A B`` (banditrepro/sharing/compare.py): a run agrees with itself, its clone and its bundle;
a changed verdict is one exact line and exit 1; another seed and more runs are named figure by figure; bad input
is one line and exit 2. The end-to-end tests share the session's reference run and make at most one more; they call
the command in this process (tests/sharing/conftest.py ``in_process``) but for one spawned call per exit status."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from banditrepro.sharing import compare
from banditrepro.sharing.sources import Source
from tests.sharing.conftest import RESULTS, cli_call, run
from tests.workflow.common import ROOT


def banditrepro(proj: Path, *args: str, spawn: bool = False) -> subprocess.CompletedProcess:
    """``banditrepro compare ARGS`` in ``proj``: in this process (``in_process``), or as a process of its own
    (``spawn``: one call per exit status, 0, 1 and 2)."""
    return cli_call(["compare", *args, "--project", str(proj)], proj, spawn)


def lines_of(r, prefix: str) -> list[str]:
    return [ln for ln in r.stdout.splitlines() if ln.startswith(prefix)]


def read_rows(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def write_rows(path: Path, rows: list[list[str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue())


RECORD = {"algorithm": "rucb", "base_seed": 7, "code": "c0de", "data": "da7a", "format": 2, "horizon": 500,
          "key": "k1", "runs": 2, "stack": {"numba": "0.68.1", "numpy": "2.4.6", "python": "3.11"}, "summary": "s1"}


# --- units ------------------------------------------------------------------------------------------------


def test_each_differing_part_of_a_cell_is_named_with_both_values():
    b = {**RECORD, "runs": 4, "base_seed": 8, "stack": {**RECORD["stack"], "numpy": "2.5.0"}, "key": "k2",
         "summary": "s2"}
    assert compare.cell_differences(RECORD, b) == [("runs", "runs 2 → 4"), ("seed", "seed 7 → 8"),
                                                   ("stack", "stack numpy 2.4.6 → 2.5.0")]
    assert compare.cell_differences(RECORD, dict(RECORD)) == []
    # the key and the summary are made of the parts: named only when no part says why they changed
    assert compare.cell_differences(RECORD, {**RECORD, "summary": "s2"}) == [("summary", "summary s1 → s2")]
    # a part a newer published.json records is compared under its own name
    assert compare.cell_differences({**RECORD, "extra": 1}, RECORD) == [("extra", "extra recorded in A only")]


def test_a_figure_groups_its_differing_cells_and_names_few_of_them():
    cells = [f"d/T500/a{i}" for i in range(5)]
    ca = {c: RECORD for c in cells}
    cb = {c: {**RECORD, "base_seed": 8} for c in cells[:4]}
    cb[cells[0]] = {**cb[cells[0]], "code": "c1de"}
    found = compare.figure_difference("p/fig", cells, ca, cb)
    assert found.line() == ("figure p/fig: 5 of 5 cells differ: code c0de → c1de (1 cell: d/T500/a0); seed 7 → 8 "
                            "(4 cells); in A only (1 cell: d/T500/a4)")
    assert found.kinds == ["code", "seed", "on one side"]
    assert compare.figure_difference("p/fig", cells, ca, dict(ca)) is None
    assert compare.figure_difference("p/fig", ["x/T1/y"], ca, ca) is None  # drawn, recorded by neither side


def test_a_line_drawn_at_another_horizon_is_compared_as_one_cell():
    # a config capping the horizons (max_horizon) names the same line's cell otherwise: paired, not one-sided
    ca = {"d/T1000/a": {**RECORD, "horizon": 1000}, "d/T10/b": RECORD, "d/T20/b": RECORD}
    cb = {"d/T500/a": RECORD, "d/T500/b": RECORD}
    found = compare.figure_difference("p/fig", [*ca, *cb], ca, cb)
    assert found.line() == ("figure p/fig: 4 of 4 cells differ: horizon 1000 → 500 (1 cell: d/T1000/a); in A only "
                            "(2 cells: d/T10/b, d/T20/b); in B only (1 cell: d/T500/b)")  # b: ambiguous, kept


def test_a_side_without_a_recorded_config_is_not_planned_but_noted(tmp_path):
    notes: list[str] = []
    src = Source("old", tmp_path, tmp_path, {"cells": {"d/T500/a": RECORD}})
    assert compare.planned_figures(src, ROOT, notes, {}) is None
    assert len(notes) == 1 and notes[0].startswith("note: old: its figures cannot be planned here (old: no config")


def test_the_interval_moves_by_its_midpoint_and_its_width():
    a = compare.Claim("p", "f", "c", "reproduced", 1.0, 2.0)
    b = compare.Claim("p", "f", "c", "not reproduced", 0.5, 2.5)
    assert compare.moved(a, b) == "midpoint +0, width +1"
    assert compare.verdict_line(a, b) == ("claim c (p/f): reproduced → not reproduced; interval [1, 2] → [0.5, 2.5] "
                                          "(midpoint +0, width +1)")
    none = compare.Claim("p", "f", "c", "not run", math.nan, math.nan)
    assert none.interval() == "no interval" and compare.moved(a, none) == "no interval on one side to compare"


# --- end to end on the shared reference run ---------------------------------------------------------------


@pytest.mark.workflow
def test_a_run_agrees_with_itself_its_clone_and_its_bundle(reference, project, bundled):
    res = reference / RESULTS
    bundle = bundled[0]  # made by banditrepro bundle
    n_claims = len(read_rows(res / "claims.csv")) - 1
    for other in (str(res), str(project / RESULTS), str(bundle)):
        r = banditrepro(reference, str(res), other, spawn=other == str(res))
        assert r.returncode == 0, r.stderr
        assert not lines_of(r, "claim ") and not lines_of(r, "figure ") and not lines_of(r, "note")
        assert r.stdout.splitlines()[-1].startswith(f"compare: 0 of {n_claims} claims changed verdict; 0 of ")
        assert r.stdout.splitlines()[-1].endswith(" figures differ in their cells")
    assert "(bundle sha256 " in r.stdout.splitlines()[1]


@pytest.mark.workflow
def test_a_changed_verdict_is_one_exact_line_and_exit_1(project):
    a = project / RESULTS
    b = shutil.copytree(a, project / "results/faked")  # the same cells, a claims table edited (a faked change)
    rows = read_rows(a / "claims.csv")
    col = {name: rows[0].index(name) for name in ("paper", "figure", "claim_id", "ci_low", "ci_high", "verdict")}

    def edited(rows, edits: dict) -> list[list[str]]:
        out = [list(r) for r in rows]
        for i, (verdict, low, high) in edits.items():
            out[i][col["verdict"]], out[i][col["ci_low"]], out[i][col["ci_high"]] = verdict, low, high
        return out

    write_rows(a / "claims.csv", edited(rows, {1: ("reproduced", "1", "1.5"), -1: ("inconclusive", "0.5", "2")}))
    write_rows(b / "claims.csv", edited(rows, {1: ("not reproduced", "0.25", "1.25")})[:-1])  # the last row gone
    r = banditrepro(project, str(a), str(b), spawn=True)
    assert r.returncode == 1, r.stderr

    def name(row) -> str:
        return f"{row[col['claim_id']]} ({row[col['paper']]}/{row[col['figure']]})"

    assert lines_of(r, "claim ") == [
        f"claim {name(rows[1])}: reproduced → not reproduced; interval [1, 1.5] → [0.25, 1.25] "
        "(midpoint -0.5, width +0.5)",
        f"claim {name(rows[-1])}: in A only (inconclusive, interval [0.5, 2])"]
    n = len(rows) - 1
    assert r.stdout.splitlines()[-1].startswith(f"compare: 1 of {n - 1} claims changed verdict, 1 in A only; 0 of ")
    assert not lines_of(r, "figure ")  # the cells are the same: only the table moved
    r = banditrepro(project, str(b), str(b))
    assert r.returncode == 0 and not lines_of(r, "claim "), r.stdout + r.stderr


@pytest.mark.workflow
def test_another_seed_and_more_runs_are_named_figure_by_figure(reference, project):
    run(project, "base_seed=8", "runs=4", results="results/seed8")
    cells_a = json.loads((reference / RESULTS / "published.json").read_text())["cells"]
    cells_b = json.loads((project / "results/seed8/published.json").read_text())["cells"]
    assert sorted(cells_a) == sorted(cells_b)
    seed_a = {c["base_seed"] for c in cells_a.values()}.pop()
    more_runs = [c for c in cells_a if cells_a[c]["runs"] != cells_b[c]["runs"]]
    assert more_runs  # runs=4 (capped by max_runs 3) raises the figures that asked for 2
    r = banditrepro(project, str(reference / RESULTS), "results/seed8")
    assert r.returncode in (0, 1), r.stderr
    assert (r.returncode == 1) == bool(lines_of(r, "claim "))  # which verdicts move is the data's to say
    figures = lines_of(r, "figure ")
    assert figures
    for ln in figures:  # every cell of every figure is drawn with another seed
        total = ln.split(": ", 1)[1].split(" of ", 1)[0]
        assert f"seed {seed_a} → 8 ({total} cells)" in ln, ln
    more = [ln for ln in figures if any(f"runs {cells_a[c]['runs']} → {cells_b[c]['runs']}" in ln for c in more_runs)]
    assert more
    last = r.stdout.splitlines()[-1]
    assert f"; {len(figures)} of " in last and f"(runs: {len(more)}, seed: {len(figures)})" in last, last


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    made = tmp_path / "made"
    (made / "cells").mkdir(parents=True)  # a results folder without claims.csv
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "broken.tar.gz").write_bytes(b"not gzip")
    cases = (((str(tmp_path / "absent"), str(made)), "neither a results folder nor a bundle"),
             ((str(tmp_path / "file.txt"), str(made)), "neither a results folder nor a bundle"),
             ((str(made), str(made)), "no claims.csv"),
             ((str(tmp_path / "broken.tar.gz"), str(made)), "cannot be unpacked"),
             ((str(tmp_path / "absent.tar.gz"), str(made)), "no such bundle"))
    for i, (args, said) in enumerate(cases):
        r = banditrepro(ROOT, *args, spawn=i == 0)  # the first as a process: exit status 2 as a shell sees it
        assert r.returncode == 2 and r.stdout == "", (args, r.stdout, r.stderr)
        assert len(r.stderr.splitlines()) == 1 and said in r.stderr, (args, r.stderr)
