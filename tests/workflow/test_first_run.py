"""A first run is finished when it ends (issue 43, point 7).

A fresh folder's figures are named again once the optional datasets' probes have run (their verdicts are in
the names): no job may run under, or read by, a name computed before that. These runs start from a folder with
no probe verdict and no results, C2B's figures (Yahoo30 is optional, so its probe renames them) at T <= 500 with
a challenger (leaderboards, which the report reads), each with Snakemake choosing among ready jobs at random
(`--scheduler-subsample 1`): every order must finish, leave one store entry per result, and a dry run right
after must list `all` alone. The first order starts from nothing (downloads, preparation and simulation among
the probe's possible places in the order); the later ones keep what a probe cannot rename, the prepared data,
the shards and the summaries (named by their cells alone, never read through the probes: workflow/inputs.py),
and run again in their own random order every job that is: the probe, the figures, claims, leaderboards and
report. About 10 s a run on 2 cores.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.workflow.common import MIRROR, TEST_CONFIG, TEST_RESULTS, copy_project, job_counts, smk

SMALL = [f"data_mirrors=['{MIRROR}']", "papers=[c2b]", "max_horizon=500"]
ORDERS = 4  # fresh first runs, each in the scheduler's own random order


def first_run_config(*more: str) -> list[str]:
    return ["--configfile", TEST_CONFIG, "--config", *SMALL, *more]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    return copy_project(tmp_path_factory.mktemp("first-run") / "project")


def forget_run(proj: Path, keep: tuple[str, ...] = ()) -> None:
    """Back to a first run: no results and no probe verdicts (the prepared and raw files may stay: their
    names do not depend on the probes; so may the folders of results/test named in ``keep``)."""
    results = proj / TEST_RESULTS
    for path in results.iterdir() if results.is_dir() else ():
        if path.name not in keep:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    shutil.rmtree(proj / "data" / "status", ignore_errors=True)
    shutil.rmtree(proj / ".snakemake", ignore_errors=True)


def one_entry_each(store: Path) -> None:
    """Every stored result of a first run exists under one name: none was made under a name the probes moved."""
    for kind in ("claims", "report", "runtime", "software"):
        assert len(list((store / kind).iterdir())) == 1, sorted(p.name for p in (store / kind).iterdir())
    for folder in [*(store / "figures").glob("*/*"), *(store / "leaderboards").glob("*")]:
        assert len(list(folder.iterdir())) == 1, (folder, sorted(p.name for p in folder.iterdir()))


@pytest.mark.parametrize("order", range(ORDERS))
def test_a_first_run_with_a_challenger_finishes_in_any_order_and_leaves_nothing_to_do(fresh, order):
    # after the first order: its shards and summaries stay (not renamed by the probe, so not order-dependent)
    forget_run(fresh, keep=("cells", "summaries") if order else ())
    config = first_run_config('challengers=["rmed2"]')
    r = smk("--cores", "2", "--scheduler-subsample", "1", *config, cwd=fresh)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert (fresh / TEST_RESULTS / "leaderboards" / "c2b.csv").is_file()
    one_entry_each(fresh / TEST_RESULTS / "store")
    dry = smk("-n", *config, cwd=fresh)
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert job_counts(dry.stdout + dry.stderr) == {"all": 1, "total": 1}, (dry.stdout + dry.stderr)[-2000:]


def test_split_runs_honour_the_optional_datasets_probe_offline(fresh):
    """`first_run` (shards only) on a machine without network: Yahoo30 is probed, never fetched."""
    forget_run(fresh)
    r = smk("--cores", "2", *first_run_config("runs=3", "first_run=2"), cwd=fresh)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert (fresh / "data" / "status" / "yahoo30.json").is_file()
    assert not list((fresh / "data" / "raw").glob("mslr/Yahoo*")), "Yahoo30 was fetched, not probed"
    shards = list((fresh / TEST_RESULTS / "cells").rglob("runs2-2.npz"))
    assert shards and not [s for s in shards if "yahoo30" in s.parts]
    assert not (fresh / TEST_RESULTS / "claims.csv").exists()  # shards only: nothing published
