"""Changing anything a number depends on, in place, equals a fresh run (issue 30, point 1; with content-addressed
results, issue 38: docs/decisions.md#content-addressing). One results folder walks through eight changes: base
seed (and back), runs (and back), max_runs with a horizon cap, an algorithm parameter, a kernel edit, a changed
data file, a challenger added and removed. After each, claims.csv, every table (the run-time table aside) and
the leaderboards are byte-identical to those of a fresh results folder run with the same config and project.

What the names now guarantee besides, at every step: a shard file that exists is never rewritten (its name
covers everything its bytes depend on, so a change computes new files beside it), a step back to a config
already run computes no shard, and a changed data file computes only the cells drawn from it.

The narrowed test config (tests/workflow/common.py SUBSET: Winner Stays at T <= 500, 46 cells; every kind of
change applies to it). The walk starts in a `cp -a` clone of the session's narrowed reference (tests/conftest.py),
which is the fresh run of its first config, and the capped step caps at T = 300 (every panel's horizon and
cell is new). Ten in-place runs and seven fresh ones; a step that returns to a config already run compares with
that run instead of a new one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.workflow.common import NARROWED_SHARDS, TEST_RESULTS, clone, run_narrowed, shard_files
from tests.workflow.common import shards_computed as computed

pytestmark = pytest.mark.workflow


def outputs(results: Path) -> dict[str, bytes]:
    """What must equal a fresh run's: claims, every table of the figures (CSV, Markdown, LaTeX), the
    leaderboards (which exist, too); runtime.csv aside (run times)."""
    files = [results / "claims.csv", *sorted((results / "tables").rglob("*")),
             *sorted((results / "leaderboards").glob("*"))]
    return {str(p.relative_to(results)): p.read_bytes() for p in files if p.is_file() and p.name != "runtime.csv"}


def test_every_change_in_place_equals_a_fresh_run(narrowed_reference, tmp_path):
    project = clone(narrowed_reference, tmp_path / "project")  # its results/test: the fresh run of the start
    place = project / TEST_RESULTS
    fresh_runs = iter(range(100))

    def run(results: str, config: list[str]) -> dict[str, bytes]:
        run_narrowed(project, *config, results=results)
        return outputs(project / results)

    def step(config: list[str], same_as: dict | None = None) -> list[str]:
        """The change in place, compared with a fresh run of it (or with ``same_as``, a fresh run of it); the
        shards it computed. No shard file that existed before is rewritten (a former layout kept a cell's
        shards in one folder per seed and code only and overwrote them when its data changed)."""
        shards, log = shard_files(place), computed(place)
        here = run(TEST_RESULTS, config)
        after = shard_files(place)
        rewritten = sorted(k for k in shards if after.get(k) != shards[k])
        assert not rewritten, f"{config}: rewrote or removed existing shard files {rewritten[:10]}"
        fresh = same_as if same_as is not None else run(f"results/fresh-{next(fresh_runs)}", config)
        differ = sorted(k for k in {*here, *fresh} if here.get(k) != fresh.get(k))
        assert not differ, f"{config}: in place differs from a fresh run in {differ}"
        results[tuple(config)] = fresh
        return computed(place)[len(log):]

    results: dict[tuple, dict] = {}
    first = outputs(place)
    assert "leaderboards/winner-stays.csv" not in first and len(first) >= 16  # claims and five tables, 3 formats
    assert len(computed(place)) == NARROWED_SHARDS
    assert step(["base_seed=8"])
    # back to seed 7: its shards, summaries and store entries are still there; before, the summaries at fixed
    # paths had to follow the seed
    assert not step([], same_as=first)
    assert step(["runs=3"])
    assert not step([], same_as=first)  # fewer runs again: the summaries of two runs exist
    # T = 300 (below every panel's 500 and the rounds figure's 400), at most 2 runs. Yelp from here on from a
    # user's matrix file (the catalog's `path`), so the data can change under the workflow; its cells are new
    # at this horizon anyway (with the sushi16 substitute before)
    capped = ["max_runs=2", "max_horizon=300"]
    catalog = project / "config/datasets.yaml"
    catalog.write_text(catalog.read_text().replace("    path: null ", "    path: yelp.txt ", 1))
    (project / "yelp.txt").write_text("0.5 0.6 0.7\n0.4 0.5 0.6\n0.3 0.4 0.5\n")
    by_cap = step(capped)
    assert by_cap and all("/T300/" in p for p in by_cap), by_cap
    manifest = project / "config/figures/winner-stays.yaml"
    manifest.write_text(manifest.read_text().replace("params: {alpha: 0.51}", "params: {alpha: 0.7}"))
    assert step(capped)  # an algorithm parameter
    kernel = project / "src/banditrepro/algorithms/rucb.py"
    kernel.write_text(kernel.read_text().replace("math.sqrt(alpha * lnt)", "math.sqrt(2.0 * alpha * lnt)"))
    assert step(capped)  # a kernel's code (numbers change: its cells must be computed again)
    (project / "yelp.txt").write_text("0.5 0.8 0.9\n0.2 0.5 0.6\n0.1 0.4 0.5\n")
    by_data = step(capped)  # the data behind a prepared dataset: only the cells drawn from it
    assert by_data and all(p.startswith("cells/yelp/") for p in by_data), by_data
    before = results[tuple(capped)]
    assert step([*capped, 'challengers=["thompson-duels"]'])
    assert "leaderboards/winner-stays.csv" in results[(*capped, 'challengers=["thompson-duels"]')]
    assert not step(capped, same_as=before)  # the challenger removed: its leaderboard too, nothing computed
