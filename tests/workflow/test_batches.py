"""A batch's body (banditrepro.workflow.batches.run_batch) and what makes a shard complete
(cell.shard_complete): a killed batch resumes with the shards it had not finished, the receipt is written
last, a stop request ends a batch before its next shard, a full disk is said as such. In process, with a
stand-in for the simulation. The claims' leases: tests/workflow/test_shard_leases.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from banditrepro import ReproError
from banditrepro.cell import shard_complete
from banditrepro.layout import Layout
from banditrepro.workflow import stop
from banditrepro.workflow.batches import Batch, file_sha256, run_batch
from banditrepro.workflow.config import apply_aliases, check_config
from tests.workflow.common import ROOT


class Plan(SimpleNamespace):
    """What run_batch asks of a plan: shard paths, the base seed, the shards log."""

    def shard(self, cell, a, b):
        return f"{self.layout.cells}/{self.shard_relpath(cell, a, b)}"

    @staticmethod
    def shard_relpath(cell, a, b):
        return f"{cell}/code/runs{a}-{b}.npz"


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = Plan(layout=Layout("res", 3), config={"base_seed": 3})
    prepared = tmp_path / "prepared.json"
    prepared.write_text('{"name": "x"}')
    shards = tuple((f"x/T10/a{i}", 0, 1) for i in range(5))
    batch = Batch("x-0123456789ab", "x", shards, 5.0)
    return plan, batch, str(prepared), "res/batches/x-0123456789ab.json"


def fake_compute(calls, fail_after=None, receipt=None):
    """Writes a shard as cell.write_shard does (sidecar first, .npz last); raises on call fail_after + 1."""

    def compute(algo, prepared, horizon, first, last, seed, out, sha):
        if fail_after is not None and len(calls) == fail_after:
            raise RuntimeError("killed")
        if receipt is not None:
            assert not Path(receipt).exists()  # the receipt comes after every shard
        calls.append(out)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).with_suffix(".json").write_text(json.dumps({"prepared_sha256": sha}))
        Path(out).write_bytes(b"npz")
        return []

    return compute


def computed_lines(plan):
    log = Path(plan.layout.shards_log)
    return log.read_text().splitlines() if log.exists() else []


def test_a_shard_is_complete_with_its_npz_and_a_sidecar_naming_the_prepared_file(tmp_path):
    shard = tmp_path / "runs0-1.npz"
    side = shard.with_suffix(".json")
    assert not shard_complete(shard, "abc")  # nothing
    shard.write_bytes(b"npz")
    assert not shard_complete(shard, "abc")  # no sidecar
    side.write_text("{not json")
    assert not shard_complete(shard, "abc")
    side.write_text(json.dumps({"runs": [0, 1]}))
    assert not shard_complete(shard, "abc")  # a sidecar of an older version: no prepared_sha256
    side.write_text(json.dumps({"prepared_sha256": "other"}))
    assert not shard_complete(shard, "abc")  # computed from a prepared file with other bytes
    side.write_text(json.dumps({"prepared_sha256": "abc"}))
    assert shard_complete(shard, "abc")
    shard.unlink()
    assert not shard_complete(shard, "abc")  # a sidecar alone is not a shard


def test_a_rewrite_killed_before_its_npz_leaves_the_shard_incomplete(tmp_path, monkeypatch):
    """Rewriting a shard (a re-derived dataset, an older sidecar) and killed between the sidecar and the
    .npz: the old .npz must not stay beside a sidecar naming the new prepared file (that pair is complete)."""
    from banditrepro import cell

    shard = tmp_path / "runs0-0.npz"
    shard.write_bytes(b"old")
    shard.with_suffix(".json").write_text(json.dumps({"prepared_sha256": "old"}))
    monkeypatch.setattr(cell, "shard_sidecar", lambda results: {})
    monkeypatch.setattr(cell, "shard_arrays", lambda results: {})

    def killed(path, arrays, **durable):
        raise KeyboardInterrupt

    monkeypatch.setattr(cell, "write_npz", killed)
    with pytest.raises(KeyboardInterrupt):
        cell.write_shard([], shard, "new")
    assert json.loads(shard.with_suffix(".json").read_text()) == {"prepared_sha256": "new"}
    assert not shard.exists() and not shard_complete(shard, "new")


def test_a_batch_computes_its_shards_then_writes_its_receipt_last(setup):
    plan, batch, prepared, receipt = setup
    calls = []
    text = run_batch(plan, batch, prepared, receipt, fake_compute(calls, receipt=receipt))
    assert len(calls) == 5 and "5 of 5 shards computed" in text
    doc = json.loads(Path(receipt).read_text())
    assert doc == {"batch": batch.name, "prepared_sha256": file_sha256(prepared),
                   "shards": [plan.shard_relpath(*s) for s in batch.shards]}
    lines = computed_lines(plan)
    assert [ln.split()[0] for ln in lines] == doc["shards"]
    assert all(ln.split()[2] == str(os.getpid()) for ln in lines)
    assert not list(Path(plan.layout.cells).rglob("*.claim"))  # every claim released
    # run again (a forced rerun with the same prepared bytes): nothing computed, the same receipt
    first = Path(receipt).read_bytes()
    Path(receipt).unlink()
    again = []
    run_batch(plan, batch, prepared, receipt, fake_compute(again))
    assert again == [] and Path(receipt).read_bytes() == first and len(computed_lines(plan)) == 5


def test_an_interrupted_batch_resumes_with_the_shards_it_had_not_finished(setup):
    plan, batch, prepared, receipt = setup
    calls = []
    with pytest.raises(ReproError, match="algorithm 'a2' failed .*killed"):  # the kernel's error, named
        run_batch(plan, batch, prepared, receipt, fake_compute(calls, fail_after=2))
    assert len(calls) == 2 and not Path(receipt).exists()  # no receipt: Snakemake runs the batch again
    assert not list(Path(plan.layout.cells).rglob("*.claim"))  # the failing shard's claim released
    retry = []
    run_batch(plan, batch, prepared, receipt, fake_compute(retry))
    assert retry == [plan.shard(*s) for s in batch.shards[2:]]  # only the rest
    shards = [ln.split()[0] for ln in computed_lines(plan)]
    assert sorted(shards) == sorted(set(shards)) and len(shards) == 5  # no shard computed twice


def test_a_re_derived_prepared_file_recomputes_exactly_its_shards(setup):
    plan, batch, prepared, receipt = setup
    run_batch(plan, batch, prepared, receipt, fake_compute([]))
    Path(prepared).write_text('{"name": "x", "edited": true}')
    calls = []
    run_batch(plan, batch, prepared, receipt, fake_compute(calls))
    assert len(calls) == 5
    assert json.loads(Path(receipt).read_text())["prepared_sha256"] == file_sha256(prepared)


def test_a_stop_request_ends_a_batch_before_its_next_shard_and_the_next_run_resumes(setup):
    plan, batch, prepared, receipt = setup
    calls = []
    compute = fake_compute(calls)

    def then_stop(*args):  # Ctrl-C or SIGTERM while the second shard is computed
        out = compute(*args)
        if len(calls) == 2:
            stop.request("SIGTERM")
        return out

    try:
        with pytest.raises(stop.Stopped, match="stopped on SIGTERM.*run the same command again"):
            run_batch(plan, batch, prepared, receipt, then_stop)
    finally:
        stop.reset()
    assert len(calls) == 2 and not Path(receipt).exists()
    assert not list(Path(plan.layout.cells).rglob("*.claim*"))
    rest = []
    run_batch(plan, batch, prepared, receipt, fake_compute(rest))
    assert rest == [plan.shard(*s) for s in batch.shards[2:]]


@pytest.mark.parametrize("code", ["ENOSPC", "EDQUOT"])
def test_a_full_disk_or_quota_is_said_in_one_line_never_as_an_algorithms_failure(setup, code):
    import errno

    plan, batch, prepared, receipt = setup

    def full(algo, prepared, horizon, first, last, seed, out, sha):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)), out)

    with pytest.raises(ReproError) as err:
        run_batch(plan, batch, prepared, receipt, full)
    text = str(err.value)
    assert "\n" not in text and "algorithm" not in text and "disk full or quota exceeded" in text, text
    assert plan.shard(*batch.shards[0]) in text
    assert not list(Path(plan.layout.cells).rglob("*.claim*"))


def test_the_receipt_is_written_durably_and_last(setup, monkeypatch):
    from banditrepro.workflow import batches

    plan, batch, prepared, receipt = setup
    writes = []
    real = batches.write_json
    monkeypatch.setattr(batches, "write_json", lambda path, obj, **kw: (writes.append((path, kw)), real(path, obj)))
    run_batch(plan, batch, prepared, receipt, fake_compute([], receipt=receipt))
    assert writes == [(receipt, {"durable": True})]


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
