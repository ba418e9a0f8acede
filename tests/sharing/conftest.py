"""One finished run of a small config, shared by the sharing tests (verify, bundle, merge, compare): the test
config narrowed to Winner Stays at T <= 500 (about 30 s on 2 cores), the session's narrowed reference
(tests/conftest.py), also the content-addressing tests' fresh folder, and its bundle. Tests work on `cp -a` clones
of them. ``in_process`` runs a ``banditrepro`` command in the test's own process."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import warnings
from contextlib import redirect_stderr, redirect_stdout
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
# the warning filters of a Python started without -W or PYTHONWARNINGS (the `warnings` module's documentation)
PYTHON_WARNING_FILTERS = [("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                          ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                          ("ignore", ResourceWarning, "")]


def in_process(argv: list[str], cwd: Path, tmp: Path | None = None) -> subprocess.CompletedProcess:
    """``banditrepro ARGV`` as `python -m banditrepro` runs it (banditrepro.cli.main, whose return value is the exit
    status), called in this process in ``cwd``: its exit status, stdout and stderr, as ``subprocess.run`` gives
    them. ``tmp``: its temporary folder (tempfile's, which $TMPDIR sets for a process). It spares a Python start-up
    and the package's imports (~1 CPU-s) per call; each command keeps tests that spawn it for real (the exit status
    as a shell sees it). A warning the command raises is on its stderr, as a process would print it (pytest would
    otherwise collect it apart)."""
    from banditrepro.cli import main

    out, err, here, was = io.StringIO(), io.StringIO(), os.getcwd(), tempfile.tempdir
    os.chdir(cwd)
    if tmp is not None:
        tempfile.tempdir = str(tmp)
    try:
        with redirect_stdout(out), redirect_stderr(err), warnings.catch_warnings(record=True) as caught:
            warnings.resetwarnings()
            for action, category, module in reversed(PYTHON_WARNING_FILTERS):  # each inserted first
                warnings.filterwarnings(action, category=category, module=module)
            try:
                status = main([str(a) for a in argv])
            except SystemExit as exc:  # argparse's own errors
                status = exc.code
    finally:
        os.chdir(here)
        tempfile.tempdir = was
    printed = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in caught)
    return subprocess.CompletedProcess(["banditrepro", *argv], status, out.getvalue(), printed + err.getvalue())


def cli_call(argv: list[str], cwd: Path, spawn: bool = False, timeout: float = 900) -> subprocess.CompletedProcess:
    """``banditrepro ARGV`` in ``cwd``: in this process (``in_process``), or as a process of its own (``spawn``:
    the exit status as a shell sees it; each command's tests keep one such call per exit status)."""
    if not spawn:
        return in_process(argv, cwd)
    return subprocess.run([*CLI, *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=timeout)


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
