"""Content-addressed results (issue 38, docs/decisions.md#content-addressing), end to end: whatever happened to
a results folder (a seed switched back and forth with or without Snakemake's metadata, two checkouts sharing
it, read-only commands, a config switched back after more runs per cell, a new numerics stack whose run is
killed with -9, a moved folder, a challenger added), claims.csv and every table (the run-time table aside: run
times) are byte for byte those of a fresh results folder of the same config, and what exists under its name is
never computed again.

The test config narrowed to its smallest paper at a short horizon (46 shards, ~30 s a run on 2 cores): one
fresh run of it (``reference``, the session's narrowed reference, tests/conftest.py, which the sharing tests
share) is what every test compares with; the tests work on `cp -a` clones of it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.workflow.common import (
    SNAKEMAKE,
    SUBSET,
    TEST_CONFIG,
    TEST_RESULTS,
    clone,
    copy_project,
    job_counts,
    shard_files,
    smk,
)
from tests.workflow.common import run_narrowed as run
from tests.workflow.common import shards_computed as computed

pytestmark = pytest.mark.workflow

ONLY_ALL = {"all": 1, "total": 1}  # the dry run of a complete folder: rule all (it publishes) and nothing else


# --- helpers ----------------------------------------------------------------------------------------------


def dry(proj: Path, *config: str, args=(), results: str = TEST_RESULTS) -> dict[str, int]:
    """The job table of a dry run (rule -> count)."""
    r = run(proj, *config, args=("-n", *args), results=results)
    return job_counts(r.stdout + r.stderr)


def published(results: Path) -> dict[str, bytes]:
    """What must equal a fresh folder's: claims.csv, every table and the leaderboards, if any (runtime.csv
    aside: it holds run times)."""
    files = [results / "claims.csv", *(results / "tables").rglob("*"), *(results / "leaderboards").glob("*")]
    out = {str(p.relative_to(results)): p.read_bytes() for p in files if p.is_file() and p.name != "runtime.csv"}
    assert "claims.csv" in out and len(out) > 10, sorted(out)  # five figures' tables: 15 files and claims
    return out


def assert_same(here: dict, fresh: dict, what: str) -> None:
    differ = sorted(k for k in {*here, *fresh} if here.get(k) != fresh.get(k))
    assert not differ, f"{what}: differs from a fresh folder of the same config in {differ}"


def tree(folder: Path) -> dict[str, tuple[bool, int, int]]:
    """Every file and folder under ``folder``: (is a folder, size, mtime). A file written, replaced, created
    and deleted again (a folder's mtime) or deleted shows."""
    if not folder.exists():
        return {}
    out = {}
    for p in [folder, *sorted(folder.rglob("*"))]:
        st = p.lstat()
        out[str(p.relative_to(folder))] = (p.is_dir(), 0 if p.is_dir() else st.st_size, st.st_mtime_ns)
    return out


def assert_unchanged(before: dict, after: dict, what: str) -> None:
    changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
    assert not changed, f"{what} changed {changed[:20]}"


def snapshot(results: Path) -> dict:
    """What a run that computes nothing leaves as it was: the shards log, the shards, summaries and store."""
    return {"log": computed(results), **{d: tree(results / d) for d in ("cells", "summaries", "store")}}


def assert_nothing_computed(before: dict, results: Path, what: str) -> None:
    after = snapshot(results)
    assert after["log"] == before["log"], f"{what}: computed {after['log'][len(before['log']):]}"
    for d in ("cells", "summaries", "store"):
        assert_unchanged(before[d], after[d], f"{what}: {d}/")


# --- the fresh reference --------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def reference(narrowed_reference) -> Path:
    """A project copy with the narrowed test config run once in results/test: the fresh folder (the session's
    narrowed reference, tests/conftest.py: 46 shards computed, a dry run lists `all` alone; never modified)."""
    return narrowed_reference


@pytest.fixture
def complete(reference, tmp_path) -> Path:
    """A `cp -a` clone of the reference project (its results, data and .snakemake/): a complete folder."""
    return clone(reference, tmp_path / "project")


# --- 1. a seed switched back and forth --------------------------------------------------------------------


@pytest.fixture(scope="module")
def switched(reference, tmp_path_factory) -> Path:
    """The reference switched to base seed 8 in place (its seed-7 shards, summaries and entries kept)."""
    proj = clone(reference, tmp_path_factory.mktemp("switched") / "project")
    before = len(computed(proj / TEST_RESULTS))
    run(proj, "base_seed=8")
    assert len(computed(proj / TEST_RESULTS)) == before + 46  # every cell of seed 8 is new
    assert published(proj / TEST_RESULTS) != published(reference / TEST_RESULTS)  # else the switch shows nothing
    return proj


def _switch_back(switched: Path, reference: Path, tmp_path: Path, prepare=None, args=(), strict=True) -> None:
    """Seed 8 -> 7 in a clone of ``switched`` (``prepare(proj)`` first, ``args`` on the last step): seed 7's
    numbers come back; ``strict``: and nothing is computed, not even a figure (the run's job table shows only
    `all`)."""
    proj = clone(switched, tmp_path / "project")
    results = proj / TEST_RESULTS
    if prepare:
        prepare(proj)
    before = snapshot(results)
    r = run(proj, args=args)
    if strict:  # the run's own job table: what it ran (a dry run first would plan the same, ~2 s more)
        assert job_counts(r.stdout + r.stderr) == ONLY_ALL, job_counts(r.stdout + r.stderr)
        assert_nothing_computed(before, results, "seed 7 again")
    else:  # other triggers may redo summaries and entries (same bytes); never a shard
        assert computed(results) == before["log"]
    assert_same(published(results), published(reference / TEST_RESULTS), "seed 7 again")


def test_seed_switch_back_and_forth_with_metadata_gone(switched, reference, tmp_path):
    # Before: summaries and figures at fixed paths, current only by Snakemake's params records: without
    # .snakemake/ the seed-8 summaries (newer than the seed-7 shards) stayed, and seed 7 showed seed 8's numbers.
    _switch_back(switched, reference, tmp_path, prepare=lambda proj: shutil.rmtree(proj / ".snakemake"))


def test_seed_switch_back_and_forth_with_rerun_triggers_mtime(switched, reference, tmp_path):
    # Before: --rerun-triggers mtime ignored the params digests that named the seed: seed 8's numbers stayed.
    _switch_back(switched, reference, tmp_path, args=("--rerun-triggers", "mtime"))


def test_seed_switch_back_and_forth_after_cleanup_metadata(switched, reference, tmp_path):
    """Snakemake's records of seed 7's claims and figure entries removed (`--cleanup-metadata`) first."""

    def cleanup(proj: Path) -> None:
        store = proj / TEST_RESULTS / "store"
        files = sorted(str(p.relative_to(proj)) for kind in ("claims", "figures") for p in (store / kind).rglob("*")
                       if p.is_file())
        assert len(files) > 25  # claims and five figures (5 files each) of two seeds
        run(proj, args=("--cleanup-metadata", *files))

    # Before: without their records the fixed-path outputs counted as current: seed 8's claims stayed.
    _switch_back(switched, reference, tmp_path, prepare=cleanup)


def test_seed_switch_back_and_forth_with_every_rerun_trigger(switched, reference, tmp_path):
    """Snakemake's default triggers (code, input, mtime, params, software-env; the profile sets mtime only): a
    summary's recorded inputs were its batch's end, now its shards, so it may be summarized again (same bytes,
    docs/decisions.md#content-addressing); no shard is computed and the numbers are seed 7's."""
    _switch_back(switched, reference, tmp_path, strict=False,
                 args=("--rerun-triggers", "code", "input", "mtime", "params", "software-env"))


# --- 2. two checkouts, one results folder -----------------------------------------------------------------


def test_two_checkouts_share_one_results_dir(reference, tmp_path):
    """A and B (B's yelp from its own matrix file, so every yelp cell derives differently) both write one
    folder: results_dir must be a relative folder inside the project, so each has results/shared -> the same
    absolute folder. B runs first, into the empty folder: a fresh folder of B's config; then A, then B again.
    Each run publishes its own checkout's numbers (A's: the reference's) and never rewrites the other's
    shards; A computes only what derives differently, B again nothing."""
    # Before: a shard's path named its cell and code, not its data: A found B's yelp shards complete (or, by
    # its receipts, recomputed them over B's), and B's figures showed A's numbers after A ran.
    a = clone(reference, tmp_path / "A")
    b = clone(reference, tmp_path / "B")  # another checkout (its own data/ and .snakemake/); B's yelp below
    catalog = b / "config/datasets.yaml"
    catalog.write_text(catalog.read_text().replace("    path: null ", "    path: yelp.txt ", 1))
    # Yelp's stand-in (sushi16) with its items in reverse order: another problem as hard (a tiny matrix makes
    # claims' ratio intervals unbounded at this horizon: runs_to_settle overflows, banditrepro/verdicts.py)
    (sushi,) = (a / "data/prepared/sushi16").glob("*.json")
    m = json.loads(sushi.read_text())["matrix"]
    (b / "yelp.txt").write_text("".join(" ".join(repr(x) for x in row[::-1]) + "\n" for row in m[::-1]))
    shared = tmp_path / "shared"
    shared.mkdir()
    for proj in (a, b):
        (proj / "results/shared").symlink_to(shared)
    results = shared

    run(b, results="results/shared")
    b_fresh, b_shards, b_computed = published(results), shard_files(results), computed(results)
    a_fresh = published(reference / TEST_RESULTS)
    assert a_fresh != b_fresh  # else "its own numbers" could not be told apart
    assert len(b_computed) == 46

    run(a, results="results/shared")
    assert_same(published(results), a_fresh, "A after B")
    by_a = computed(results)[len(b_computed):]
    assert by_a and all(p.startswith("cells/yelp/") for p in by_a), by_a  # only what derives differently
    after = shard_files(results)
    assert_unchanged(b_shards, {k: after.get(k) for k in b_shards}, "A's run: B's shard files")

    run(b, results="results/shared")
    assert_same(published(results), b_fresh, "B after A")
    assert computed(results) == b_computed + by_a  # B's shards were all there
    after = shard_files(results)
    assert_unchanged(b_shards, {k: after.get(k) for k in b_shards}, "B again: B's shard files")


# --- 4. read-only commands ------------------------------------------------------------------------------


def test_dry_run_and_read_only_commands_write_nothing(complete, tmp_path):
    """`snakemake -n`, `--list`, `--unlock` (it may touch .snakemake/locks), `--report` (only the file asked
    for) and `banditrepro estimate` write and delete nothing under results/ and data/, on a complete folder and
    on one with a shard deleted by hand. The complete folder's HTML report has a caption per figure."""
    # Before: planning dropped the receipts of batches whose shards were gone, in a dry run too.
    proj, results = complete, complete / TEST_RESULTS
    config = ["--config", *SUBSET, f"results_dir={TEST_RESULTS}"]

    def commands(tag: str) -> str:
        report = tmp_path / f"r-{tag}.html"
        for args in (["-n"], ["--list"], ["--unlock"], ["--report", str(report)]):
            r = smk("--configfile", TEST_CONFIG, "--cores", "2", *args, *config, cwd=proj)
            assert r.returncode == 0, (args, (r.stdout + r.stderr)[-2000:])
        assert report.stat().st_size > 0
        r = subprocess.run([sys.executable, "-m", "banditrepro", "estimate", "--project", str(proj),
                            "--configfile", str(proj / TEST_CONFIG), *config], capture_output=True, text=True,
                           cwd=proj, env={**os.environ, "PYTHONPATH": str(proj / "src")}, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    def read_only(tag: str) -> str:
        before = {d: tree(proj / d) for d in ("results", "data")}
        estimate = commands(tag)
        for d, was in before.items():
            assert_unchanged(was, tree(proj / d), f"{tag}: {d}/")
        return estimate

    assert "shards: 46, of which 0 to compute" in read_only("complete")
    # the HTML report has a caption per figure, with the runs per line (banditrepro/workflow/plan.py)
    assert (tmp_path / "r-complete.html").read_text().count("Configuration: 2 runs per line") >= 3
    shard = sorted((results / "cells").rglob("runs*.npz"))[0]
    shard.unlink()
    # the plan sees it missing and packs a batch for it (its summary, complete under its name, needs nothing)
    assert "shards: 46, of which 1 to compute" in read_only("shard deleted")


# --- 5. a config switched back --------------------------------------------------------------------------


def test_switching_back_computes_nothing_that_exists(complete, reference):
    """X (the reference), Y (runs=3: more runs per cell), X again. Y computes only the new runs: one new shard,
    runs2-2, beside each two-run cell's runs0-1 (the cells a figure gives 3 runs already have them), every old
    shard file left as it was; a dry run of Y then lists `all` alone. X again: nothing is computed, and X's
    numbers are back."""
    # Before: X's summaries were rewritten by Y at their fixed paths and made again from X's shards.
    results = complete / TEST_RESULTS
    before, old = computed(results), shard_files(results)
    two_runs = {str(Path(p).parent) for p in old if Path(p).name == "runs0-1.npz"}
    assert two_runs and all(Path(p).name in ("runs0-1.npz", "runs0-2.npz") for p in old if p.endswith(".npz"))
    run(complete, "runs=3")
    after = shard_files(results)
    assert {p: after.get(p) for p in old} == old  # the old shards: same inode, same mtime, same bytes
    new = set(after) - set(old)
    assert new and all(Path(p).name in ("runs2-2.npz", "runs2-2.json") for p in new), sorted(new)
    assert sorted(str(Path(p).parent) for p in new if p.endswith(".npz")) == sorted(two_runs)  # one a cell
    assert sorted(computed(results)) == sorted(before + [p for p in new if p.endswith(".npz")])
    assert dry(complete, "runs=3") == ONLY_ALL
    assert published(results) != published(reference / TEST_RESULTS)
    was = snapshot(results)
    r = run(complete)  # its own job table: a dry run first would plan the same
    assert job_counts(r.stdout + r.stderr) == ONLY_ALL, job_counts(r.stdout + r.stderr)
    assert_nothing_computed(was, results, "X again")
    assert_same(published(results), published(reference / TEST_RESULTS), "X again")


# --- 6. another numerics stack, killed with -9 part-way ------------------------------------------------------


def _fake_stack(proj: Path, site: Path) -> dict[str, str]:
    """The environment of runs that see another numerics stack without touching numpy: a
    numpy-<other>.dist-info on the runs' PYTHONPATH, found before the real one by importlib.metadata, which
    names.numerics_stack reads (the seam: what the plan reads, not a patch of our code). Checked: the plan
    sees the fake, numpy is the real one."""
    from importlib import metadata

    real = metadata.version("numpy")
    fake = f"{real}+faked"
    (site / f"numpy-{fake}.dist-info").mkdir(parents=True)
    (site / f"numpy-{fake}.dist-info/METADATA").write_text(f"Metadata-Version: 2.1\nName: numpy\nVersion: {fake}\n")
    env = {"PYTHONPATH": os.pathsep.join([str(proj / "src"), str(site)])}
    seen = subprocess.run([sys.executable, "-c", "from banditrepro.workflow.names import numerics_stack as s; "
                           "import numpy; print(s()['numpy'], numpy.__version__)"], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=proj)
    assert seen.stdout.split() == [fake, real], seen.stderr
    return env


def _start(proj: Path, log: Path, env: dict[str, str]) -> subprocess.Popen:
    """The narrowed test config as `run`, in its own process group (killed as one), its output in ``log``."""
    command = [*SNAKEMAKE, "-s", str(proj / "Snakefile"), "--configfile", TEST_CONFIG, "--cores", "2",
               "--config", *SUBSET, f"results_dir={TEST_RESULTS}"]
    with open(log, "w") as out:
        return subprocess.Popen(command, cwd=proj, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, **env})


def _wait_for(condition, p: subprocess.Popen, timeout: float, what: str) -> float:
    """Seconds until ``condition()`` holds; fails if ``p`` ends first or ``timeout`` passes."""
    t0 = time.monotonic()
    while not condition():
        assert p.poll() is None, f"{what}: snakemake ended first (exit {p.returncode})"
        assert time.monotonic() - t0 < timeout, f"{what}: not within {timeout} s"
        time.sleep(0.05)
    return time.monotonic() - t0


def _cell_and_runs(p: str) -> tuple[str, str]:
    """cells/<d>/T<h>/<algo>/<key>/runs<a>-<b>.npz without <key>: the shard whatever its name."""
    return str(Path(p).parent.parent), Path(p).name


def test_faked_stack_change_killed_with_9_computes_new_shards_and_resumes_at_once(complete, reference, tmp_path):
    """The numerics stack the plan sees changed (``_fake_stack``): every shard gets a new name and is computed;
    the old files stay as they were; the numbers are the same. That run (all 46 shards to compute, as a fresh
    folder's) is killed (SIGKILL, its whole process group) once a few shards exist; `--unlock`; the same
    command finishes, computes exactly the shards missing at the kill, at once. One test: the stack change is
    the run the kill interrupts (a fresh run from scratch would compute the same shards, and prepare the data
    too)."""
    # Before (stack): the stack was recorded in a sidecar only, so an upgrade reused every shard computed by the
    # old numpy (no new line in shards-computed.log).
    env = _fake_stack(complete, tmp_path / "fake-stack")
    results = complete / TEST_RESULTS
    old, old_log = shard_files(results), computed(results)
    old_shards = {p for p in old if p.endswith(".npz")}
    assert len(old_shards) == 46

    p = _start(complete, tmp_path / "killed.log", env)
    try:
        _wait_for(lambda: len(computed(results)) >= len(old_log) + 3, p, 600, "three shards")
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
    first = computed(results)[len(old_log):]
    done = {str(s.relative_to(results)) for s in (results / "cells").rglob("runs*.npz")} - old_shards
    assert set(first) <= done and len(done) < 46  # killed part-way

    r = smk("--configfile", TEST_CONFIG, "--unlock", "--config", *SUBSET, f"results_dir={TEST_RESULTS}",
            cwd=complete, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    p = _start(complete, tmp_path / "resumed.log", env)
    # Before (kill): a killed batch left its shards' leases behind, and the next run waited until they were
    # stale (60 s without renewal) before computing those shards. Now the first shard is computed as soon as
    # Snakemake has parsed and built its DAG and run the first batch (~5-10 s on this 2-core VM, its shards
    # here < 1 s each): 20 s is twice that, a third of the old lease wait.
    started = _wait_for(lambda: len(computed(results)) > len(old_log) + len(first), p, 600,
                        "the first shard after kill -9")
    assert p.wait(timeout=900) == 0, (tmp_path / "resumed.log").read_text()[-3000:]
    print(f"first shard computed {started:.1f} s after the restart")

    new = computed(results)[len(old_log):]
    assert len(new) == len(set(new)) == len(old_shards) and not set(new) & old_shards
    assert sorted(map(_cell_and_runs, new)) == sorted(map(_cell_and_runs, old_shards))  # each shard, new name
    every = {str(s.relative_to(results)) for s in (results / "cells").rglob("runs*.npz")} - old_shards
    again = new[len(first):]
    assert len(again) == len(set(again)) and set(again) == every - done  # each missing shard once, no other
    after = shard_files(results)
    assert_unchanged(old, {k: after.get(k) for k in old}, "the old stack's shard files")
    assert_same(published(results), published(reference / TEST_RESULTS), "another stack, after kill -9")
    assert started < 20, f"the first shard came {started:.1f} s after the restart"


# --- 7. a moved results folder ----------------------------------------------------------------------------


def test_results_folder_moved_reuses_every_shard_and_summary(reference, tmp_path):
    """The reference's results folder copied (cp -a) into another checkout at another path (with the
    checkout's prepared data, shared by every config; without .snakemake/, which stays behind): nothing but
    the publication runs there."""
    # Before: anything keyed by the checkout's location or by Snakemake's records (metadata, receipts) made
    # the moved folder compute again.
    other = copy_project(tmp_path / "elsewhere" / "checkout")
    (other / "results").mkdir()
    for d in (TEST_RESULTS, "data"):
        subprocess.run(["cp", "-a", str(reference / d), str(other / d)], check=True)
    results = other / TEST_RESULTS
    was = snapshot(results)
    assert dry(other) == ONLY_ALL
    run(other)
    assert_nothing_computed(was, results, "the moved folder")
    assert_same(published(results), published(reference / TEST_RESULTS), "the moved folder")


# --- 8. a challenger on a complete folder -----------------------------------------------------------------

_PLAN = """
import json, sys
from pathlib import Path
from banditrepro.workflow.estimate import load_config
from banditrepro.workflow.plan import build_plan
plans = {}
for tag, overrides in json.loads(sys.argv[1]).items():  # the config Snakemake builds from these --config
    p = build_plan(load_config(Path("."), [".test/config/config.yaml"], overrides), ".")
    plans[tag] = {"cells": sorted(p.cell_runs), "shards": [list(s) for s in p.all_shards()],
                  "batches": {b.name: [list(s) for s in b.shards] for b in p.batches}}
print(json.dumps(plans))
"""


def _planned_jobs(out: str) -> list[tuple[str, dict]]:
    """(rule, wildcards) of every job block a dry run with `--quiet host` prints."""
    jobs, rule = [], None
    for line in out.splitlines():
        m = re.match(r"(?:local)?rule (\S+):$", line)
        if m:
            rule = m.group(1)
            jobs.append((rule, {}))
        elif rule and line.startswith("    wildcards: "):
            jobs[-1] = (rule, dict(w.partition("=")[::2] for w in line.split(": ", 1)[1].split(", ")))
    return jobs


def test_one_challenger_plans_only_its_cells(complete):
    """RMED2 as a challenger (it joins Winner Stays' weak-regret figure; its strong-regret cells are a paper
    line, complete already) with cluster packing (batch_minutes=1), in a dry run: the batches planned hold
    exactly the challenger's new cells' shards, and the summaries planned are exactly those cells."""
    # Before: batches were named by the cells they packed and packed finished shards too, so a challenger
    # regrouped the paper's shards into new batches that the dry run listed again.
    extra = ["challengers=['rmed2']", "batch_minutes=1"]
    config = [*SUBSET, f"results_dir={TEST_RESULTS}", *extra]
    r = smk("-n", "--quiet", "host", "--configfile", TEST_CONFIG, "--config", *config, cwd=complete)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    jobs = _planned_jobs(out)
    both = {"base": config[:-len(extra)], "challenger": config}
    plan = subprocess.run([sys.executable, "-c", _PLAN, json.dumps(both)],
                          cwd=complete, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(complete / "src")})
    assert plan.returncode == 0, plan.stderr[-3000:]
    plans = json.loads(plan.stdout)
    new_cells = set(plans["challenger"]["cells"]) - set(plans["base"]["cells"])
    assert new_cells and all(c.endswith("/rmed2") for c in new_cells), new_cells
    assert any(c.endswith("/rmed2") for c in plans["base"]["cells"])  # a paper line's RMED2 cells, complete

    batches = plans["challenger"]["batches"]
    planned = {w["batch"] for rule, w in jobs if rule == "simulate"}
    assert planned == set(batches) == {w["batch"] for rule, w in jobs if rule == "batch_spec"}
    packed = [tuple(s) for shards in batches.values() for s in shards]
    assert sorted(packed) == sorted(tuple(s) for s in plans["challenger"]["shards"] if s[0] in new_cells)
    summaries = {f"{w['dataset']}/T{w['horizon']}/{w['algo']}" for rule, w in jobs if rule == "summarize_cell"}
    assert summaries == new_cells
    assert len([j for j in jobs if j[0] == "summarize_cell"]) == len(new_cells)
