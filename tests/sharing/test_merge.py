"""``banditrepro merge`` (banditrepro/sharing/merge.py): a foreign shard is refused naming the part of its name that
differs (kept under its own name with --keep-foreign); two copies of a run that disagree stop the merge with
nothing written; runs split across two machines combine into what one machine computes; challengers computed
by two labs join one leaderboard; bad input is one line. The command runs in this process (tests/sharing/conftest.py
``in_process``) but for one spawned call per exit status (0, 1, 2)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from banditrepro.cell import SHARED_KEYS
from banditrepro.shardformat import is_curve
from banditrepro.workflow.names import key_of_parts
from tests.sharing.conftest import RESULTS, SUBSET, cli_call, in_process, run
from tests.sharing.crafted import bundle_folder, rewrite_npz
from tests.workflow.common import TEST_CONFIG, clone, plan_of, shards_computed, tree_digest

pytestmark = pytest.mark.workflow

NARROWED = {"papers": ["winner-stays"], "max_horizon": 500}  # SUBSET, as plan_of takes it
CHALLENGER_A = "challengers={rucb: {alpha: 0.6}}"
CHALLENGER_B = "challengers={rmed1: {kweight: 0.5}}"
BOTH = "challengers={rucb: {alpha: 0.6}, rmed1: {kweight: 0.5}}"


def merge(proj: Path, *args: str, config=(), spawn: bool = False) -> subprocess.CompletedProcess:
    """``banditrepro merge ARGS`` in ``proj`` for the narrowed test config (``config``: more KEY=VALUE): in this
    process (``in_process``), or as a process of its own (``spawn``: one call per exit status, 0, 1 and 2)."""
    argv = ["merge", *map(str, args), "--configfile", TEST_CONFIG, "--config", *SUBSET, *config, "--project", str(proj)]
    return cli_call(argv, proj, spawn, timeout=600)


def published_cells(results: Path) -> dict:
    return json.loads((results / "published.json").read_text())["cells"]


def shard_of(results: Path, cell: str, key: str) -> Path:
    (found,) = sorted((results / "cells" / cell / key).glob("runs*.npz"))
    return found


def split_run(shard: Path, run_index: int, dest: Path, flip: str | None = None) -> Path:
    """One run of ``shard`` as a shard of its own at ``dest`` (another grouping of the same runs), re-saved with
    np.savez; ``flip``: one bit of that run's value of this per-run array flipped."""
    with np.load(shard) as z:
        arrays = {k: z[k] for k in z.files}
    i = list(arrays["run"]).index(run_index)
    out = {k: v if k in SHARED_KEYS else (v[:, i:i + 1] if is_curve(k) else v[i:i + 1]) for k, v in arrays.items()}
    if flip:
        out[flip] = out[flip].copy()
        out[flip].view(np.uint8)[0] ^= 1  # the lowest mantissa bit of a float64
    dest.parent.mkdir(parents=True, exist_ok=True)
    np.savez(dest, **out)
    return dest


def a_results_copy(results: Path, dest: Path) -> Path:
    """The shards and published.json of a results folder (what merge reads of it)."""
    shutil.copytree(results / "cells", dest / "cells")
    shutil.copy2(results / "published.json", dest / "published.json")
    return dest


def test_a_foreign_shard_is_refused_naming_what_differs_and_kept_only_with_keep_foreign(project, tmp_path):
    results = project / RESULTS
    cells = published_cells(results)
    src = a_results_copy(results, tmp_path / "B")
    # a cell computed with another base seed: its record in published.json, its shards under that record's key
    cell = "sushi16/T500/rucb"
    rec = {**cells[cell], "base_seed": 8}
    rec["key"] = key_of_parts(rec)
    shutil.copytree(src / "cells" / cell / cells[cell]["key"], src / "cells" / cell / rec["key"])
    for shard in (src / "cells" / cell / rec["key"]).glob("runs*.npz"):  # computed with that seed, as it says
        rewrite_npz(shard, base_seed=np.int64(8))
    published = json.loads((src / "published.json").read_text())
    published["cells"][cell] = rec
    (src / "published.json").write_text(json.dumps(published))
    # a shard folder under a key nothing records (a folder left from other code)
    other = "mslr5/T500/btm"
    shutil.copytree(src / "cells" / other / cells[other]["key"], src / "cells" / other / "ffffffffffffffff")
    seeded = shard_of(src, cell, rec["key"]).relative_to(src)
    stray = shard_of(src, other, "ffffffffffffffff").relative_to(src)

    r = merge(project, src, "--into", "results/m", spawn=True)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert f"refused {seeded} from {src}: its name covers other base_seed than this config's (base_seed 8 here 7)" \
        in lines, lines
    assert any(ln.startswith(f"refused {stray} from {src}: its name (ffffffffffffffff) is not this config's "
                             f"({cells[other]['key']}) and {src} records no parts") for ln in lines), lines
    assert len([ln for ln in lines if ln.startswith("refused ")]) == 2
    # all or nothing: a refused shard writes nothing, not even this config's own shards
    assert lines[-1].startswith("nothing merged: 2 shards named otherwise") and "merged " not in r.stdout, lines
    assert not (project / "results/m").exists()

    # --keep-foreign, from a bundle of the same folder: foreign shards stored untouched under their own names,
    # where this config's plan never reads; received.json names the bundle by its sha256
    bundle = bundle_folder(src, tmp_path / "B.tar.gz")
    r = merge(project, bundle, "--keep-foreign", "--into", "results/k")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "kept 2 foreign shards under their own names" in r.stdout, r.stdout
    kept = project / "results/k"
    assert (kept / seeded).read_bytes() == (src / seeded).read_bytes()
    assert (kept / stray).read_bytes() == (src / stray).read_bytes()
    plan = plan_of(project, TEST_CONFIG, **NARROWED, results_dir="results/k")
    read = {s for c in plan["cells"].values() for s in c["shards"]}
    assert f"results/k/{seeded}" not in read and f"results/k/{stray}" not in read
    assert all(not c["missing"] for c in plan["cells"].values())
    received = json.loads((kept / "received.json").read_text())["sources"]
    # each source names the runs it brought (banditrepro/records.py): only their report shows it
    assert [set(r.pop("describes")) for r in received] == [{"summaries"}]
    assert received == [{"source": str(bundle), "bundle_sha256": hashlib.sha256(bundle.read_bytes()).hexdigest(),
                         "shards": len(cells) + 2}]


def test_two_copies_of_a_run_that_disagree_stop_the_merge_and_nothing_is_written(project, tmp_path):
    results = project / RESULTS
    cells = published_cells(results)
    cell = "sushi16/T500/rucb"  # a 2-run cell: runs0-1
    key = cells[cell]["key"]
    shard = shard_of(results, cell, key)
    with np.load(shard) as z:
        final = next(k for k in sorted(z.files) if k.startswith("final_"))
    rel = f"cells/{cell}/{key}/runs1-1.npz"
    bad = split_run(shard, 1, tmp_path / "bad" / rel, flip=final).parents[5]
    good = split_run(shard, 1, tmp_path / "good" / rel).parents[5]

    # two sources, other groupings of run 1: one bit apart -> stop, naming both, the cell, the run, the array
    r = merge(project, results, bad, "--into", "results/m")
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    (line,) = [ln for ln in lines if ln.startswith("disagree: ")]
    assert line.startswith(f"disagree: {cell} run 1, {final}: {results} holds ") and f", {bad} holds " in line, line
    assert lines[-1].startswith("nothing merged: 1 disagreement (") and "nothing written" in lines[-1]
    assert not (project / "results/m").exists()

    # the same bytes in another grouping agree: both shards are copied (the plan takes the longest at each start)
    r = merge(project, results, good, "--into", "results/m")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"merged 1 shard (runs 1 of 1 cell) from {good}" in r.stdout.splitlines()
    assert (project / "results/m" / rel).read_bytes() == (good / rel).read_bytes()

    # a source against the folder merged into: stopped likewise, the folder left as it was
    before = tree_digest(project / "results/m")
    r = merge(project, bad, "--into", "results/m")
    assert r.returncode == 1, r.stdout + r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith("disagree: ")]
    assert line.startswith(f"disagree: {cell} run 1, {final}: the --into folder {project / 'results/m'} holds ")
    assert f", {bad} holds " in line
    assert tree_digest(project / "results/m") == before


def _outputs(results: Path) -> dict[str, bytes]:
    """claims.csv, every figure table and every summary .npz (the run-time table holds measured seconds)."""
    files = [results / "claims.csv", *(results / "tables").rglob("*.csv"), *(results / "summaries").rglob("*.npz")]
    return {str(p.relative_to(results)): p.read_bytes() for p in files if p.name != "runtime.csv"}


def test_runs_split_across_two_machines_combine_into_one_computation(project):
    """Each machine computes only shards (what merge reads; the figures are drawn from the merged folder): A runs
    0-1 of every cell (`--until simulate`), B runs 2-3 (first_run: shards, nothing published)."""
    run(project, "runs=2", "max_runs=2", results="results/a", args=("--until", "simulate"))
    run(project, "runs=4", "max_runs=4", "first_run=2", results="results/b")
    b = project / "results/b"
    assert shards_computed(b) and all(Path(s).name.startswith("runs2-") or Path(s).name.startswith("runs3-")
                                      for s in shards_computed(b))
    assert not (b / "published.json").exists()
    n = len(published_cells(project / RESULTS))  # the reference run's cells: A's (runs 0-1 of each, below)
    r = merge(project, "results/a", "results/b", "--into", "results/m", spawn=True)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("merged ") and lines[0].endswith(f" shards (runs 0-1 of {n} cells) from results/a")
    assert lines[1].endswith(f" (runs 2-3 of {n} cells) from results/b"), lines
    # the merged folder holds every run of a 4-run config: nothing computed, the same bytes as one machine's
    run(project, "runs=4", "max_runs=4", results="results/m")
    assert shards_computed(project / "results/m") == []
    run(project, "runs=4", "max_runs=4", results="results/c")
    merged, fresh = _outputs(project / "results/m"), _outputs(project / "results/c")
    assert sorted(merged) == sorted(fresh) and any(k.startswith("summaries/") for k in merged)
    assert [k for k in merged if merged[k] != fresh[k]] == []


def test_challengers_computed_by_two_labs_join_one_leaderboard(reference, project, tmp_path):
    """Each lab computes its challenger's shards (`--until simulate`: what merge reads); the leaderboard is drawn
    where they are merged."""
    lab_a, lab_b = clone(reference, tmp_path / "a"), clone(reference, tmp_path / "b")
    run(lab_a, CHALLENGER_A, args=("--until", "simulate"))
    run(lab_b, CHALLENGER_B, args=("--until", "simulate"))
    before = len(shards_computed(project / RESULTS))
    r = merge(project, lab_a / RESULTS, lab_b / RESULTS, "--into", RESULTS, config=(BOTH,))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    cells = published_cells(project / RESULTS)
    # each lab's 5 challenger cells (3 runs in Fig. 2, 2 in Fig. 3); the papers' cells are here already
    for lab, line in zip((lab_a, lab_b), lines):
        assert line == (f"merged 5 shards (runs 0-2 of 3 cells, runs 0-1 of 2 cells) from {lab / RESULTS}; "
                        f"{len(cells)} already there"), lines
    run(project, BOTH)
    assert len(shards_computed(project / RESULTS)) == before  # nothing computed, challengers' cells neither
    board = (project / RESULTS / "leaderboards/winner-stays.csv").read_text()
    assert "rucb+alpha=0.6" in board and "rmed1+kweight=0.5" in board, board[:2000]


def test_bad_input_is_one_line_and_exit_status_2(project, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not results\n")
    (tmp_path / "empty").mkdir()
    cases = {
        "no SOURCE given": ("--into", "results/m"),
        "neither a results folder nor a bundle": (text, "--into", "results/m"),
        "not a results folder": (tmp_path / "empty", "--into", "results/m"),
        "not a folder of this project": (project / RESULTS, "--into", tmp_path / "elsewhere"),
        "exists and is not a folder": (project / RESULTS, "--into", f"{RESULTS}/claims.csv"),
        "--into RESULTS_DIR is required": (project / RESULTS,),
    }
    for i, (says, args) in enumerate(cases.items()):
        r = merge(project, *args, spawn=i == 0)  # the first as a process: exit status 2 as a shell sees it
        assert r.returncode == 2 and r.stdout == "", (says, r.stdout, r.stderr)
        assert len(r.stderr.splitlines()) == 1 and says in r.stderr, (says, r.stderr)
    assert not (project / "results/m").exists() and not (tmp_path / "elsewhere").exists()


# --- all or nothing (issue 43, point 5) --------------------------------------------------------------------


def test_a_killed_merges_staging_is_removed_by_the_next_and_ignored_by_plan_and_clean(project, tmp_path):
    into = project / RESULTS
    stale = into / ".merge-deadbeef" / "cells" / "sushi16" / "T500" / "rucb" / "0123456789abcdef"
    stale.mkdir(parents=True)
    (stale / "runs0-1.npz").write_bytes(b"half a shard")  # what a merge killed while staging leaves
    # a plan of the folder and `clean` do not see it (they look in cells/, summaries/, store/, batches/)
    plan = plan_of(project, TEST_CONFIG, **NARROWED)
    assert all(not c["missing"] for c in plan["cells"].values())
    r = in_process(["clean", "--project", str(project), "--configfile", TEST_CONFIG, "--config", *SUBSET], project)
    assert r.returncode == 0 and ".merge-" not in r.stdout, r.stdout + r.stderr
    # the next merge (every shard already there) removes it, and writes nothing else
    source = a_results_copy(into, tmp_path / "B")
    before = tree_digest(into, skip=str(into / ".merge-"))
    r = merge(project, source, "--into", RESULTS)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not list(into.glob(".merge-*"))
    assert tree_digest(into) == before


def test_a_merge_moves_staged_shards_in_with_received_json_last(project, tmp_path, monkeypatch):
    """Unit level: the order of what lands in the --into folder, and a merge killed while moving."""
    from banditrepro.sharing import merge as merging
    from banditrepro.sharing.sources import open_source

    results = project / RESULTS
    into = project / "results/m"
    landed = []
    real_replace = merging.os.replace

    def replace(a, b):
        if ".merge-" in str(b) or ".merge-" not in str(a):  # staging's own atomic writes: not a move in
            return real_replace(a, b)
        landed.append(Path(b).relative_to(into).as_posix())
        if len(landed) == 5:  # killed while moving: the folder holds whole shards only, no received.json
            raise KeyboardInterrupt
        real_replace(a, b)

    monkeypatch.setattr(merging.os, "replace", replace)
    plan = __import__("banditrepro.workflow.plan", fromlist=["x"]).build_plan(
        {**json.loads((results / "published.json").read_text())["config"], "results_dir": "results/m"}, project,
        scan=False)
    with open_source(results, data_dir=project / "data") as src:
        with pytest.raises(KeyboardInterrupt):
            merging.merge([src], into, plan)
        npz = [p for p in landed[:4] if p.endswith(".npz")]
        assert landed[0].endswith(".json") and npz and all((into / p).is_file() for p in npz)
        assert not (into / "received.json").exists() and not list(into.glob(".merge-*"))
        monkeypatch.setattr(merging.os, "replace", real_replace)
        out = merging.merge([src], into, plan)  # the same command again completes it
    assert out.ok and (into / "received.json").is_file()
    shards = sorted(p.relative_to(into).as_posix() for p in into.rglob("runs*.npz"))
    assert shards == sorted(p.relative_to(results).as_posix() for p in results.rglob("runs*.npz"))
    for rel in shards:
        assert (into / rel).read_bytes() == (results / rel).read_bytes()


def test_a_sidecar_link_in_the_source_is_bad_input_and_nothing_is_written(project, tmp_path):
    source = a_results_copy(project / RESULTS, tmp_path / "B")
    side = sorted((source / "cells").rglob("runs*.json"))[0]
    (tmp_path / "outside.json").write_bytes(side.read_bytes())
    side.unlink()
    side.symlink_to(tmp_path / "outside.json")
    r = merge(project, source, "--into", "results/m")
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.stderr
    assert "symbolic link" in r.stderr and not (project / "results/m").exists()
