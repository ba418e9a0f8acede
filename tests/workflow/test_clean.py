"""`banditrepro clean`: lists what a config's results folder stores that its plan does not name (shard folders,
summaries, store entries, batch files, the old layout's leftovers), one line per kind with folders, files and
bytes, removes it only with --remove and nothing else (not the plan's results, data/, logs, the published
paths, a file in a folder the plan uses); refuses with one line, removing nothing, a folder holding a file the
workflow does not write and bad input. `--shards [ALGO]`: the plan's own shards, with what stands between them
and the next run (docs/decisions.md#recompute-on-request). No Snakemake run: the files are made by hand where
the plan puts them; tests/workflow/test_recompute.py runs the workflow."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from banditrepro.cli import main
from banditrepro.workflow.clean import size_text
from banditrepro.workflow.config import load_config
from banditrepro.workflow.plan import build_plan, cell_key, split_key
from tests.workflow.common import TEST_CONFIG, TEST_RESULTS, copy_project

STALE = "0123456789abcdef"  # a key no plan names (16 hex digits, as every name)
# cells of the test config: an algorithm with parameter sets (by name: all of them; by id: one), and another
CELLS = ("bernoulli5/T1000/dp-ts-ucb", "bernoulli5/T1000/dp-ts-ucb+alpha=0.5", "irish-dublin8/T2000/rucb")
KINDS = ("shards", "summaries", "store", "batches")


@dataclass
class Results:
    proj: Path
    config: dict
    plan: object  # the test config's plan, shards not scanned (paths only)
    named: list[Path] = field(default_factory=list)  # files the plan names: never listed nor removed
    stale: dict = field(default_factory=lambda: {k: [] for k in KINDS})  # kind -> [(unit, files, bytes)]
    untouched: list[Path] = field(default_factory=list)  # data/, logs, published paths, a user's file
    figures: dict = field(default_factory=dict)  # figure stem -> the store files of a figure drawing CELLS


def _write(path: Path, nbytes: int = 2) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * nbytes)
    return path


def _stale(res: Results, kind: str, unit: Path, files: dict[str, int]) -> None:
    """A unit clean must list: a folder holding ``files`` (name -> bytes) or, for "", the file ``unit``."""
    for name, n in files.items():
        _write(unit / name if name else unit, n)
    res.stale[kind].append((unit, len(files), sum(files.values())))


@pytest.fixture
def results(tmp_path, monkeypatch) -> Results:
    proj = copy_project(tmp_path / "proj")
    monkeypatch.chdir(proj)  # clean runs in the project folder (and changes to it)
    config = load_config(proj, [proj / TEST_CONFIG])
    plan = build_plan(config, proj, scan=False)
    res = Results(proj, config, plan)
    for k, cell in enumerate(CELLS):
        used = proj / plan.cell_folder(cell)
        res.named += [_write(used / "runs0-1.npz", 100), _write(used / "runs0-1.json")]
        _stale(res, "shards", used.parent / STALE, {"runs0-1.npz": 1000 * (k + 1), "runs0-1.json": 2})
        summary = proj / plan.layout.summary(*split_key(cell))
        res.named.append(_write(summary, 50))
        _stale(res, "summaries", summary.parent / f"{STALE}.npz", {"": 300 + k})
    # a cell no plan has, and the old layout (cells/seed<s>/.../<code>/ with the retired leases' files, an
    # interrupted write, a per-run file of before session 6); the old flat summary
    _stale(res, "shards", proj / plan.layout.cells / "no-such-dataset",
           {f"T10/rucb/{STALE}/runs0-1.npz": 10, f"T10/rucb/{STALE}/runs0-1.json": 2})
    old = f"{CELLS[0]}/0123456789ab"
    _stale(res, "shards", proj / plan.layout.cells / "seed999",
           {f"{old}/{n}": 3 for n in ("runs0-1.npz", "runs0-1.json", "runs0-1.npz.claim",
                                      "runs0-1.npz.claim.stale-1733400000.5-host-12", "runs0-1.npz.claim.now-host-12",
                                      ".runs0-1.npz.claim.ab_c9.part", ".runs2-3.npz.x1y2z3.part", "run0.npz")})
    _stale(res, "summaries", proj / plan.layout.summaries / f"{CELLS[0]}.npz", {"": 40})
    # the store: every figure drawing CELLS and the claims, named; other keys, and a paper no plan has
    for fig in plan.figures:
        if any(cell_key(p.dataset, p.horizon, a.id) in CELLS for p in fig.panels for a in p.algorithms):
            res.figures[fig.stem] = [_write(proj / t, 20) for t in plan.figure_outputs(fig)]
            res.named += res.figures[fig.stem]
    res.named.append(_write(proj / plan.store.claims_csv, 30))
    fig = plan.figures[0]
    entry = Path(plan.figure_outputs(fig)[0]).parent.parent / STALE
    _stale(res, "store", proj / entry, {f"{fig.id}.png": 20, f"{fig.id}.pdf": 21, f".{fig.id}.csv.k3j_x.part": 1})
    _stale(res, "store", proj / Path(plan.store.claims_csv).parent.parent / STALE, {"claims.csv": 30})
    _stale(res, "store", proj / plan.layout.store_dir / "figures/no-such-paper", {f"fig1/{STALE}/fig1.png": 5})
    # batches: the spec and end of a batch the plan holds (shards scanned, as clean plans), and others: a
    # spec, an end marker and an old layout's receipt
    batch = build_plan(load_config(proj, [proj / TEST_CONFIG]), proj).batches[0]
    res.named += [_write(proj / plan.layout.batch_spec(batch.name)), _write(proj / plan.layout.batch_done(batch.name))]
    other = f"{batch.dataset}-0123456789ab"
    _stale(res, "batches", proj / plan.layout.batch_spec(other), {"": 7})
    _stale(res, "batches", proj / plan.layout.batch_done(other), {"": 1})
    receipt = proj / plan.layout.batches / "sushi16-ba9876543210.json"
    receipt.write_text(json.dumps({"batch": receipt.stem, "prepared_sha256": "0" * 64, "shards": []}))
    res.stale["batches"].append((receipt, 1, receipt.stat().st_size))
    # never touched: data (shared by every config), logs, the published paths, a user's file in a plan's folder
    res.untouched = [_write(proj / plan.layout.prepared / "bernoulli5" / f"{STALE}.json"),
                     _write(proj / plan.layout.shards_log), _write(proj / plan.layout.logs / "publish.log"),
                     _write(proj / plan.layout.claims_csv), _write(proj / plan.layout.published_json),
                     _write(proj / plan.layout.figure_png(fig.paper, fig.id)),
                     _write(proj / plan.cell_folder(CELLS[0]) / "notes.txt")]
    return res


def clean(capsys, res: Results, *args: str) -> tuple[int, str, str]:
    code = main(["clean", "--project", str(res.proj), "--configfile", str(res.proj / TEST_CONFIG), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def tree(proj: Path) -> dict[str, bytes]:
    return {str(p.relative_to(proj)): p.read_bytes() for top in (TEST_RESULTS, "data", "logs")
            for p in sorted((proj / top).rglob("*")) if p.is_file() or p.is_symlink()}


def _kinds(out: str) -> dict[str, tuple[int, int, str]]:
    """The listing's line per kind: kind -> (folders, files, size)."""
    found = {}
    for kind in KINDS:
        m = re.search(rf"^  {kind}\s+(\d+) folders?,\s+(\d+) files?,\s+(.+?)\s*$", out, re.M)
        assert m, (kind, out)
        found[kind] = (int(m.group(1)), int(m.group(2)), m.group(3))
    return found


def test_lists_every_unnamed_result_by_kind_and_removes_nothing(results, capsys):
    before = tree(results.proj)
    code, out, err = clean(capsys, results)
    assert code == 0, err
    expected = {k: (sum(u.is_dir() for u, _, _ in units), sum(n for _, n, _ in units),
                    size_text(sum(b for _, _, b in units))) for k, units in results.stale.items()}
    assert _kinds(out) == expected
    assert all(expected[k][0] + expected[k][1] for k in KINDS)  # every kind has something to list here
    total = sum(b for units in results.stale.values() for _, _, b in units)
    assert out.startswith(f"{TEST_RESULTS} stores {size_text(total)} this config's plan does not name")
    listed = [ln.split()[0].rstrip("/") for ln in out.splitlines() if ln.startswith(TEST_RESULTS + "/")]
    assert sorted(listed) == sorted(str(u.relative_to(results.proj)) for units in results.stale.values()
                                    for u, _, _ in units)
    assert "--remove" in out
    assert tree(results.proj) == before  # listing removes nothing


def test_remove_deletes_exactly_what_it_listed(results, capsys):
    before = tree(results.proj)
    code, out, err = clean(capsys, results, "--remove")
    assert code == 0, err
    total = sum(b for units in results.stale.values() for _, _, b in units)
    assert f"removed from {TEST_RESULTS} what this config's plan does not name ({size_text(total)})" in out
    units = [u for us in results.stale.values() for u, _, _ in us]
    assert not any(os.path.lexists(u) for u in units)
    gone = {k for k in before if any((results.proj / k).is_relative_to(u) for u in units)}
    assert tree(results.proj) == {k: v for k, v in before.items() if k not in gone}
    assert all(p.is_file() for p in [*results.named, *results.untouched])
    code, out, err = clean(capsys, results)
    assert code == 0 and out.startswith("nothing to clean"), out


def _refused(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("banditrepro: error: "), err
    assert "nothing removed" in lines[0]
    return lines[0]


@pytest.mark.parametrize("where", ["shard folder", "store entry", "summaries", "batches", "symlink"])
def test_a_file_it_does_not_write_refuses_and_removes_nothing(results, capsys, where):
    stale = {k: [u for u, _, _ in units] for k, units in results.stale.items()}
    target = {"shard folder": stale["shards"][-1] / "notes.txt",
              "store entry": stale["store"][0] / "notes.md",
              "summaries": results.proj / results.plan.layout.summaries / "README",
              "batches": results.proj / results.plan.layout.batches / "mine.json"}.get(where)
    if target is None:  # a symbolic link is never followed nor taken for the workflow's file
        target = stale["shards"][0] / "runs2-3.npz"
        target.symlink_to(results.proj / "Snakefile")
    else:
        _write(target)
    before = tree(results.proj)
    code, out, err = clean(capsys, results, "--remove")
    assert target.name in _refused(code, err)
    assert tree(results.proj) == before


def test_a_results_folder_it_did_not_write_refuses(tmp_path, monkeypatch, capsys):
    proj = copy_project(tmp_path / "proj")
    monkeypatch.chdir(proj)
    mine = _write(proj / "mine/old/data.csv")
    res = Results(proj, {}, None)
    code, out, err = clean(capsys, res, "--remove", "--config", "results_dir=mine")
    assert "not a results folder of this workflow" in _refused(code, err)
    assert mine.is_file()


@pytest.mark.parametrize("args, says", [
    (["--config", "catalog=no-such-catalog.yaml"], "no-such-catalog.yaml"),
    (["--config", "runs=-1"], "runs"),
])
def test_a_config_whose_plan_cannot_be_built_refuses(results, capsys, args, says):
    before = tree(results.proj)
    code, out, err = clean(capsys, results, "--remove", *args)
    assert says in _refused(code, err)
    assert tree(results.proj) == before


def test_an_unreadable_config_file_refuses(results, capsys):
    bad = results.proj / "bad.yaml"
    bad.write_text("runs: [unclosed\n")
    before = tree(results.proj)
    code = main(["clean", "--project", str(results.proj), "--configfile", str(bad), "--remove"])
    _refused(code, capsys.readouterr().err)
    assert tree(results.proj) == before


# --- --shards [ALGO]: recompute on request -------------------------------------------------------------------


def _next_ends(res: Results, cell: str) -> list[Path]:
    """The end markers of the batches the next run plans for ``cell`` once its shards are gone: the plan
    built (shards scanned) with the cell's folder moved aside."""
    folder = res.proj / res.plan.cell_folder(cell)
    aside = folder.with_name("aside")
    folder.rename(aside)
    try:
        plan = build_plan(load_config(res.proj, [res.proj / TEST_CONFIG]), res.proj)
    finally:
        aside.rename(folder)
    ends = [res.proj / plan.layout.batch_done(b.name) for b in plan.batches if any(s[0] == cell for s in b.shards)]
    assert ends
    return ends


def _drawing(res: Results, cells) -> set[str]:
    return {f.stem for f in res.plan.figures
            if any(cell_key(p.dataset, p.horizon, a.id) in cells for p in f.panels for a in p.algorithms)}


def test_shards_lists_and_removes_the_plans_shards_and_what_stands_before_their_recompute(results, capsys):
    res, plan = results, results.plan
    shards = {c: [res.proj / plan.cell_folder(c) / n for n in ("runs0-1.npz", "runs0-1.json")] for c in CELLS}
    summaries = {c: res.proj / plan.layout.summary(*split_key(c)) for c in CELLS}
    ends = _next_ends(res, CELLS[1])
    for e in ends:  # a run stopped after its batch: a stale end would make Snakemake skip that batch
        _write(e)
    before = tree(res.proj)
    code, out, err = clean(capsys, res, "--shards")
    assert code == 0, err
    assert f"3 shards of every algorithm (6 files, {size_text(3 * 102)}), 3 summaries and " \
           f"{len(_drawing(res, CELLS))} figures' store entries that read them" in out, out
    assert tree(res.proj) == before  # listing removes nothing

    # by id: that parameter set only, with its summary, the entries of the figures drawing it and the stale ends
    algo = CELLS[1].split("/")[2]
    code, out, err = clean(capsys, res, "--shards", algo, "--remove")
    assert code == 0 and f"removed 1 shard of algorithm {algo} (2 files), 1 summary and" in out, out
    drawn = _drawing(res, {CELLS[1]})
    gone = {*shards[CELLS[1]], summaries[CELLS[1]], *ends,
            *(p for stem in drawn for p in res.figures[stem])}
    assert {k for k in before if not (res.proj / k).exists()} == {str(p.relative_to(res.proj)) for p in gone}
    assert not any((res.proj / plan.figure_outputs(plan.figure_by_stem[s])[0]).parent.exists() for s in drawn)

    # a summary standing without its shards (deleted by hand) goes too: else nothing would recompute them
    _write(summaries[CELLS[1]])
    code, out, err = clean(capsys, res, "--shards", algo)
    assert code == 0 and f"0 shards of algorithm {algo} (0 files, 0 B), 1 summary" in out, out

    # by name: every parameter set of it; other algorithms and what the plan does not name stay
    code, out, err = clean(capsys, res, "--shards", "dp-ts-ucb", "--remove")
    assert code == 0 and "removed 1 shard of algorithm dp-ts-ucb (2 files), 2 summaries" in out, out
    assert not any(p.exists() for c in CELLS[:2] for p in [*shards[c], summaries[c]])
    assert all(p.is_file() for p in [*shards[CELLS[2]], summaries[CELLS[2]]])
    kept = set(res.figures) - _drawing(res, CELLS[:2])
    assert kept and all(p.is_file() for stem in kept for p in res.figures[stem])
    assert all(os.path.lexists(u) for units in res.stale.values() for u, _, _ in units)
    assert all(p.is_file() for p in res.untouched)

    code, out, err = clean(capsys, res, "--shards", "btm")
    assert code == 0 and out.startswith("nothing to clean: no shard of algorithm btm"), out
    code, out, err = clean(capsys, res, "--shards", "no-such-algo", "--remove")
    assert "no cell of this config runs algorithm" in _refused(code, err)


def test_shards_leaves_a_file_of_its_own_in_a_figure_entry(results, capsys):
    stem = next(iter(results.figures))
    mine = _write(results.figures[stem][0].parent / "notes.txt")
    code, out, err = clean(capsys, results, "--shards", "--remove")
    assert code == 0, err
    assert mine.is_file() and not any(p.exists() for p in results.figures[stem])


def test_clean_knows_every_file_the_layout_puts_in_the_store():
    """clean tells the workflow's store files by the store's own table (layout.py): every file a plan's layout
    puts in the store passes, and the same names in other places or of another kind do not."""
    from banditrepro.layout import Layout, Names
    from banditrepro.workflow.clean import _store_file

    names = Names(figure={("c2b", "fig1"): STALE}, leaderboard={"c2b": STALE}, claims=STALE, runtime=STALE,
                  report=STALE, software=STALE)
    st = Layout("results", names=names).stored()
    files = [*st.figure_outputs("c2b", "fig1"), *st.leaderboard_outputs("c2b"), st.claims_csv, st.runtime_csv,
             st.report_md, st.reproduction_md, st.software_json]
    rel = [Path(f).relative_to(st.store_dir) for f in files]
    assert len(rel) == 14 and all(_store_file(r) for r in rel)
    assert not any(_store_file(Path(p)) for p in (f"claims/{STALE}/report.md", f"report/{STALE}/claims.csv",
                                                  f"figures/c2b/fig1/{STALE}/fig2.png",
                                                  f"leaderboards/c2b/{STALE}/c2b.tex"))
