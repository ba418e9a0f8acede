"""What reruns after an edit, end to end in copies of the finished session runs (tests/workflow/conftest.py):
edits that change no number (nothing), a kernel's or a shared helper's body (exactly their algorithms' shards),
more runs per cell (only the new runs), and prepared datasets forced to run again (their batches run again and
find their shards complete)."""

import importlib
import os
import re
from pathlib import Path

import pytest

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


def _dry_run(copy: Path) -> str:
    r = smk("-n", "--quiet", "host", "--configfile", TEST_CONFIG, *MIRROR_ARG, cwd=copy)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    return out


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _rucb_docstring(pkg: Path) -> None:
    path = pkg / "algorithms" / "rucb.py"
    path.write_text(path.read_text().replace('"""', '"""A docstring edit. ', 1))


def _new_registry_entry(pkg: Path) -> None:
    path = pkg / "algorithms" / "builtin.py"
    path.write_text(path.read_text().replace('"rucb": "rucb",', '"rucb": "rucb",\n    "rucb-again": "rucb",'))


# edits that cannot change a number: a dry run afterwards has nothing to do (docs/decisions.md#code-digests)
NO_NUMBER_EDITS = {
    "comment in the registry": lambda pkg: _append(pkg / "algorithms/builtin.py", "\n# a comment\n"),
    "new registry entry": _new_registry_entry,
    "comment in the download code": lambda pkg: _append(pkg / "datasets/fetch.py", "\n# a comment\n"),
    "new function in the preparation code": lambda pkg: _append(pkg / "datasets/derive.py",
                                                                "\n\ndef unused():\n    return 1\n"),
    "docstring of a kernel": _rucb_docstring,
}


@pytest.mark.parametrize("edit", sorted(NO_NUMBER_EDITS))
def test_an_edit_that_changes_no_number_reruns_nothing(test_run, tmp_path, edit):
    copy = clone(test_run[0], tmp_path / "copy")
    NO_NUMBER_EDITS[edit](copy / "src" / "banditrepro")
    out = _dry_run(copy)
    assert "Nothing to be done" in out, (edit, job_counts(out))


def test_a_kernel_edit_reschedules_exactly_its_algorithms_shards(test_run, tmp_path):
    copy = clone(test_run[0], tmp_path / "copy")
    edit_function(copy / "src/banditrepro/algorithms/rucb.py", "rucb_kernel")
    cells = {"/".join(c.split("/")[:3]) for c in scheduled_cells(_dry_run(copy), copy)}  # dataset/T<h>/<algo>
    rucb = {"/".join(p.relative_to(copy / TEST_CELLS).parts[:3]) for p in (copy / TEST_CELLS).rglob("*.npz")
            if p.relative_to(copy / TEST_CELLS).parts[2] == "rucb"}
    assert rucb and cells == rucb  # every RUCB cell of the test config, and nothing else


def test_editing_the_shared_rng_helper_reschedules_exactly_its_users(test_run, tmp_path):
    copy = clone(test_run[0], tmp_path / "copy")
    helper = importlib.import_module("banditrepro.algorithms.ccb").randint.__module__
    src = copy / "src"
    edit_function(digests.module_file(helper, src / "banditrepro"), "randint")
    out = _dry_run(copy)
    algos = {cell.split("/")[2].split("+")[0] for cell in scheduled_cells(out, copy)}
    # CCB, IF, QSA, SCB and Winner Stays (W and S) draw with randint; nothing else is rescheduled
    assert algos == {"ccb", "if", "qsa", "scb", "ws-w", "ws-s"}, algos
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
    assert local["simulate"] <= local["summarize_cell"], local  # local batches: one algorithm's shards each
    r = smk("-R", "prepare_dataset", "--configfile", TEST_CONFIG, *MIRROR_ARG, "--cores", "2", cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert log.read_text() == computed  # no shard computed again
    claims = copy / TEST_CELLS / "../../claims.csv"
    assert claims.read_bytes() == (test_run[0] / TEST_CELLS / "../../claims.csv").read_bytes()


def test_test_config_cells_exist(test_run):
    assert (test_run[0] / TEST_CELLS).is_dir()
