"""A batch's body (banditrepro.workflow.batches.run_batch), its spec (write_spec, read_spec) and what makes a
shard complete (cell.shard_complete: its file exists): a batch computes only its shards that do not exist, a
killed batch resumes with the rest, its end marker is written last, a stop request ends it before its next
shard, a full disk is said as such, and a node refuses a spec that is not its batch's. In process, on the
test config's plan in a tmp folder, with a stand-in for the simulation."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from banditrepro import ReproError, atomic
from banditrepro.cell import shard_complete
from banditrepro.workflow import batches, stop
from banditrepro.workflow.batches import Batch, file_sha256, read_spec, run_batch, write_spec
from banditrepro.workflow.config import apply_aliases, check_config
from banditrepro.workflow.plan import build_plan
from tests.workflow.common import ROOT, TEST_CONFIG


def _test_config(**extra):
    """The config Snakemake builds for `--configfile .test/config/config.yaml` (config/config.yaml under it)."""
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    cfg.update(yaml.safe_load((ROOT / TEST_CONFIG).read_text()))
    cfg.update(extra)
    return cfg


@pytest.fixture
def setup(tmp_path, monkeypatch):
    """The test config's plan (one shard per run, so batches hold several), its largest batch, a stand-in
    prepared file and the batch's end marker."""
    monkeypatch.chdir(tmp_path)
    plan = build_plan(_test_config(runs_per_shard=1), ROOT)
    batch = max(plan.batches, key=lambda b: len(b.shards))
    assert len(batch.shards) >= 5
    prepared = tmp_path / "prepared.json"
    prepared.write_text('{"name": "x"}')
    return plan, batch, str(prepared), plan.batch_done(batch.name)


def fake_compute(calls, fail_after=None, done=None):
    """Writes a shard as cell.write_shard does (sidecar first, .npz last); raises on call fail_after + 1."""

    def compute(algo, prepared, horizon, first, last, seed, out, sha):
        if fail_after is not None and len(calls) == fail_after:
            raise RuntimeError("killed")
        if done is not None:
            assert not Path(done).exists()  # the end marker comes after every shard
        calls.append(out)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).with_suffix(".json").write_text(json.dumps({"prepared_sha256": sha, "seed": seed}))
        Path(out).write_bytes(b"npz")
        return []

    return compute


def computed_lines(plan):
    log = Path(plan.layout.shards_log)
    return log.read_text().splitlines() if log.exists() else []


def test_a_shard_is_complete_when_its_npz_exists(tmp_path):
    shard = tmp_path / "runs0-1.npz"
    assert not shard_complete(shard)  # nothing
    shard.with_suffix(".json").write_text("{}")
    assert not shard_complete(shard)  # a sidecar alone is not a shard (a write killed before its .npz)
    shard.write_bytes(b"npz")
    assert shard_complete(shard)
    shard.with_suffix(".json").unlink()
    assert shard_complete(shard)  # its name covers its inputs: nothing else is consulted


def test_a_write_killed_before_its_npz_leaves_the_shard_incomplete(tmp_path, monkeypatch):
    """The sidecar is written first and the .npz last: killed between them, there is no shard of that name."""
    from banditrepro import cell

    shard = tmp_path / "runs0-0.npz"
    monkeypatch.setattr(cell, "shard_sidecar", lambda results: {})
    monkeypatch.setattr(cell, "shard_arrays", lambda results: {})

    def killed(path, arrays, **durable):
        raise KeyboardInterrupt

    monkeypatch.setattr(cell, "write_npz", killed)
    with pytest.raises(KeyboardInterrupt):
        cell.write_shard([], shard, "sha")
    assert json.loads(shard.with_suffix(".json").read_text()) == {"prepared_sha256": "sha"}
    assert not shard.exists() and not shard_complete(shard)


def test_a_batch_computes_its_shards_then_writes_its_end_marker_last(setup, monkeypatch):
    plan, batch, prepared, done = setup
    events = []
    real_write_text = atomic.write_text
    monkeypatch.setattr(atomic, "write_text", lambda path, text, *a, **k: (events.append(("write", str(path))),
                                                                           real_write_text(path, text, *a, **k)))
    calls = []
    compute = fake_compute(calls, done=done)
    text = run_batch(plan, batch, prepared, done, lambda *a: (events.append(("shard", a[6])), compute(*a))[1])
    n = len(batch.shards)
    assert calls == [plan.shard(*s) for s in batch.shards] and f"{n} of {n} shards computed" in text
    assert events == [("shard", plan.shard(*s)) for s in batch.shards] + [("write", done)]  # the end, once, last
    assert Path(done).read_text() == f"{batch.name}\n"
    # each shard from the batch's prepared file and the config's seed; the prepared file's sha256 in its sidecar
    for s in batch.shards:
        side = json.loads(Path(plan.shard(*s)).with_suffix(".json").read_text())
        assert side == {"prepared_sha256": file_sha256(prepared), "seed": plan.config["base_seed"]}
    lines = computed_lines(plan)
    assert [ln.split()[0] for ln in lines] == [plan.shard_id(*s) for s in batch.shards]
    assert all(ln.split()[2] == str(os.getpid()) for ln in lines)
    # run again (a forced rerun, a requeue): nothing computed, the end marker again
    Path(done).unlink()
    again = []
    text = run_batch(plan, batch, prepared, done, fake_compute(again))
    assert again == [] and Path(done).is_file() and len(computed_lines(plan)) == n
    assert f"0 of {n} shards computed" in text and text.count("complete, skipped") == n


def test_a_batch_computes_only_its_shards_that_do_not_exist(setup):
    """A shard another job wrote meanwhile (a requeued batch beside its first attempt, the summary job of a
    stale end marker) is not computed again: its name covers its inputs, so its file is the shard."""
    plan, batch, prepared, done = setup
    there = batch.shards[1::2]
    for s in there:
        Path(plan.shard(*s)).parent.mkdir(parents=True, exist_ok=True)
        Path(plan.shard(*s)).write_bytes(b"written by another job")
    calls = []
    run_batch(plan, batch, prepared, done, fake_compute(calls))
    assert calls == [plan.shard(*s) for s in batch.shards if s not in there]
    assert all(Path(plan.shard(*s)).read_bytes() == b"written by another job" for s in there)  # untouched
    assert [ln.split()[0] for ln in computed_lines(plan)] == [plan.shard_id(*s) for s in batch.shards
                                                               if s not in there]


def test_an_interrupted_batch_resumes_with_the_shards_it_had_not_finished(setup):
    plan, batch, prepared, done = setup
    calls = []
    algo = batch.shards[2][0].split("/")[2]
    with pytest.raises(ReproError, match=f"algorithm '{re.escape(algo)}' failed .*killed"):  # the kernel's error, named
        run_batch(plan, batch, prepared, done, fake_compute(calls, fail_after=2))
    assert len(calls) == 2 and not Path(done).exists()  # no end: Snakemake runs the batch again
    retry = []
    run_batch(plan, batch, prepared, done, fake_compute(retry))
    assert retry == [plan.shard(*s) for s in batch.shards[2:]]  # only the rest
    shards = [ln.split()[0] for ln in computed_lines(plan)]
    assert sorted(shards) == sorted(set(shards)) and len(shards) == len(batch.shards)  # none computed twice


def test_a_stop_request_ends_a_batch_before_its_next_shard_and_the_next_run_resumes(setup):
    plan, batch, prepared, done = setup
    calls = []
    compute = fake_compute(calls)

    def then_stop(*args):  # Ctrl-C or SIGTERM while the second shard is computed
        out = compute(*args)
        if len(calls) == 2:
            stop.request("SIGTERM")
        return out

    try:
        with pytest.raises(stop.Stopped, match="stopped on SIGTERM.*run the same command again"):
            run_batch(plan, batch, prepared, done, then_stop)
    finally:
        stop.reset()
    assert len(calls) == 2 and not Path(done).exists()
    assert not any(Path(plan.shard(*s)).exists() for s in batch.shards[2:])
    rest = []
    run_batch(plan, batch, prepared, done, fake_compute(rest))
    assert rest == [plan.shard(*s) for s in batch.shards[2:]] and Path(done).is_file()


@pytest.mark.parametrize("code", ["ENOSPC", "EDQUOT"])
def test_a_full_disk_or_quota_is_said_in_one_line_never_as_an_algorithms_failure(setup, code):
    import errno

    plan, batch, prepared, done = setup

    def full(algo, prepared, horizon, first, last, seed, out, sha):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)), out)

    with pytest.raises(ReproError) as err:
        run_batch(plan, batch, prepared, done, full)
    text = str(err.value)
    assert "\n" not in text and "algorithm" not in text and "disk full or quota exceeded" in text, text
    assert plan.shard(*batch.shards[0]) in text and not Path(done).exists()


# --- the spec a cluster node reads ---------------------------------------------------------------------------


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = build_plan(_test_config(batch_minutes=20), ROOT)
    b = max(plan.batches, key=lambda b: len(b.shards))
    assert len(b.shards) > 1
    return plan, b, plan.layout.batch_spec(b.name)


def test_a_spec_is_written_durably_and_read_back_as_its_batch(cluster, monkeypatch):
    plan, batch, path = cluster
    writes = []
    real = atomic.write_json
    monkeypatch.setattr(atomic, "write_json", lambda p, obj, **kw: (writes.append((p, kw)), real(p, obj, **kw)))
    write_spec(path, batch, [plan.shard_id(*s) for s in batch.shards])
    assert writes == [(path, {"durable": True})]  # a node on another host reads it after the submission
    assert read_spec(path, batch.name) == batch
    doc = json.loads(Path(path).read_text())
    assert doc["paths"] == [plan.shard_id(*s) for s in batch.shards]
    assert batches.batch_name(batch.dataset, doc["paths"]) == batch.name


def _edit(path, change):
    doc = json.loads(Path(path).read_text())
    change(doc)
    Path(path).write_text(json.dumps(doc))


@pytest.mark.parametrize("change", [
    lambda d: d["paths"].pop(),  # a shard fewer
    lambda d: d["paths"].reverse(),  # in another order (another name)
    lambda d: d.update(dataset="sushi16" if d["dataset"] != "sushi16" else "mslr5"),
    lambda d: d["shards"].pop(),  # the shards not those its paths name
    lambda d: d["shards"].reverse(),
    lambda d: d["shards"][0].__setitem__(2, d["shards"][0][2] + 1),  # another run range
    lambda d: d["shards"][0].__setitem__(0, d["shards"][-1][0] + "x"),  # another cell
])
def test_a_spec_whose_content_does_not_match_its_name_is_refused(cluster, change):
    plan, batch, path = cluster
    write_spec(path, batch, [plan.shard_id(*s) for s in batch.shards])
    _edit(path, change)
    with pytest.raises(ReproError, match=f"^batch {batch.name}: its spec .* describes other shards"):
        read_spec(path, batch.name)


def test_a_spec_of_another_batch_missing_or_unreadable_is_refused_in_one_line(cluster):
    plan, batch, path = cluster
    other = next(b for b in plan.batches if b != batch)
    write_spec(path, other, [plan.shard_id(*s) for s in other.shards])  # another batch's spec under this name
    with pytest.raises(ReproError, match="describes other shards"):
        read_spec(path, batch.name)
    Path(path).write_text("{cut sho")
    with pytest.raises(ReproError, match="cannot be read") as err:
        read_spec(path, batch.name)
    assert "\n" not in str(err.value)
    Path(path).unlink()
    with pytest.raises(ReproError, match="is missing: run snakemake again"):
        read_spec(path, batch.name)
    assert read_spec(path, batch.name, missing_ok=True) is None


def test_a_batch_asks_slurm_for_a_margin_doubled_per_retry_and_its_batch_length(cluster):
    plan, batch, path = cluster
    assert batch.minutes(1) == batches.requested_minutes(batch.seconds)
    assert batch.minutes(2) == 2 * batch.minutes(1) and batch.minutes(3, limit=batch.minutes(1)) == batch.minutes(1)
    assert Batch("x-0123456789ab", "x", (), 0.0).minutes() == batches.START_MINUTES


# --- deprecated config keys -------------------------------------------------------------------------------------

def test_deprecated_keys_map_to_the_new_ones_with_one_line_each():
    import io

    err = io.StringIO()
    cfg = {"cells_per_job": 3, "job_seconds": 2.0, "job_minutes": 7}
    apply_aliases(cfg, err)
    assert cfg == {"runs_per_shard": 3, "shard_seconds": 2.0, "batch_minutes": 7}
    lines = err.getvalue().splitlines()
    assert lines == [f"banditrepro: config key '{old}' is deprecated: use '{new}'" for old, new in
                     (("cells_per_job", "runs_per_shard"), ("job_seconds", "shard_seconds"),
                      ("job_minutes", "batch_minutes"))]
    both = {"job_minutes": 7, "batch_minutes": 9}  # the new name wins
    apply_aliases(both, io.StringIO())
    assert both == {"batch_minutes": 9}


def test_check_config_accepts_a_deprecated_key(capsys):
    cfg = check_config({"job_minutes": 30}, ROOT / "workflow/schemas/config.schema.yaml")
    assert cfg["batch_minutes"] == 30 and "job_minutes" not in cfg and cfg["shard_seconds"] == 5.0
    assert capsys.readouterr().err.count("\n") == 1


def test_local_batches_hold_one_algorithm_cluster_batches_one_dataset():
    """Local packing never mixes algorithms (a failing kernel blocks only its own cells; a new algorithm
    regroups nobody's shards); cluster packing mixes them within a dataset to keep submissions few."""
    from banditrepro.workflow.batches import pack

    shards = [(f"d/T10/{a}", 0, 0) for a in ("a", "a", "b", "c")]
    args = (lambda *s: 1.0, lambda cell: cell.split("/")[0], lambda c, a, b: f"{c}/runs{a}-{b}.npz", 100.0)
    local = pack(shards, *args, algorithm_of=lambda cell: cell.split("/")[2])
    assert [{s[0] for s in b.shards} for b in local] == [{"d/T10/a"}, {"d/T10/b"}, {"d/T10/c"}]
    assert len(pack(shards, *args)) == 1
    with_new = pack(shards + [("d/T10/z", 0, 0)], *args, algorithm_of=lambda cell: cell.split("/")[2])
    assert {b.name for b in local} < {b.name for b in with_new}


def test_local_batches_take_a_kernels_cells_together(tmp_path, monkeypatch):
    """The default config's local batches: each holds one kernel's shards (any parameter sets and horizons)
    of one dataset, the small cells of a kernel share a job, and every shard is in exactly one batch; cluster
    batches mix a dataset's algorithms."""
    import yaml

    from banditrepro.workflow.plan import build_plan, dataset_of, kernel_of

    monkeypatch.chdir(tmp_path)
    cfg = check_config(yaml.safe_load((ROOT / "config/config.yaml").read_text()),
                       ROOT / "workflow/schemas/config.schema.yaml")
    plan = build_plan(cfg, ROOT, scan=False)
    held = [s for b in plan.batches for s in b.shards]
    assert sorted(held) == sorted(plan.all_shards())
    for b in plan.batches:
        assert len({(dataset_of(c), kernel_of(c)) for c, _, _ in b.shards}) == 1, b
        assert b.seconds <= cfg["shard_seconds"] or len(b.shards) == 1
    mixed = [b for b in plan.batches if len({c for c, _, _ in b.shards}) > 1]
    assert any(len({c.split("/")[2] for c, _, _ in b.shards}) > 1 for b in mixed)  # parameter sets together
    assert any(len({c.split("/")[1] for c, _, _ in b.shards}) > 1 for b in mixed)  # horizons together
    assert len(plan.batches) < len(plan.cell_runs) / 2
    cluster = build_plan({**cfg, "batch_minutes": 20}, ROOT, scan=False)
    assert len(cluster.batches) < len({dataset_of(c) for c in cluster.cell_runs}) * 2
    assert any(len({kernel_of(c) for c, _, _ in b.shards}) > 1 for b in cluster.batches)
