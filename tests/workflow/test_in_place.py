"""Changing anything a number depends on, in place, equals a fresh run (issue 30, point 1;
docs/decisions.md#batch-identity). One results folder walks through a sequence of changes: base seed (and
back), runs (and back), max_runs with a horizon cap, an algorithm parameter, a kernel edit, a changed data
file, a challenger added and removed. After each, claims.csv, every table (the run-time table aside) and the
leaderboards are byte-identical to those of a fresh results folder run with the same config and project.

The test config restricted to its smallest paper (winner-stays: 46 cells, every kind of change applies to
it), so that eleven in-place runs and seven fresh ones take minutes; a step that returns to a config already
run compares with that run instead of a new one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.workflow.common import MIRROR, TEST_CONFIG, copy_project, smk

pytestmark = pytest.mark.workflow

BASE = [f"data_mirrors=['{MIRROR}']", "papers=[winner-stays]"]
PLACE = "results/in-place"


def outputs(results: Path) -> dict[str, bytes]:
    """What must equal a fresh run's: claims, the figures' tables, the leaderboards (which exist, too)."""
    files = [results / "claims.csv", *sorted((results / "tables").rglob("*.csv")),
             *sorted((results / "leaderboards").glob("*"))]
    return {str(p.relative_to(results)): p.read_bytes() for p in files if p.name != "runtime.csv"}


def test_every_change_in_place_equals_a_fresh_run(tmp_path):
    if not MIRROR.is_dir():
        pytest.skip("offline data mirror ../shared/data not present")
    project = copy_project(tmp_path / "project")
    # Yelp from a user's matrix file (the catalog's `path`), so the data can change under the workflow
    catalog = project / "config/datasets.yaml"
    catalog.write_text(catalog.read_text().replace("    path: null ", "    path: yelp.txt "))
    (project / "yelp.txt").write_text("0.5 0.6 0.7\n0.4 0.5 0.6\n0.3 0.4 0.5\n")
    fresh_runs = iter(range(100))

    def run(results: str, config: list[str]) -> dict[str, bytes]:
        r = smk("--configfile", TEST_CONFIG, "--cores", "2", "--config", *BASE, f"results_dir={results}", *config,
                cwd=project)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        return outputs(project / results)

    def step(config: list[str], same_as: dict | None = None) -> dict[str, bytes]:
        """The change in place, compared with a fresh run of it (or with ``same_as``, a fresh run of it)."""
        here = run(PLACE, config)
        fresh = same_as if same_as is not None else run(f"results/fresh-{next(fresh_runs)}", config)
        differ = sorted(k for k in {*here, *fresh} if here.get(k) != fresh.get(k))
        assert not differ, f"{config}: in place differs from a fresh run in {differ}"
        return fresh

    first = run(PLACE, [])
    assert "leaderboards/winner-stays.csv" not in first and len(first) >= 6  # claims and five tables
    step(["base_seed=8"])
    step([], same_as=first)  # back to seed 7: its shards are still there, the summaries must follow
    step(["runs=3"])
    step([], same_as=first)  # fewer runs again: the summaries keep the first two of three
    capped = ["max_runs=2", "max_horizon=1000"]
    step(capped)
    manifest = project / "config/figures/winner-stays.yaml"
    manifest.write_text(manifest.read_text().replace("params: {alpha: 0.51}", "params: {alpha: 0.7}"))
    step(capped)  # an algorithm parameter
    kernel = project / "src/banditrepro/algorithms/rucb.py"
    kernel.write_text(kernel.read_text().replace("math.sqrt(alpha * lnt)", "math.sqrt(2.0 * alpha * lnt)"))
    step(capped)  # a kernel's code (numbers change: its cells must be computed again)
    (project / "yelp.txt").write_text("0.5 0.8 0.9\n0.2 0.5 0.6\n0.1 0.4 0.5\n")
    before = step(capped)  # the data behind a prepared dataset
    joined = step([*capped, 'challengers=["thompson-duels"]'])
    assert "leaderboards/winner-stays.csv" in joined
    step(capped, same_as=before)  # the challenger removed: its leaderboard too
