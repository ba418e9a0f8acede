"""Finished runs shared by the end-to-end workflow tests (each built once per pytest run, in a tmp copy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shared_runs import shared_folder
from tests.workflow.common import MIRROR, MIRROR_ARG, TEST_CONFIG, clone, copy_project, plan_of, smk, tree_digest

PAPER_LIKE = """# a small stand-in for the paper config: default results_dir (results/), its own seed
papers: [c2b]
runs: 2
max_horizon: 300
base_seed: 11
data_mirrors: [{mirror}]
"""


@pytest.fixture(scope="session")
def project(tmp_path_factory):
    """A copy of the project (code, config, profiles) holding a finished small paper-like run in results/. Made
    once per pytest run (``shared_folder``: one build across xdist workers); never modified: clone it."""
    if not MIRROR.is_dir():
        pytest.skip("offline data mirror ../shared/data not present")

    def build(folder: Path) -> None:
        proj = copy_project(folder / "project")
        (proj / "paper.yaml").write_text(PAPER_LIKE.format(mirror=MIRROR))
        r = smk("--configfile", "paper.yaml", "--cores", "2", cwd=proj)
        assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
        # the default profile is quiet: a progress line, not a block per job
        assert "jobs done (100 %)" in r.stderr and len((r.stdout + r.stderr).splitlines()) < 120
        # the fixed paths a reader opens, published by rule all from the store (banditrepro/workflow/publish.py)
        assert (proj / "results/claims.csv").exists() and (proj / "results/published.json").exists()
        assert list((proj / "results/cells").glob("*/T*/*/*/runs0-1.npz"))

    proj = shared_folder(tmp_path_factory, "e2e", build) / "project"
    done = {d: tree_digest(proj / d) for d in ("results", "data")}
    yield proj
    assert {d: tree_digest(proj / d) for d in ("results", "data")} == done, \
        "a test wrote into the session's paper-like run (clone it instead)"


@pytest.fixture(scope="session")
def test_run(project, tmp_path_factory):
    """The test config run beside the paper-like results, in a `cp -a` clone of ``project`` (so that the
    paper-like run stays as it was for the tests that take it); with what the paper-like results were before
    it (every file: mtime, sha256). Made once per pytest run; never modified: clone it."""

    def build(folder: Path) -> None:
        proj = clone(project, folder / "project")
        before = tree_digest(proj / "results")
        r = smk("--configfile", TEST_CONFIG, *MIRROR_ARG, "--cores", "2", cwd=proj)
        assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
        (folder / "before.json").write_text(json.dumps(before))

    folder = shared_folder(tmp_path_factory, "test-run", build)
    proj = folder / "project"
    before = {path: tuple(entry) for path, entry in json.loads((folder / "before.json").read_text()).items()}
    done = {d: tree_digest(proj / d) for d in ("results", "data")}
    yield proj, before
    # shared read-only by every test that takes it (tests edit `cp -a` clones): checked at the session's end
    assert {d: tree_digest(proj / d) for d in ("results", "data")} == done, \
        "a test wrote into the session's finished runs (clone them instead)"


@pytest.fixture(scope="session")
def finished_plan(test_run) -> dict:
    """The plan of ``test_run`` (``plan_of``; ~2 CPU-s, so made once per worker, not per test): what a test that
    reads that run, or a clone of it before any edit, needs (test_end_to_end, and test_reruns' plan before its
    edits). Never modified by a test."""
    return plan_of(test_run[0], TEST_CONFIG)


# --- the real-SLURM tests (tests/workflow/test_slurm*.py; BANDITREPRO_SLURM_TEST=1, as .ci/run sets) -------


@pytest.fixture(scope="session")
def slurm_cluster():
    """A single-node SLURM for the session (ci/slurm/start.sh); yields the runs' environment."""
    from tests.workflow import slurm_harness as h

    if not h.REQUESTED:
        pytest.skip("real-SLURM test: set BANDITREPRO_SLURM_TEST=1 (needs root and the Debian packages "
                    "slurmctld slurmd slurm-client munge; .ci/run does this)")
    missing = h.requirements_missing()
    if missing:
        pytest.fail(f"BANDITREPRO_SLURM_TEST=1 but {missing}")
    with h.single_node_slurm() as env:
        yield env


@pytest.fixture(scope="session")
def slurm_local_reference(tmp_path_factory):
    """The test config run locally (default profile): what every cluster run must equal."""
    from tests.workflow import slurm_harness as h

    if not h.REQUESTED:
        pytest.skip("only needed by the real-SLURM tests")
    work = tmp_path_factory.mktemp("local")
    r = h.smk("--directory", str(work), "--workflow-profile", str(h.ROOT / "profiles/default"), "--cores", "2",
              *h.LOCAL_CONFIG)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return work
