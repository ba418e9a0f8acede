"""One finished run of a small config, shared by the sharing tests (verify, bundle, merge, compare): the test
config narrowed to Winner Stays at T = 500 (about 30 s on 2 cores). Tests work on `cp -a` clones of it."""

from __future__ import annotations

import os
import subprocess
import sys
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
CLI = [sys.executable, "-m", "banditrepro"]


def run_bundle(proj: Path, *args: str, env=None) -> subprocess.CompletedProcess:
    """``banditrepro bundle`` in ``proj``, without the caller's SOURCE_DATE_EPOCH (it sets the bytes' one date)."""
    env = {**{k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}, **(env or {})}
    return subprocess.run([*CLI, "bundle", *args, "--project", str(proj)], cwd=proj, capture_output=True, text=True,
                          timeout=600, env=env)


@pytest.fixture(scope="session")
def bundled(reference, tmp_path_factory) -> tuple[Path, str]:
    """The bundle of the reference run, made by ``banditrepro bundle`` (never modified), and what it printed."""
    out = tmp_path_factory.mktemp("bundle") / "reference.tar.gz"
    r = run_bundle(reference, RESULTS, "-o", str(out))
    assert r.returncode == 0, r.stderr
    return out, r.stdout
