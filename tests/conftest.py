"""Shared fixtures: small real instances (read from the offline mirror when present, else inlined), and the
session's narrowed reference run (made once per pytest run, shared read-only; tests edit `cp -a` clones)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from banditrepro import papers
from banditrepro.cell import run_cell
from banditrepro.instances import BernoulliArms, PreferenceMatrix
from tests.shared_runs import shared_folder

papers.load()  # the papers' figure kinds and claim tests, as the CLI and the workflow load them

SIX_RANKERS = np.array([
    [0.50, 0.55, 0.55, 0.54, 0.61, 0.61],
    [0.45, 0.50, 0.55, 0.55, 0.58, 0.60],
    [0.45, 0.45, 0.50, 0.54, 0.51, 0.56],
    [0.46, 0.45, 0.46, 0.50, 0.54, 0.50],
    [0.39, 0.42, 0.49, 0.46, 0.50, 0.51],
    [0.39, 0.40, 0.44, 0.50, 0.49, 0.50],
])

MSLR5 = np.array([
    [0.5, 0.53519466, 0.6125935, 0.75696008, 0.76547422],
    [0.46480534, 0.5, 0.57985831, 0.72745116, 0.73820053],
    [0.3874065, 0.42014169, 0.5, 0.65895708, 0.66877089],
    [0.24303992, 0.27254884, 0.34104292, 0.5, 0.50999465],
    [0.23452578, 0.26179947, 0.33122911, 0.49000535, 0.5],
])


@pytest.fixture
def six_rankers() -> PreferenceMatrix:
    return PreferenceMatrix(SIX_RANKERS, name="six-rankers")


@pytest.fixture
def mslr5() -> PreferenceMatrix:
    return PreferenceMatrix(MSLR5, name="mslr5")


@pytest.fixture
def easy3() -> PreferenceMatrix:
    """A 3-arm total order with large gaps: every sound algorithm identifies arm 0 quickly."""
    P = np.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.8], [0.1, 0.2, 0.5]])
    return PreferenceMatrix(P, name="easy3")


@pytest.fixture
def bernoulli5() -> BernoulliArms:
    return BernoulliArms([0.95, 0.75, 0.55, 0.35, 0.15], name="bernoulli5")


@pytest.fixture
def simulate():
    """simulate(algorithm, instance, T, run=0, **params) -> CellResult (the production code path)."""

    def _simulate(algorithm, instance, T, run=0, base_seed=12345, **params):
        return run_cell(algorithm, params, instance, T, run, base_seed)

    return _simulate


@pytest.fixture(scope="session")
def narrowed_reference(tmp_path_factory):
    """A project copy holding one finished run of the narrowed test config (tests/workflow/common.py SUBSET:
    Winner Stays at T <= 500, 46 shards) in results/test, made once per pytest run: a fresh folder, complete (a
    dry run lists `all` alone). Shared by tests/sharing and tests/workflow (content addressing, the renamed
    internals); never modified: clone it (`clone`, `cp -a`). Checked at the end of the session (of each xdist
    worker): a test that wrote into it fails there."""
    from tests.workflow.common import (
        MIRROR,
        NARROWED_SHARDS,
        TEST_RESULTS,
        copy_project,
        only_all,
        run_narrowed,
        shards_computed,
        tree_digest,
    )

    if not MIRROR.is_dir():
        pytest.skip("offline data mirror ../shared/data not present")

    def build(folder: Path) -> None:
        proj = copy_project(folder / "reference")
        run_narrowed(proj)
        assert len(shards_computed(proj / TEST_RESULTS)) == NARROWED_SHARDS
        dry = run_narrowed(proj, args=("-n",))
        assert only_all(dry.stdout + dry.stderr), (dry.stdout + dry.stderr)[-3000:]

    proj = shared_folder(tmp_path_factory, "narrowed", build) / "reference"
    before = {d: tree_digest(proj / d) for d in ("results", "data")}
    yield proj
    after = {d: tree_digest(proj / d) for d in ("results", "data")}
    assert after == before, "a test wrote into the shared narrowed reference (clone it instead)"


# The longest tests and modules, longest first (CPU-s measured with README's test command on a clean clone:
# docs/testing.md "Suite time"). pytest-xdist gives a worker its next unit of tests, in collection order (groups
# of several tests first), whenever it has two or fewer left: a long test handed out last would run on alone
# while the other worker idles, so these start first and the short ones fill in beside them. Only the order
# changes; a test not listed (or listed under an old name) keeps its place after them.
FIRST = (
    "tests/workflow/test_in_place.py",  # ~120 CPU-s (builds narrowed_reference if it comes first)
    "tests/workflow/test_challengers.py",  # ~95, with the build of test_run (and project) it starts
    "tests/workflow/test_settle.py",  # ~105, one group
    "tests/workflow/test_content_addressing.py",
    "tests/workflow/test_end_to_end.py",
    "tests/workflow/test_first_run.py",
    "tests/workflow/test_reruns.py",
    "tests/sharing/test_merge.py",
    "tests/workflow/test_failures.py",
    "tests/sharing/test_verify.py",
    "tests/papers/test_figure_hygiene.py",
    "tests/workflow/test_recompute.py",
)


def pytest_configure(config):
    # pytest-xdist would hand out the groups of many tests before any single test, by their number of tests
    # (--loadscope-reorder, its default); the order of FIRST is by measured time instead
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def _rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(FIRST) if nodeid.startswith(prefix)), len(FIRST))


def pytest_collection_modifyitems(config, items):
    """The tests that take a module-scoped fixture form one pytest-xdist group per module (README's test command
    runs `-n 2 --dist loadgroup`): each such fixture (a settle run, a seed switched in place, …) is then built
    by one worker, once, as without xdist; every other test goes to whichever worker is free. Session fixtures
    that build a finished run are shared across workers instead (tests/shared_runs.py). The longest tests are
    collected first (``FIRST``; a stable sort, so the rest keep their order)."""
    items.sort(key=lambda item: _rank(item.nodeid))
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d.scope == "module" for fixturedefs in defs for d in fixturedefs):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
