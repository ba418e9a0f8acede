"""What reruns after an edit, end to end in copies of the finished session runs (tests/workflow/conftest.py):
a shared helper's body (digests from import closures), more runs per cell, and prepared datasets forced to
run again (their batches run again and find their shards complete)."""

import importlib
import os
import re
from pathlib import Path

import pytest

from banditrepro import algorithms
from banditrepro.workflow import digests
from tests.workflow.common import MIRROR_ARG, TEST_CELLS, TEST_CONFIG, clone, edit_function, job_counts, smk

pytestmark = pytest.mark.workflow


def scheduled_cells(out: str, project: Path) -> set[str]:
    """Cell keys of the shards to compute in the batches a dry run with `--quiet host` lists (one block per
    job), as the project's own code plans them: a batch also holding other cells' shards finds those complete."""
    import json
    import subprocess
    import sys

    names = set(re.findall(r"wildcards: batch=([^,\s]+)", out))
    plan = ("import json, sys, yaml; from banditrepro.workflow.plan import build_plan; "
            f"cfg = yaml.safe_load(open({TEST_CONFIG!r})); cfg['data_mirrors'] = []; "
            "import os; p = build_plan(cfg, '.'); "
            "print(json.dumps({b.name: [s[0] for s in b.shards if not os.path.exists(p.shard(*s))] "
            "for b in p.batches}))")
    r = subprocess.run([sys.executable, "-c", plan], cwd=project, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(project / "src")})
    assert r.returncode == 0, r.stderr
    cells = json.loads(r.stdout)
    return {c for n in names for c in cells[n]}


def test_editing_the_shared_rng_helper_reschedules_exactly_its_users(test_run, tmp_path):
    copy = clone(test_run[0], tmp_path / "copy")
    helper = importlib.import_module("banditrepro.algorithms.ccb").randint.__module__
    src = copy / "src"
    edit_function(digests.module_file(helper, src / "banditrepro"), "randint")
    r = smk("-n", "--quiet", "host", "--configfile", TEST_CONFIG, *MIRROR_ARG, cwd=copy)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    algos = {cell.split("/")[2].split("+")[0] for cell in scheduled_cells(out, copy)}
    users = {n for n in algorithms.names()
             if helper in digests.closure([algorithms.get(n).run.__module__, digests.CELL])}
    assert {"ccb", "if", "qsa", "scb"} <= algos
    assert algos <= users and "c2b" not in algos, algos
    # the profile's quiet dry run prints its job table once (Snakemake prints it before and after)
    r = smk("-n", "--configfile", TEST_CONFIG, *MIRROR_ARG, cwd=copy)
    out = r.stdout + r.stderr
    assert out.count("Job stats") == 1 and job_counts(out).get("summarize_cell"), out[-3000:]


def _run_files(folder: Path) -> dict[Path, tuple[int, int]]:
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.rglob("runs*.npz")}


def test_more_runs_compute_only_the_new_runs(project, tmp_path):
    copy = clone(project, tmp_path / "copy")
    cells = copy / "results/cells/seed11"
    before = _run_files(cells)
    assert before and all(p.name == "runs0-1.npz" for p in before)  # 2 runs per cell, one shard
    r = smk("--configfile", "paper.yaml", "--config", "runs=3", "--cores", "2", cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    after = _run_files(cells)
    assert {p: after[p] for p in before} == before  # runs 0 and 1: same inode, same mtime
    new = set(after) - set(before)
    assert new and all(p.name == "runs2-2.npz" for p in new)  # a new shard after the old one
    assert len(new) == len({p.parent for p in before})  # one per cell
    r = smk("-n", "--configfile", "paper.yaml", "--config", "runs=3", cwd=copy)
    assert "Nothing to be done" in r.stdout + r.stderr, job_counts(r.stdout + r.stderr)


def test_forced_preparation_runs_batches_that_recompute_nothing(test_run, tmp_path):
    """-R prepare_dataset re-derives every prepared dataset (same bytes): Snakemake reruns everything
    downstream, in batches (as many as new shards would make, not one job per shard), and each batch finds
    its shards complete."""
    copy = clone(test_run[0], tmp_path / "copy")
    log = copy / TEST_CELLS / "../../logs/shards-computed.log"
    computed = log.read_text()
    r = smk("-n", "-R", "prepare_dataset", "--configfile", TEST_CONFIG, *MIRROR_ARG, "--config",
            "batch_minutes=20", cwd=copy)
    counts = job_counts(r.stdout + r.stderr)
    assert r.returncode == 0 and counts["prepare_dataset"] >= 5, counts
    assert counts["simulate"] <= counts["prepare_dataset"] + 1, counts  # a batch or so per dataset
    r = smk("-n", "-R", "prepare_dataset", "--configfile", TEST_CONFIG, *MIRROR_ARG, cwd=copy)
    local = job_counts(r.stdout + r.stderr)
    assert local["simulate"] < local["summarize_cell"], local  # local batches: still not one job per shard
    r = smk("-R", "prepare_dataset", "--configfile", TEST_CONFIG, *MIRROR_ARG, "--cores", "2", cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert log.read_text() == computed  # no shard computed again
    claims = copy / TEST_CELLS / "../../claims.csv"
    assert claims.read_bytes() == (test_run[0] / TEST_CELLS / "../../claims.csv").read_bytes()


def test_test_config_cells_exist(test_run):
    assert (test_run[0] / TEST_CELLS).is_dir()
