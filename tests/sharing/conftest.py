"""One finished run of a small config, shared by the sharing tests (verify, bundle, merge, compare): the test
config narrowed to Winner Stays at T = 500 (about 30 s on 2 cores). Tests work on `cp -a` clones of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.workflow.common import MIRROR_ARG, TEST_CONFIG, TEST_RESULTS, clone, copy_project, smk

SUBSET = [*MIRROR_ARG[1:], "papers=[winner-stays]", "max_horizon=500"]


def run(proj: Path, *config: str, args=(), results: str = TEST_RESULTS, env=None):
    """The narrowed test config in ``proj`` (``config``: more KEY=VALUE), asserted to succeed."""
    r = smk("--configfile", TEST_CONFIG, "--cores", "2", *args, "--config", *SUBSET, f"results_dir={results}",
            *config, cwd=proj, env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r


@pytest.fixture(scope="session")
def reference(tmp_path_factory) -> Path:
    """A project copy holding one finished run of the narrowed test config in results/test (never modified:
    clone it)."""
    proj = copy_project(tmp_path_factory.mktemp("sharing") / "reference")
    run(proj)
    return proj


@pytest.fixture
def project(reference, tmp_path) -> Path:
    """A clone of ``reference`` of this test's own."""
    return clone(reference, tmp_path / "project")


RESULTS = TEST_RESULTS
