"""Finished runs shared by the end-to-end workflow tests (each built once per session, in a tmp copy)."""

from __future__ import annotations

import pytest

from tests.workflow.common import MIRROR, MIRROR_ARG, TEST_CONFIG, copy_project, smk, tree_digest

PAPER_LIKE = """# a small stand-in for the paper config: default results_dir (results/), its own seed
papers: [c2b]
runs: 2
max_horizon: 300
base_seed: 11
data_mirrors: [{mirror}]
"""


@pytest.fixture(scope="session")
def project(tmp_path_factory):
    """A copy of the project (code, config, profiles) holding a finished small paper-like run in results/."""
    if not MIRROR.is_dir():
        pytest.skip("offline data mirror ../shared/data not present")
    proj = copy_project(tmp_path_factory.mktemp("e2e") / "project")
    (proj / "paper.yaml").write_text(PAPER_LIKE.format(mirror=MIRROR))
    r = smk("--configfile", "paper.yaml", "--cores", "2", cwd=proj)
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    # the default profile is quiet: a progress line, not a block per job
    assert "jobs done (100 %)" in r.stderr and len((r.stdout + r.stderr).splitlines()) < 120
    # the fixed paths a reader opens, published by rule all from the store (banditrepro/workflow/publish.py)
    assert (proj / "results/claims.csv").exists() and (proj / "results/published.json").exists()
    assert list((proj / "results/cells").glob("*/T*/*/*/runs0-1.npz"))
    return proj


@pytest.fixture(scope="session")
def test_run(project):
    """The test config run beside the paper-like results, in the same checkout; with what the paper-like
    results were before it (every file: mtime, sha256). Made once per pytest run; never modified: clone it."""
    before = tree_digest(project / "results")
    r = smk("--configfile", TEST_CONFIG, *MIRROR_ARG, "--cores", "2", cwd=project)
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    done = {d: tree_digest(project / d) for d in ("results", "data")}
    yield project, before
    # shared read-only by every test that takes it (tests edit `cp -a` clones): checked at the session's end
    assert {d: tree_digest(project / d) for d in ("results", "data")} == done, \
        "a test wrote into the session's finished runs (clone them instead)"


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
