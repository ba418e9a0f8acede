"""Run planning (banditrepro.workflow.plan and .batches): runs per cell, a cell's shards (existing shards
followed from run 0, new ones appended, the same when planned again after some were written), batches of the
missing shards only (sized by work, one dataset each, named by their shards), the plan's purity (it writes
and deletes nothing), a node's batch from its spec; the config Snakemake builds for `banditrepro estimate`;
and what Snakemake sees in a dry run."""

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from banditrepro import ReproError, closure, jobsize
from banditrepro.layout import Layout
from banditrepro.manifest import cell_runs, load_manifest
from banditrepro.workflow import batches, digests
from banditrepro.workflow.cells import kernel_name
from banditrepro.workflow.plan import build_plan, cell_key, existing_shards, kernel_of, plan_shards, split_key
from tests.workflow.common import ROOT, TEST_CONFIG, job_counts, smk


def _flat(shards):
    return [r for a, b in shards for r in range(a, b + 1)]


def test_a_cells_shards_hold_every_run_once_and_keeps_existing_shards():
    for runs in range(1, 25):
        for k in (1, 2, 3, 5, 20):
            shards = plan_shards(runs, k, {})
            assert _flat(shards) == list(range(runs)) and all(b - a + 1 <= k for a, b in shards)
    # raising runs 20 -> 1000 with k 20 -> 500: the old shard stays, the new runs come after it
    assert plan_shards(1000, 500, {0: 19}) == [(0, 19), (20, 519), (520, 999)]
    # lowering runs: the existing shard holds more runs than asked (the summary keeps the first ones)
    assert plan_shards(20, 20, {0: 499}) == [(0, 499)]
    # a gap ends the existing part: shards after it are not followed
    assert plan_shards(10, 5, {0: 1, 5: 9}) == [(0, 1), (2, 6), (7, 9)]


def test_a_cells_shards_are_the_same_after_some_of_its_new_shards_were_written():
    """What a killed run resumes and what a cluster node plans: writing any subset of the new shards
    leaves the cell's shards as they were."""
    import itertools

    for existing in ({}, {0: 3}, {0: 3, 4: 4}):
        shards = plan_shards(23, 5, existing)
        new = [s for s in shards if existing.get(s[0]) != s[1]]
        for n in range(len(new) + 1):
            for written in itertools.combinations(new, n):
                assert plan_shards(23, 5, {**existing, **dict(written)}) == shards


def test_existing_shards_reads_the_shard_names_of_a_folder(tmp_path):
    for name in ("runs0-4.npz", "runs0-9.npz", "runs10-19.npz", "runs20-29.json", "run3.npz", "runs5-2.npz"):
        (tmp_path / name).write_bytes(b"")
    assert existing_shards(tmp_path) == {0: 9, 10: 19}  # the longest of two from run 0; no sidecar, no junk
    assert existing_shards(tmp_path / "missing") == {}


def _pack(shards, cost, target):
    return batches.pack(shards, lambda *s: cost[s], lambda c: c.split("/")[0], lambda c, a, b: f"{c}/runs{a}-{b}",
                        target)


def test_batches_are_sized_by_work_and_hold_one_dataset():
    shards = [(f"{d}/T10/a{i}", 0, 0) for d in ("x", "y") for i in range(10)]
    cost = {s: (30.0 if s[0].startswith("x") else 1.0) for s in shards}
    out = _pack(shards, cost, 100.0)
    # x: 10 shards of 30 s, at most 100 s a batch -> 3 + 3 + 3 + 1 shards; y: 10 s in one batch
    assert [round(b.seconds) for b in out] == [90, 90, 90, 30, 10]
    assert [s for b in out for s in b.shards] == shards  # every shard once, in order
    assert all(len({c.split("/")[0] for c, _, _ in b.shards}) == 1 for b in out)
    assert [b.dataset for b in out] == ["x"] * 4 + ["y"]
    assert all(re.fullmatch(batches.NAME_PATTERN, b.name) and b.name.startswith(b.dataset + "-") for b in out)
    assert len({b.name for b in out}) == len(out)
    # a shard longer than the target is a batch alone
    assert [len(b.shards) for b in _pack(shards[:3], cost, 10.0)] == [1, 1, 1]


def test_a_batch_asks_slurm_for_a_margin_doubled_per_retry_and_a_partition_limit_stops_the_parse():
    assert batches.requested_minutes(0) == batches.START_MINUTES
    assert batches.requested_minutes(600) == batches.START_MINUTES + 30  # 10 min estimated, 3 x
    first = batches.requested_minutes(600, attempt=1)
    assert [batches.requested_minutes(600, attempt=a) for a in (2, 3)] == [2 * first, 4 * first]
    assert batches.requested_minutes(600, attempt=3, limit=60) == 60  # never more than the partition allows
    b = batches.Batch("x-000000000000", "x", (("x/T1/a", 0, 0),), 1200.0)
    batches.check_limit([b], None)
    batches.check_limit([b], 65)
    with pytest.raises(ReproError, match=r"^configuration error: partition_minutes: .* 65 min .* allows 60"):
        batches.check_limit([b], 60)


def _test_config(**extra):
    """The config Snakemake builds for `--configfile .test/config/config.yaml` (config/config.yaml under it)."""
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    cfg.update(yaml.safe_load((ROOT / TEST_CONFIG).read_text()))
    cfg.update(extra)
    return cfg


def _touch_shard(plan, shard):
    """A shard as a finished job leaves it, as far as planning looks: a file of its name in its cell's folder."""
    cell, a, b = shard
    path = Path(plan.cell_folder(cell)) / f"runs{a}-{b}.npz"
    assert str(path) == plan.shard(*shard)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def _listing(folder) -> dict:
    """Every file and folder under ``folder``, with its kind, size and mtime (a folder's changes when an entry
    is created, renamed or deleted in it)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, folder)] = (name in dirnames, st.st_size, st.st_mtime_ns)
    return out


def test_planning_writes_and_deletes_nothing_and_gives_the_same_plan_twice(tmp_path, monkeypatch):
    """What a stopped run leaves (some shards, a batch's end marker and spec, store entries, published files,
    data): planning, local or cluster, leaves every file and folder as it was (a dry run is read-only)."""
    (tmp_path / "scratch").mkdir()
    monkeypatch.chdir(tmp_path / "scratch")  # the paths to fill in (relative: the same in any folder)
    plan = build_plan(_test_config(), ROOT)
    folder = tmp_path / "results-folder"
    folder.mkdir()
    monkeypatch.chdir(folder)  # no plan was built here yet
    shards = plan.all_shards()
    for s in shards[::4]:
        _touch_shard(plan, s)
    b = plan.batches[0]
    for path in (plan.batch_done(b.name), plan.layout.batch_spec(b.name), plan.store.claims_csv,
                 plan.layout.claims_csv, plan.layout.published_json, plan.layout.prepared_file("sushi16"),
                 plan.layout.status_file("yahoo30"), plan.layout.shards_log, f"{plan.layout.cells}/stray.npz.part"):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text('{"available": false}' if "status" in path else "x")
    before = _listing(folder)
    again, twice = build_plan(_test_config(), ROOT), build_plan(_test_config(), ROOT)
    cluster = build_plan(_test_config(batch_minutes=20), ROOT)
    assert _listing(folder) == before
    assert again.names.shards == twice.names.shards and again.names == twice.names
    assert again.batches == twice.batches and again.missing == twice.missing and cluster.batches
    assert again.cell_shards == plan.cell_shards  # the shards written are still the cells' shards


@pytest.mark.parametrize("minutes", [None, 20])
def test_only_missing_shards_are_packed_and_a_summary_reads_the_others_directly(tmp_path, monkeypatch, minutes):
    monkeypatch.chdir(tmp_path)
    first = build_plan(_test_config(batch_minutes=minutes, runs_per_shard=1), ROOT)
    shards = first.all_shards()
    assert first.missing == set(shards)  # an empty folder: every shard in a batch
    assert sorted(s for b in first.batches for s in b.shards) == sorted(shards)
    written = set(shards[::3])
    for s in written:
        _touch_shard(first, s)
    plan = build_plan(_test_config(batch_minutes=minutes, runs_per_shard=1), ROOT)
    assert plan.cell_shards == first.cell_shards and plan.missing == set(shards) - written
    # one shard a run: cells with shards written and shards missing, several of them in one batch
    assert any({(c, a, b) in written for a, b in held} == {True, False} for c, held in plan.cell_shards.items())
    held = [s for b in plan.batches for s in b.shards]
    assert len(held) == len(set(held)) and set(held) == plan.missing  # each missing shard once, no written one
    assert set(plan.batch_holding) == plan.missing
    assert all(b.name in plan.batch_of and plan.batch(b.name) == b for b in plan.batches)
    for cell, ranges in plan.cell_shards.items():
        ds, h, algo = split_key(cell)
        want = [plan.shard(cell, a, b) if (cell, a, b) in written else plan.batch_done(plan.batch_holding[(cell, a, b)])
                for a, b in ranges]
        assert plan.cell_inputs(ds, h, algo) == list(dict.fromkeys(want))
        assert plan.cell_files(ds, h, algo) == [plan.shard(cell, a, b) for a, b in ranges]  # what it reads
    for s in shards:
        _touch_shard(first, s)
    done = build_plan(_test_config(batch_minutes=minutes, runs_per_shard=1), ROOT)
    assert done.batches == [] and done.missing == set()
    cell = shards[0][0]
    assert done.cell_inputs(*split_key(cell)) == done.cell_files(*split_key(cell))
    with pytest.raises(ReproError, match="not in this plan"):
        done.batch(first.batches[0].name)


def test_a_shard_deleted_by_hand_is_planned_again_alone_and_nothing_else_is_touched(tmp_path, monkeypatch):
    """What the receipts' check did (drop the receipt of a batch whose shard was gone) is now the plan: the one
    missing shard in one batch, the summary's inputs its batch's end and its cell's other shards."""
    monkeypatch.chdir(tmp_path)
    plan = build_plan(_test_config(runs_per_shard=1), ROOT)
    for s in plan.all_shards():
        _touch_shard(plan, s)
    cell = next(c for c, held in plan.cell_shards.items() if len(held) > 1)
    victim = (cell, *plan.cell_shards[cell][-1])
    Path(plan.shard(*victim)).unlink()
    before = _listing(tmp_path)
    again = build_plan(_test_config(runs_per_shard=1), ROOT)
    assert _listing(tmp_path) == before
    assert again.missing == {victim} and [b.shards for b in again.batches] == [(victim,)]
    ds, h, algo = split_key(cell)
    assert again.cell_inputs(ds, h, algo) == [*(again.shard(cell, a, b) for a, b in plan.cell_shards[cell][:-1]),
                                              again.batch_done(again.batches[0].name)]


def test_a_node_computes_the_batch_it_was_submitted_whatever_finished_since(tmp_path, monkeypatch):
    """Cluster mode: the main process writes each batch's spec before submitting it; a node plans when it
    starts, when other batches (and part of its own) may be done, so it reads its batch from the spec."""
    monkeypatch.chdir(tmp_path)
    main = build_plan(_test_config(batch_minutes=20), ROOT)
    for b in main.batches:
        batches.write_spec(main.layout.batch_spec(b.name), b, [main.shard_id(*s) for s in b.shards])
    done, partly = main.batches[0], next(b for b in main.batches[1:] if len(b.shards) > 1)
    for s in (*done.shards, partly.shards[0]):
        _touch_shard(main, s)
    node = build_plan(_test_config(batch_minutes=20), ROOT)
    assert done.name not in node.batch_of and partly.name not in node.batch_of  # its plan differs
    for b in main.batches:
        assert batches.read_spec(main.layout.batch_spec(b.name), b.name) == b
        assert node.batch_runtime(b.name, 2) == main.batch_runtime(b.name, 2)  # SLURM's time, from the spec
        assert node.batch_prepared(b.name) == main.layout.prepared_file(b.dataset)


def test_a_batch_name_covers_its_shards_not_the_results_folder(tmp_path, monkeypatch):
    """A batch is named by its shards' paths under the results folder, so anything the shards' bytes depend on
    (seed, runs, code) names other batches, and the same shards in another folder the same batch."""
    monkeypatch.chdir(tmp_path)

    def names(plan):
        return {s: b.name for b in plan.batches for s in b.shards}

    seven = build_plan(_test_config(), ROOT)
    assert names(build_plan(_test_config(), ROOT)) == names(seven)
    assert names(build_plan(_test_config(results_dir="elsewhere"), ROOT)) == names(seven)
    # another seed: the same cells and ranges, every batch another name (its shards are other files)
    eight = build_plan(_test_config(base_seed=8), ROOT)
    assert set(names(eight)) == set(names(seven)) and not set(names(eight).values()) & set(names(seven).values())
    assert all(b.name.startswith(f"{b.dataset}-") for b in eight.batches)
    # more runs: other shards; a name never stands for two sets of shards
    more = build_plan(_test_config(runs=4, max_runs=4), ROOT)
    by_name = {b.name: b.shards for b in [*more.batches, *seven.batches]}
    assert all(by_name[b.name] == b.shards for b in [*more.batches, *seven.batches])
    assert set(names(more)) != set(names(seven))
    # an edited kernel: its cells' keys change, so its batches are renamed, and no other algorithm's
    real = digests.cell_code
    monkeypatch.setattr(digests, "cell_code", lambda algo, root=closure.ROOT: real(algo, root) + (
        "-edited" if kernel_name(algo) == "rucb" else ""))
    edited = names(build_plan(_test_config(), ROOT))
    renamed = {s for s in names(seven) if edited[s] != names(seven)[s]}
    assert renamed and {kernel_of(c) for c, _, _ in renamed} == {"rucb"}
    assert renamed == {s for s in names(seven) if kernel_of(s[0]) == "rucb"}


def test_a_challenger_added_packs_its_own_shards_and_regroups_no_one_elses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    papers = build_plan(_test_config(), ROOT)
    joined = build_plan(_test_config(challengers=["uniform-pairs"]), ROOT)
    assert set(papers.batches) < set(joined.batches)  # every batch as it was (name and shards)
    new = {s for b in set(joined.batches) - set(papers.batches) for s in b.shards}
    assert new and {kernel_of(c) for c, _, _ in new} == {"uniform-pairs"}
    assert all(joined.names.shards[c] == k for c, k in papers.names.shards.items())


def test_cluster_mode_makes_few_batches_and_local_mode_about_one_shard_each(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    local = build_plan(yaml.safe_load((ROOT / "config/config.yaml").read_text()), ROOT)
    cluster = build_plan({**yaml.safe_load((ROOT / "config/config.yaml").read_text()), "batch_minutes": 20}, ROOT)
    datasets = {b.dataset for b in cluster.batches}
    assert len(cluster.batches) == len(datasets) <= 12  # the default config's work: < 20 min per dataset
    target = local.config["shard_seconds"]
    assert all(b.seconds <= target or len(b.shards) == 1 for b in local.batches)
    assert len(cluster.batches) < len(local.batches) <= len(local.all_shards())


def test_retries_double_a_batch_runtime(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = build_plan(_test_config(batch_minutes=20), ROOT)
    name = plan.batches[0].name
    one = plan.batch_runtime(name, 1)
    assert (plan.batch_runtime(name, 2), plan.batch_runtime(name, 3)) == (2 * one, 4 * one)
    capped = build_plan(_test_config(batch_minutes=20, partition_minutes=one + 1), ROOT)
    assert capped.batch_runtime(name, 3) == one + 1
    # a batch neither planned nor specified (a node whose spec is gone): the start-up margin alone
    assert plan.batch_runtime("x-0123456789ab", 2) == 2 * batches.START_MINUTES


def test_cell_keys():
    key = cell_key("sushi16", 2000, "c2b-kl+B_offset=6")
    assert split_key(key) == ("sushi16", 2000, "c2b-kl+B_offset=6")


def test_build_plan_paths_come_from_the_layout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no shards here
    cfg = _test_config()
    plan = build_plan(cfg, ROOT)
    lay = Layout(cfg["results_dir"])
    assert plan.layout == lay and plan.layout.names is plan.names and plan.store == lay.stored()
    key = next(iter(plan.cell_runs))
    ds, h, algo = split_key(key)
    a, b = plan.cell_shards[key][0]
    path = plan.shard(key, a, b)
    assert path == lay.shard(ds, h, algo, plan.names.shards[key], a, b)
    assert path == f"{lay.results_dir}/{plan.shard_id(key, a, b)}" == f"{plan.cell_folder(key)}/runs{a}-{b}.npz"
    assert plan.shard_id(key, a, b) == f"cells/{key}/{plan.names.shards[key]}/runs{a}-{b}.npz"
    assert plan.cell_files(ds, h, algo) == [plan.shard(key, a, b) for a, b in plan.cell_shards[key]]
    assert plan.summary_of(ds, h, algo) == f"{lay.summaries}/{key}/{plan.names.summary[(ds, h, algo)]}.npz"
    assert plan.prepared_of_cell(key) == f"{lay.prepared}/{ds}/{plan.names.data[ds]}.json"
    st = plan.store
    assert plan.all_targets()[-5:] == [st.claims_csv, st.runtime_csv, st.report_md, st.reproduction_md,
                                       st.software_json]
    assert st.claims_csv == f"{lay.store_dir}/claims/{plan.names.claims}/claims.csv"
    assert plan.log("claims") == f"{lay.logs}/claims.log"
    assert not any(p.startswith("/") for p in plan.all_targets() + [plan.rel("config/datasets.yaml")])
    assert plan.batch_done(plan.batches[0].name) == lay.batch_done(plan.batches[0].name)
    # a job asked for under another key than the plan's (a path typed by hand) is refused in one line
    plan.check_key("summary", (ds, h, algo), plan.names.summary[(ds, h, algo)])
    with pytest.raises(ReproError, match=r"^summary .* is named [0-9a-f]{16} in this plan, not 0{16}"):
        plan.check_key("summary", (ds, h, algo), "0" * 16)


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
def test_dry_run_of_the_default_config_makes_one_job_per_batch(tmp_path):
    r = smk("-n", "--directory", str(tmp_path), "--workflow-profile", str(ROOT / "profiles/default"))
    assert r.returncode == 0, r.stderr
    counts = job_counts(r.stdout + r.stderr)
    _, runs = _default_cells()
    shards = sum(len(jobsize.chunks(n, jobsize.runs_per_job(c[2], c[1], n))) for c, n in runs.items())
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    plan = build_plan(cfg, ROOT, scan=False)
    optional = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d)}
    assert counts["simulate"] == len([b for b in plan.batches if b.dataset not in optional])
    # local batches of about shard_seconds and one algorithm each: at most one job per shard, far fewer than runs
    assert counts["simulate"] <= shards and counts["total"] < sum(runs.values()) / 10
    assert counts["summarize_cell"] == len(runs) and counts["all"] == 1
    assert "batch_spec" not in counts  # specs: cluster mode only
    # the figures and what reads them are named after the optional datasets' probes (their status files), so
    # a first run's dry run lists them only as waiting for the probe checkpoint; once it ran, every one
    assert counts["probe_dataset"] == len(plan.optional_datasets()) >= 1
    assert not {"figure", "claims", "report_md", "runtime_table", "software_stack"} & set(counts), counts
    for dataset in plan.optional_datasets():
        status = tmp_path / plan.layout.status_file(dataset)
        status.parent.mkdir(parents=True, exist_ok=True)
        status.write_text(json.dumps({"dataset": dataset, "available": False, "reason": "offline (a test)"}))
    r = smk("-n", "--directory", str(tmp_path), "--workflow-profile", str(ROOT / "profiles/default"))
    assert r.returncode == 0, r.stderr
    probed = job_counts(r.stdout + r.stderr)
    assert "probe_dataset" not in probed and probed["figure"] == len(plan.figures)
    assert probed["claims"] == probed["report_md"] == probed["runtime_table"] == probed["software_stack"] == 1
    assert probed["summarize_cell"] == counts["summarize_cell"] and probed["simulate"] == counts["simulate"]


def test_estimate_takes_the_config_as_snakemake_parses_it():
    """`--config batch_minutes=1e1` is 10.0 to Snakemake (its parse_config), so to estimate too; the SLURM
    profile's set-resources sets batch_minutes, and neither a --config nor a --configfile switches it off
    (docs/decisions.md#cluster-mode); a batch_minutes the config sets wins."""
    from snakemake.cli import parse_config

    from banditrepro.workflow.estimate import load_config

    assert load_config(ROOT).get("batch_minutes") is None  # config.yaml and profiles/default: local
    cfg = load_config(ROOT, overrides=["batch_minutes=1e1", "runs=7"])
    assert cfg["batch_minutes"] == parse_config(["batch_minutes=1e1"])["batch_minutes"] == 10.0
    assert cfg["runs"] == 7 and cfg["base_seed"] == 20240601  # the rest from config/config.yaml
    slurm = ROOT / "profiles/slurm"
    assert load_config(ROOT, profile=slurm)["batch_minutes"] == 20
    assert load_config(ROOT, overrides=["runs=3"], profile=slurm)["batch_minutes"] == 20
    own = load_config(ROOT, [ROOT / TEST_CONFIG], profile=slurm)
    assert own["batch_minutes"] == 20 and own["results_dir"] == "results/test"
    named = load_config(ROOT, [ROOT / "config/config.yaml"], ["runs=2"], profile=slurm)
    assert named["batch_minutes"] == 20 and named["runs"] == 2
    assert load_config(ROOT, overrides=["batch_minutes=5"], profile=slurm)["batch_minutes"] == 5
    with pytest.raises(ReproError, match="--config"):
        load_config(ROOT, overrides=["1bad=2"])


def test_estimate_prints_submissions_lengths_cpu_hours_files_and_bytes(tmp_path):
    """`banditrepro estimate` plans as the workflow does, without Snakemake's DAG."""
    import subprocess
    import sys

    cli = [sys.executable, "-m", "banditrepro", "estimate", "--project", str(ROOT), "--profile",
           str(ROOT / "profiles/slurm"), "--configfile", str(ROOT / TEST_CONFIG),
           "--config", "results_dir=results/estimate-test"]
    r = subprocess.run(cli, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    n = int(re.search(r"SLURM submissions: (\d+)", out).group(1))
    cfg = yaml.safe_load((ROOT / TEST_CONFIG).read_text())
    datasets = {c.split("/")[0] for c in build_plan(cfg, ROOT, scan=False).cell_runs}
    assert 1 <= n <= len(datasets)  # the test config's few CPU-seconds: one batch per dataset at most
    assert re.search(r"requested --time .* max \d+ min", out) and "CPU-hours" in out
    assert re.search(r"writes: about [\d,]+ files, [\d,]+ MB", out)
    # a partition limit the batches would exceed stops it in one line naming the key
    r = subprocess.run([*cli, "partition_minutes=1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "partition_minutes" in r.stderr, r.stderr


@pytest.mark.workflow
def test_estimate_and_snakemake_plan_the_same_batches_for_a_config_value_snakemake_parses(tmp_path, monkeypatch):
    """`--config batch_minutes=1e1`: Snakemake's dry run and estimate's config give the same batches."""
    from banditrepro.workflow.estimate import load_config

    args = ["--configfile", str(ROOT / TEST_CONFIG)]
    r = smk("-n", "--directory", str(tmp_path), *args, "--config", "batch_minutes=1e1")
    assert r.returncode == 0, r.stderr[-3000:]
    monkeypatch.chdir(tmp_path)
    plan = build_plan(load_config(ROOT, [ROOT / TEST_CONFIG], ["batch_minutes=1e1"]), ROOT)
    assert plan.config["batch_minutes"] == 10.0
    optional = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d)}  # after the probe only
    assert job_counts(r.stdout + r.stderr)["simulate"] == len([b for b in plan.batches if b.dataset not in optional])


@pytest.mark.parametrize("minutes", [None, 20])
def test_estimate_counts_the_missing_shards_and_the_batches_holding_them(tmp_path, monkeypatch, minutes):
    """`banditrepro estimate` counts what the run will compute: after a shard is deleted by hand, that shard
    and its one batch; on a complete folder, nothing."""
    from banditrepro.workflow.estimate import estimate

    monkeypatch.chdir(tmp_path)
    plan = build_plan(_test_config(batch_minutes=minutes), ROOT)
    fresh = estimate(plan)
    assert fresh["new_shards"] == len(plan.all_shards()) and fresh["batches"] >= 1
    for s in plan.all_shards():
        _touch_shard(plan, s)
    assert estimate(build_plan(_test_config(batch_minutes=minutes), ROOT))["batches"] == 0
    victim = plan.all_shards()[len(plan.all_shards()) // 2]
    Path(plan.shard(*victim)).unlink()
    numbers = estimate(build_plan(_test_config(batch_minutes=minutes), ROOT))
    assert numbers["batches"] == 1 and numbers["new_shards"] == 1
    assert numbers["new_runs"] == victim[2] - victim[1] + 1
