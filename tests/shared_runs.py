"""Finished runs built once per pytest run and shared read-only, also across pytest-xdist workers (README's
test command runs the suite with `-n 2`: docs/testing.md#the-suites-time-issue-44-point-5)."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path


def shared_folder(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder ``build`` fills once per pytest run, however many pytest-xdist workers ask for it: the first
    builds it under an exclusive lock in the run's base folder (the workers' common parent), the others wait on
    the lock and reuse it. Without xdist, a fresh folder of this process. A build that fails is not recorded:
    the next worker to ask builds again (and fails the same way), so no test sees a half-built folder."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent  # .../pytest-<n>/, shared by this run's workers only
    folder, built = root / f"shared-{name}", root / f"shared-{name}.built"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if not built.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed build left
            folder.mkdir()
            build(folder)
            built.touch()
    return folder
