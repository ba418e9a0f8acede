"""What reruns after an edit, end to end in copies of the finished session runs (tests/workflow/conftest.py):
edits that change no number (nothing), a kernel's or a shared helper's body (exactly their algorithms' shards),
more runs per cell (only the new runs)."""

import importlib
import re
from pathlib import Path

import pytest

from banditrepro.workflow import digests
from tests.workflow.common import MIRROR_ARG, TEST_CELLS, TEST_CONFIG, clone, edit_function, job_counts, smk

pytestmark = pytest.mark.workflow


def scheduled_cells(out: str) -> set[str]:
    """Cell keys of the simulate jobs a dry run with `--quiet host` lists (one block per job)."""
    return set(re.findall(r"wildcards: cell=([^,\s]+)", out))


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
    cells = {"/".join(c.split("/")[:3]) for c in scheduled_cells(_dry_run(copy))}  # dataset/T<h>/<algo>
    rucb = {"/".join(p.relative_to(copy / TEST_CELLS).parts[:3]) for p in (copy / TEST_CELLS).rglob("*.npz")
            if p.relative_to(copy / TEST_CELLS).parts[2] == "rucb"}
    assert rucb and cells == rucb  # every RUCB cell of the test config, and nothing else


def test_editing_the_shared_rng_helper_reschedules_exactly_its_users(test_run, tmp_path):
    copy = clone(test_run[0], tmp_path / "copy")
    helper = importlib.import_module("banditrepro.algorithms.ccb").randint.__module__
    src = copy / "src"
    edit_function(digests.module_file(helper, src / "banditrepro"), "randint")
    out = _dry_run(copy)
    algos = {cell.split("/")[2].split("+")[0] for cell in scheduled_cells(out)}
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


def test_test_config_cells_exist(test_run):
    assert (test_run[0] / TEST_CELLS).is_dir()
