"""`banditrepro clean`: lists the shard folders of code digests the config's plan no longer uses, removes them
only with --remove, never a folder the plan uses or one it did not write; refuses bad input with one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from banditrepro.workflow.clean import size_text
from banditrepro.workflow.estimate import load_config
from banditrepro.workflow.plan import build_plan
from banditrepro.workflow.plan import split_key as plan_key
from tests.workflow.common import TEST_CONFIG, copy_project

STALE = "0123456789ab"  # a code digest no plan uses


def clean(proj: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "banditrepro", "clean", "--project", str(proj),
                           "--configfile", str(proj / TEST_CONFIG), *args],
                          capture_output=True, text=True, timeout=300)


def _shard(folder: Path, nbytes: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "runs0-1.npz").write_bytes(b"x" * nbytes)
    (folder / "runs0-1.json").write_text("{}")


@pytest.fixture
def results(tmp_path, monkeypatch):
    """A project copy whose test-config results hold, for three cells, the plan's folder and a stale one;
    plus a cell of no plan and another base seed's cells."""
    proj = copy_project(tmp_path / "proj")
    monkeypatch.chdir(proj)
    plan = build_plan(load_config(proj, [proj / TEST_CONFIG]), proj, scan=False)
    cells = sorted(plan.codes)[:3]
    used = [proj / plan.cell_folder(c) for c in cells]
    stale = [u.parent / STALE for u in used]
    for u in used:
        _shard(u, 100)
    for k, s in enumerate(stale):
        _shard(s, 1000 * (k + 1))
    foreign = [proj / plan.layout.cells / "no-such-dataset/T10/rucb" / STALE,
               proj / plan.layout.results_dir / "cells/seed999" / cells[0] / STALE]
    for f in foreign:
        _shard(f, 10)
    return proj, plan, used, stale, foreign


def test_lists_stale_folders_with_sizes_and_removes_nothing(results):
    proj, plan, used, stale, foreign = results
    r = clean(proj)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"3 shard folders of code this config no longer uses ({size_text(6000 + 3 * 2)})" in out
    for s in stale:
        assert str(s.relative_to(proj)) in out
    for f in [*used, *foreign]:
        assert str(f.relative_to(proj)) not in out
    assert all(p.is_dir() for p in [*used, *stale, *foreign])  # listing removes nothing
    assert "--remove" in out


def test_remove_deletes_exactly_the_stale_folders(results):
    proj, plan, used, stale, foreign = results
    before = {p: sorted(x.name for x in p.iterdir()) for p in [*used, *foreign]}
    r = clean(proj, "--remove")
    assert r.returncode == 0, r.stderr
    assert f"removed 3 shard folders of code this config no longer uses ({size_text(6006)})" in r.stdout
    assert not any(s.exists() for s in stale)
    assert {p: sorted(x.name for x in p.iterdir()) for p in [*used, *foreign]} == before
    r = clean(proj)
    assert r.returncode == 0 and r.stdout.startswith("nothing to clean"), r.stdout


def _refused(r) -> str:
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("banditrepro: error: "), r.stderr
    assert "nothing removed" in lines[0]
    return lines[0]


def test_a_folder_holding_other_files_refuses_and_removes_nothing(results):
    proj, plan, used, stale, foreign = results
    (stale[-1] / "notes.txt").write_text("mine")
    assert "notes.txt" in _refused(clean(proj, "--remove"))
    assert all(s.is_dir() for s in stale)


def test_a_results_folder_it_did_not_write_refuses(tmp_path):
    proj = copy_project(tmp_path / "proj")
    other = proj / "mine"
    (other / "old").mkdir(parents=True)
    (other / "old" / "data.csv").write_text("1\n")
    assert "no cells/ folder" in _refused(clean(proj, "--remove", "--config", "results_dir=mine"))
    assert (other / "old" / "data.csv").is_file()


@pytest.mark.parametrize("args, says", [
    (["--config", "catalog=no-such-catalog.yaml"], "no-such-catalog.yaml"),
    (["--config", "runs=-1"], "runs"),
])
def test_a_config_whose_plan_cannot_be_built_refuses(results, args, says):
    proj, plan, used, stale, foreign = results
    assert says in _refused(clean(proj, "--remove", *args))
    assert all(s.is_dir() for s in stale)


def test_an_unreadable_config_file_refuses(results):
    proj, plan, used, stale, foreign = results
    bad = proj / "bad.yaml"
    bad.write_text("runs: [unclosed\n")
    r = subprocess.run([sys.executable, "-m", "banditrepro", "clean", "--project", str(proj), "--configfile",
                        str(bad), "--remove"], capture_output=True, text=True, timeout=300)
    _refused(r)
    assert all(s.is_dir() for s in stale)


# --- claims, receipts, --shards (issue: clean knows every file the layer writes) ---------------------------


def _receipt(proj: Path, plan, name: str, shards: list[str]) -> Path:
    import json

    path = proj / plan.receipt(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"batch": name, "prepared_sha256": "0" * 64, "shards": shards}))
    return path


def _rel(plan, folder: Path, proj: Path) -> str:
    """A shard in ``folder`` as a receipt names it: its path under the cells folder."""
    return str((folder / "runs0-1.npz").relative_to(proj / plan.layout.cells))


def test_claims_stale_claims_and_probes_are_files_it_wrote(results):
    proj, plan, used, stale, foreign = results
    for name in ("runs0-1.npz.claim", "runs0-1.npz.claim.stale-1733400000.5-host-12",
                 "runs0-1.npz.claim.now-host-12", ".runs0-1.npz.claim.ab_c9.part"):
        (stale[0] / name).write_text("{}")
    r = clean(proj, "--remove")
    assert r.returncode == 0, r.stderr
    assert not any(s.exists() for s in stale)


def test_remove_deletes_the_receipts_of_the_folders_it_deletes_only(results):
    proj, plan, used, stale, foreign = results
    gone = _receipt(proj, plan, "old-batch", [_rel(plan, stale[0], proj)])
    mixed = _receipt(proj, plan, "mixed-batch", [_rel(plan, used[1], proj), _rel(plan, stale[1], proj)])
    kept = _receipt(proj, plan, "current-batch", [_rel(plan, u, proj) for u in used])
    other = _receipt(proj, plan, "other-seed", [str(foreign[1] / "runs0-1.npz")])
    (proj / plan.receipt("not-a-receipt")).write_text("[unreadable")
    r = clean(proj)
    assert r.returncode == 0 and "and 2 receipts of their batches" in r.stdout, r.stdout
    assert gone.is_file() and mixed.is_file()  # listing removes nothing
    r = clean(proj, "--remove")
    assert r.returncode == 0 and "and 2 receipts" in r.stdout, r.stdout
    assert not gone.exists() and not mixed.exists()
    assert kept.is_file() and other.is_file() and (proj / plan.receipt("not-a-receipt")).is_file()


def test_shards_lists_and_removes_the_plans_shards_and_their_receipts(results):
    proj, plan, used, stale, foreign = results
    cells = sorted(plan.codes)[:3]
    algo = cells[0].split("/")[2]
    receipts = {c: _receipt(proj, plan, plan.cell_batches[c][0], [_rel(plan, u, proj)])
                for c, u in zip(cells, used)}
    summaries = {c: proj / plan.layout.summary(*plan_key(c)) for c in cells}
    for path in summaries.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"s")
    r = clean(proj, "--shards")
    assert r.returncode == 0 and "3 shards of every algorithm (6 files" in r.stdout, r.stdout
    assert "3 summaries and figure files" in r.stdout
    assert all((u / "runs0-1.npz").is_file() for u in used)  # listing removes nothing
    r = clean(proj, "--shards", algo, "--remove")
    assert r.returncode == 0 and f"shards of algorithm {algo}" in r.stdout, r.stdout
    def mine(cell):  # ALGO: an algorithm's id, or its name for every parameter set
        return algo in (cell.split("/")[2], cell.split("/")[2].split("+")[0])

    gone = {plan.cell_batches[c][0] for c in cells if mine(c)}
    assert gone
    for c, u in zip(cells, used):
        assert (u / "runs0-1.npz").exists() != mine(c) and (u / "runs0-1.json").exists() != mine(c)
        assert receipts[c].exists() == (plan.cell_batches[c][0] not in gone)
        assert summaries[c].exists() != mine(c)  # else Snakemake would not rerun the missing receipt
    assert all(s.is_dir() for s in stale) and all(f.is_dir() for f in foreign)  # only the plan's folders
    assert "no cell of this config runs algorithm" in _refused(clean(proj, "--shards", "no-such-algo", "--remove"))
