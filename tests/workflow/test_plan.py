"""Run planning (banditrepro.workflow.plan): runs per cell, grouping runs into jobs, the grouping of existing
runs apart from new ones, a cluster node's target jobs; and the grouping Snakemake sees in a dry run."""

import pytest
import yaml

from banditrepro import jobsize
from banditrepro.layout import Layout
from banditrepro.manifest import cell_runs, load_manifest
from banditrepro.workflow.plan import (
    build_plan,
    cell_key,
    existing_prefix,
    group_runs,
    one_of,
    plan_chunks,
    split_key,
    target_chunks,
)
from tests.workflow.common import ROOT, TEST_CONFIG, job_counts, smk


def test_plan_chunks_never_mix_existing_and_new_runs():
    for runs in range(1, 25):
        for k in (1, 2, 3, 5, 20):
            for done in range(0, runs + 2):
                chunks = plan_chunks(runs, k, done)
                flat = [r for a, b in chunks for r in range(a, b + 1)]
                assert flat == list(range(runs))  # every run once, in order
                assert all(b - a + 1 <= k for a, b in chunks)
                assert not any(a < min(done, runs) <= b for a, b in chunks)  # no range straddles the prefix
    assert plan_chunks(30, 30, 20) == [(0, 19), (20, 29)]
    assert plan_chunks(20, 20, 0) == plan_chunks(20, 20, 20) == [(0, 19)]  # nothing or all done: as before


def test_existing_prefix_stops_at_the_first_gap(tmp_path):
    for r in (0, 1, 3):
        (tmp_path / f"run{r}.npz").write_bytes(b"")
    (tmp_path / "run2.json").write_bytes(b"")
    assert existing_prefix(tmp_path, 10) == 2
    assert existing_prefix(tmp_path, 1) == 1
    assert existing_prefix(tmp_path / "missing", 5) == 0


def test_target_chunks_read_a_nodes_command_line():
    argv = ["snakemake", "--target-jobs", "simulate_runs_20_29:cell=sushi16/T2000/c2b-kl+B_offset=6",
            "summarize_cell:dataset=x,horizon=1,algo=y", 'simulate_runs_0_4:cell="a/T1/b+x=1,y=2"', "--cores", "1"]
    assert target_chunks(argv) == {"sushi16/T2000/c2b-kl+B_offset=6": (20, 29), "a/T1/b+x=1,y=2": (0, 4)}
    assert target_chunks(["snakemake", "-n"]) == {}


def test_group_runs_uses_done_prefix_and_fixed_ranges():
    cfg = {"cells_per_job": 5, "job_seconds": 2.0}
    runs = {"a/T10/x": 12, "b/T10/y": 1, "c/T10/z": 12}
    single, chunked = group_runs(runs, cfg, done=lambda key, n: 7 if key == "a/T10/x" else 0,
                                 fixed={"c/T10/z": (3, 9)})
    assert single == ["b/T10/y"]
    assert sorted(r for r, cells in chunked.items() if "a/T10/x" in cells) == [(0, 4), (5, 6), (7, 11)]
    assert [r for r, cells in chunked.items() if "c/T10/z" in cells] == [(3, 9)]


def test_cell_keys_and_one_of():
    key = cell_key("sushi16", 2000, "c2b-kl+B_offset=6")
    assert split_key(key) == ("sushi16", 2000, "c2b-kl+B_offset=6")
    import re

    pat = re.compile(one_of([key, "a/T1/b"]) + "$")
    assert pat.match(key) and pat.match("a/T1/b") and not pat.match("a/T1/bc") and not pat.match("aXT1/b")
    assert not re.match(one_of([]), "anything")


def test_build_plan_paths_come_from_the_layout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no run files here
    cfg = yaml.safe_load((ROOT / TEST_CONFIG).read_text())
    plan = build_plan(cfg, ROOT)
    lay = Layout(cfg["results_dir"], cfg["base_seed"])
    assert plan.layout == lay
    key = next(iter(plan.cell_runs))
    ds, h, algo = split_key(key)
    assert plan.cell_pattern(3).format(cell=key) == lay.cell(ds, h, algo, 3)
    assert plan.cell_files(ds, h, algo) == [lay.cell(ds, h, algo, r) for r in range(plan.cell_runs[key])]
    assert plan.all_targets()[-3:] == [lay.claims_csv, lay.runtime_csv, lay.report_md]
    assert plan.log("claims") == f"{lay.logs}/claims.log"
    assert not any(p.startswith("/") for p in plan.all_targets() + [plan.rel("config/datasets.yaml")])
    # every run of every cell is made by exactly one rule
    made = {}
    for (a, b), cells in plan.chunked.items():
        for c in cells:
            for r in range(a, b + 1):
                made[(c, r)] = made.get((c, r), 0) + 1
    for c in plan.single:
        for r in range(plan.cell_runs[c]):
            made[(c, r)] = made.get((c, r), 0) + 1
    assert made == {(c, r): 1 for c, n in plan.cell_runs.items() for r in range(n)}


def _default_cells():
    from banditrepro.datasets.catalog import load_catalog

    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    catalog = load_catalog(ROOT / "config/datasets.yaml")
    figures = load_manifest(ROOT / "config/figures", papers=cfg["papers"], datasets=set(catalog.datasets))
    runs = cell_runs(figures, cfg["runs"])
    return figures, {c: n for c, n in runs.items() if not catalog.is_optional(c[0])}


def test_cell_runs_take_the_most_any_figure_asks_and_the_cap():
    figures, runs = _default_cells()
    weak = next(f for f in figures if f.stem == "winner-stays/fig2-weak-regret")
    assert weak.runs == 200
    for p in weak.panels:
        for a in p.algorithms:
            assert runs[(p.dataset, p.horizon, a.id)] == 200  # heavy-tailed weak regret
    fig1 = next(f for f in figures if f.stem == "c2b/fig1")
    assert {runs[(p.dataset, p.horizon, a.id)] for p in fig1.panels for a in p.algorithms
            if (p.dataset, p.horizon, a.id) in runs} == {20}
    capped = cell_runs(figures, 2, max_runs=3)
    assert max(capped.values()) == 3 and min(capped.values()) == 2


def test_auto_job_size_groups_short_runs_and_keeps_long_ones_apart():
    # C2B-KL at T = 1e5 (~1 ms a run): all 20 runs in one job; Lazy-DP-TS at T = 1e6 (~0.4 s): 5 per ~2 s job;
    # SCB at T = 1e6 (~1.1 s): one each
    assert jobsize.runs_per_job("c2b-kl+B_offset=6", 100_000, 20) == 20
    assert jobsize.runs_per_job("lazy-dp-ts", 1_000_000, 20) == 5
    assert jobsize.runs_per_job("scb", 1_000_000, 20) == 1
    assert 1 < jobsize.runs_per_job("rucb", 100_000, 200) < 200
    # a plugin without ns_per_step counts as the documented default (200 ns/step: 2 s a run at T = 1e7)
    assert jobsize.runs_per_job("uniform-pairs", 10_000_000, 20) == 1
    assert jobsize.chunks(7, 3) == [(0, 2), (3, 5), (6, 6)]
    for name, T in (("rucb", 100_000), ("c2b", 1_000_000), ("ws-w", 100_000)):
        k = jobsize.runs_per_job(name, T, 200)
        assert k * jobsize.run_seconds(name, T) <= jobsize.TARGET_SECONDS or k == 1


@pytest.mark.workflow
def test_dry_run_of_the_default_config_groups_the_runs_of_every_cell(tmp_path):
    r = smk("-n", "--directory", str(tmp_path), "--workflow-profile", str(ROOT / "profiles/default"))
    assert r.returncode == 0, r.stderr
    counts = job_counts(r.stdout + r.stderr)
    _, runs = _default_cells()
    expected = sum(len(jobsize.chunks(n, jobsize.runs_per_job(c[2], c[1], n))) for c, n in runs.items())
    simulate = sum(v for k, v in counts.items() if k.startswith("simulate"))
    assert simulate == expected
    # auto grouping: far fewer jobs than run files (one job per run was 2,436 jobs for 2,300 runs)
    assert counts["total"] < sum(runs.values()) / 3
    assert counts["summarize_cell"] == len(runs) and counts["claims"] == 1 and counts["figure"] >= 10


