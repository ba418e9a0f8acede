"""Run planning (banditrepro.workflow.plan and .bins): runs per cell, shard chains (existing shards kept,
new ones appended, the same when planned again), cluster bins (sized by work, one dataset each, the same
on a node as in the main process); and what Snakemake sees in a dry run."""

import re

import pytest
import yaml

from banditrepro import ReproError, jobsize
from banditrepro.layout import Layout
from banditrepro.manifest import cell_runs, load_manifest
from banditrepro.workflow import bins
from banditrepro.workflow.plan import build_plan, cell_key, existing_shards, plan_chain, split_key
from tests.workflow.common import ROOT, TEST_CONFIG, job_counts, smk


def _flat(chain):
    return [r for a, b in chain for r in range(a, b + 1)]


def test_a_chain_holds_every_run_once_and_keeps_existing_shards():
    for runs in range(1, 25):
        for k in (1, 2, 3, 5, 20):
            chain = plan_chain(runs, k, {})
            assert _flat(chain) == list(range(runs)) and all(b - a + 1 <= k for a, b in chain)
    # raising runs 20 -> 1000 with k 20 -> 500: the old shard stays, the new runs come after it
    assert plan_chain(1000, 500, {0: 19}) == [(0, 19), (20, 519), (520, 999)]
    # lowering runs: the existing shard holds more runs than asked (the summary keeps the first ones)
    assert plan_chain(20, 20, {0: 499}) == [(0, 499)]
    # a gap ends the existing part: shards after it are not followed
    assert plan_chain(10, 5, {0: 1, 5: 9}) == [(0, 1), (2, 6), (7, 9)]


def test_a_chain_is_the_same_after_some_of_its_new_shards_were_written():
    """What a killed run resumes and what a cluster node plans: writing any subset of the new shards
    leaves the chain as it was."""
    import itertools

    for existing in ({}, {0: 3}, {0: 3, 4: 4}):
        chain = plan_chain(23, 5, existing)
        new = [s for s in chain if existing.get(s[0]) != s[1]]
        for n in range(len(new) + 1):
            for written in itertools.combinations(new, n):
                assert plan_chain(23, 5, {**existing, **dict(written)}) == chain


def test_existing_shards_reads_the_shard_names_of_a_folder(tmp_path):
    for name in ("runs0-4.npz", "runs0-9.npz", "runs10-19.npz", "runs20-29.json", "run3.npz", "runs5-2.npz"):
        (tmp_path / name).write_bytes(b"")
    assert existing_shards(tmp_path) == {0: 9, 10: 19}  # the longest of two from run 0; no sidecar, no junk
    assert existing_shards(tmp_path / "missing") == {}


def test_bins_are_sized_by_work_and_hold_one_dataset():
    shards = [(f"{d}/T10/a{i}", 0, 0) for d in ("x", "y") for i in range(10)]
    cost = {s: (30.0 if s[0].startswith("x") else 1.0) for s in shards}
    missing = set(shards) - {shards[0]}
    out = bins.pack(shards, missing, lambda *s: cost[s], lambda c: c.split("/")[0], 100.0)
    # x: 9 shards of 30 s -> ceil(270 / 100) = 3 bins of 90 s; y: 10 s in one bin
    assert [round(b.seconds) for b in out] == [90, 90, 90, 10]
    assert sorted(s for b in out for s in b.shards) == sorted(missing)  # every missing shard once
    assert all(len({c.split("/")[0] for c, _, _ in b.shards}) == 1 for b in out)
    assert shards[0] not in {s for b in out for s in b.shards}
    # a node gets its bin by name: the same shards even after other bins' shards were written
    first = out[0]
    argv = ["snakemake", "--target-jobs", f"{first.name}:", "--cores", "1"]
    assert bins.ranges_from_argv(argv) == [(first.first, first.last)]
    later = missing - set(out[1].shards)
    again = bins.pack(shards, later, lambda *s: cost[s], lambda c: c.split("/")[0], 100.0,
                      bins.ranges_from_argv(argv))
    assert again == [first]
    assert bins.ranges_from_argv(["snakemake", "-n"]) is None


def test_a_bin_asks_slurm_for_a_margin_and_a_partition_limit_stops_the_parse():
    assert bins.requested_minutes(0) == bins.START_MINUTES
    assert bins.requested_minutes(600) == bins.START_MINUTES + 30  # 10 min estimated, 3 x
    b = bins.Bin(0, 3, (("x/T1/a", 0, 0),), 1200.0)
    bins.check_limit([b], None)
    bins.check_limit([b], 65)
    with pytest.raises(ReproError, match=r"^configuration error: partition_minutes: .* 65 min .* allows 60"):
        bins.check_limit([b], 60)


def test_cell_keys():
    key = cell_key("sushi16", 2000, "c2b-kl+B_offset=6")
    assert split_key(key) == ("sushi16", 2000, "c2b-kl+B_offset=6")


def test_build_plan_paths_come_from_the_layout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no shards here
    cfg = yaml.safe_load((ROOT / TEST_CONFIG).read_text())
    plan = build_plan(cfg, ROOT)
    lay = Layout(cfg["results_dir"], cfg["base_seed"])
    assert plan.layout == lay
    key = next(iter(plan.cell_runs))
    ds, h, algo = split_key(key)
    a, b = plan.chains[key][0]
    path = plan.shard(key, a, b)
    assert path == lay.shard(ds, h, algo, plan.codes[key], a, b)
    assert plan.shard_pattern().format(cell=key, code=plan.codes[key], first=a, last=b) == path
    assert plan.parse_shard(path) == (key, a, b)
    assert plan.cell_files(ds, h, algo) == [plan.shard(key, a, b) for a, b in plan.chains[key]]
    assert plan.all_targets()[-3:] == [lay.claims_csv, lay.runtime_csv, lay.report_md]
    assert plan.log("claims") == f"{lay.logs}/claims.log"
    assert not any(p.startswith("/") for p in plan.all_targets() + [plan.rel("config/datasets.yaml")])
    assert plan.missing == {(c, a, b) for c, chain in plan.chains.items() for a, b in chain}  # nothing exists
    assert not plan.bins  # no cluster executor
    binned = build_plan(yaml.safe_load((ROOT / TEST_CONFIG).read_text()), ROOT, binned=True)
    assert sorted(s for b in binned.bins for s in b.shards) == sorted(plan.missing)
    rules = binned.simulate_rules(lambda wc: None)
    assert rules[0].name == "simulate" and {r.name for r in rules[1:]} == {b.name for b in binned.bins}


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
    # C2B-KL at T = 1e5 (~1 ms a run): all 20 runs in one shard; Lazy-DP-TS at T = 1e6 (~0.4 s): 10 per ~5 s
    # shard; SCB at T = 1e6 (~1.1 s): 2 per shard
    assert jobsize.runs_per_job("c2b-kl+B_offset=6", 100_000, 20) == 20
    assert jobsize.runs_per_job("lazy-dp-ts", 1_000_000, 20) == 10
    assert jobsize.runs_per_job("scb", 1_000_000, 20) == 2
    assert 1 < jobsize.runs_per_job("rucb", 1_000_000, 200) < 200
    # a plugin without ns_per_step counts as the documented default (200 ns/step: 2 s a run at T = 1e7)
    assert jobsize.runs_per_job("uniform-pairs", 10_000_000, 20) == 2
    assert jobsize.chunks(7, 3) == [(0, 2), (3, 5), (6, 6)]
    for name, T in (("rucb", 100_000), ("c2b", 1_000_000), ("ws-w", 100_000)):
        k = jobsize.runs_per_job(name, T, 200)
        assert k * jobsize.run_seconds(name, T) <= jobsize.TARGET_SECONDS or k == 1


@pytest.mark.workflow
def test_dry_run_of_the_default_config_makes_one_job_per_shard(tmp_path):
    r = smk("-n", "--directory", str(tmp_path), "--workflow-profile", str(ROOT / "profiles/default"))
    assert r.returncode == 0, r.stderr
    counts = job_counts(r.stdout + r.stderr)
    _, runs = _default_cells()
    expected = sum(len(jobsize.chunks(n, jobsize.runs_per_job(c[2], c[1], n))) for c, n in runs.items())
    assert counts["simulate"] == expected
    # auto sizing: far fewer jobs than runs
    assert counts["total"] < sum(runs.values()) / 10
    assert counts["summarize_cell"] == len(runs) and counts["claims"] == 1 and counts["figure"] >= 10


def test_estimate_prints_submissions_lengths_cpu_hours_files_and_bytes(tmp_path):
    """`banditrepro estimate` plans as the workflow does under a cluster executor, without Snakemake."""
    import subprocess
    import sys

    cli = [sys.executable, "-m", "banditrepro", "estimate", "--project", str(ROOT), "--configfile",
           str(ROOT / TEST_CONFIG), "--config", "results_dir=results/estimate-test"]  # no shards there
    r = subprocess.run(cli, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    n = int(re.search(r"SLURM submissions: (\d+)", out).group(1))
    cfg = yaml.safe_load((ROOT / TEST_CONFIG).read_text())
    datasets = {c.split("/")[0] for c in build_plan(cfg, ROOT, scan=False).cell_runs}
    assert 1 <= n <= len(datasets)  # the test config's few CPU-seconds: one bin per dataset at most
    assert re.search(r"requested --time .* max \d+ min", out) and "CPU-hours" in out
    assert re.search(r"writes: about [\d,]+ files, [\d,]+ MB", out)
    # a partition limit the bins would exceed stops it in one line naming the key
    r = subprocess.run([*cli, "partition_minutes=1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "partition_minutes" in r.stderr, r.stderr


def test_a_cluster_executor_packs_bins_and_a_node_reads_its_own():
    from types import SimpleNamespace

    from banditrepro.workflow.cluster import submits_jobs

    main = SimpleNamespace(remote_exec=False)
    assert submits_jobs(main, SimpleNamespace(executor="slurm"))
    assert not submits_jobs(main, SimpleNamespace(executor=None))
    assert not submits_jobs(main, SimpleNamespace(executor="local"))
    assert submits_jobs(SimpleNamespace(remote_exec=True), None)  # a job step on a node
