"""One finished run of a small config, shared by the sharing tests (verify, bundle, merge, compare): the test
config narrowed to Winner Stays at T <= 500 (about 30 s on 2 cores), the session's narrowed reference
(tests/conftest.py), also the content-addressing tests' fresh folder. Tests work on `cp -a` clones of it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_runs import shared_folder
from tests.workflow.common import SUBSET, TEST_RESULTS, clone  # noqa: F401 (SUBSET, run: for the tests)
from tests.workflow.common import run_narrowed as run  # noqa: F401


@pytest.fixture(scope="session")
def reference(narrowed_reference) -> Path:
    """A project copy holding one finished run of the narrowed test config in results/test: the session's
    narrowed reference (tests/conftest.py; never modified: clone it)."""
    return narrowed_reference


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
    """The bundle of the reference run, made by ``banditrepro bundle`` once per pytest run (never modified), and
    what it printed."""

    def build(folder: Path) -> None:
        r = run_bundle(reference, RESULTS, "-o", str(folder / "reference.tar.gz"))
        assert r.returncode == 0, r.stderr
        (folder / "printed.txt").write_text(r.stdout)

    folder = shared_folder(tmp_path_factory, "bundle", build)
    return folder / "reference.tar.gz", (folder / "printed.txt").read_text()
