"""A batch's identity and its receipt (banditrepro.workflow.plan, .batches; docs/decisions.md#batch-identity,
#receipts-checked): a batch is named by its shards' paths under the results folder, so a change of anything
its shards' bytes depend on (base seed, runs, code) names other batches; receipts are checked against their
shards at plan time, and `banditrepro estimate` counts what that check will run. In process, with stand-in
shards and prepared files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from banditrepro.workflow import batches
from banditrepro.workflow.estimate import estimate
from banditrepro.workflow.plan import build_plan, kernel_of, pack_batches
from tests.workflow.common import ROOT, TEST_CONFIG


def _config(**extra):
    return {**yaml.safe_load((ROOT / TEST_CONFIG).read_text()), **extra}


def _names(plan) -> dict:
    """shard (cell, first, last) -> the name of its batch"""
    return {s: b.name for b in plan.batches for s in b.shards}


def test_a_batch_name_covers_the_base_seed_runs_and_code_but_not_the_results_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seed7 = build_plan(_config(), ROOT)
    assert _names(build_plan(_config(), ROOT)) == _names(seed7)  # a pure function of the config
    # receipts live in <results>/batches: the same batch names in another results folder
    assert _names(build_plan(_config(results_dir="elsewhere"), ROOT)) == _names(seed7)
    # another seed: the same cells and shard ranges, every batch another name (its shards are other files)
    seed8 = build_plan(_config(base_seed=8), ROOT)
    assert set(_names(seed8)) == set(_names(seed7))
    assert not set(_names(seed8).values()) & set(_names(seed7).values())
    assert all(b.name.startswith(f"{b.dataset}-") for b in seed8.batches)
    # more runs: the extra runs are new shards, in batches of new names; no batch keeps a name with other shards
    more = build_plan(_config(runs=4, max_runs=4), ROOT)
    by_name = {b.name: b.shards for b in [*more.batches, *seed7.batches]}
    assert all(by_name[b.name] == b.shards for b in [*more.batches, *seed7.batches])
    assert set(_names(more)) != set(_names(seed7))
    # an edited kernel: its cells' shards sit in folders of another code digest, so their batches are renamed,
    # and no other algorithm's
    kernel = kernel_of(next(iter(seed7.codes)))
    edited = {c for c in seed7.codes if kernel_of(c) == kernel}
    for cell in edited:
        seed7.codes[cell] = "0" * 12
    renamed = pack_batches(seed7, seed7.config)
    changed = {s for s, n in _names(build_plan(_config(), ROOT)).items() if n not in {b.name for b in renamed}}
    assert changed and {c for c, _, _ in changed} == edited


def _finish(plan, batch, sha="a" * 64):
    """What a finished batch leaves: every shard (.npz and a sidecar naming the prepared file) and its receipt."""
    for s in batch.shards:
        path = Path(plan.shard(*s))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_suffix(".json").write_text(json.dumps({"prepared_sha256": sha}))
        path.write_bytes(b"npz")
    receipt = Path(plan.receipt(batch.name))
    receipt.parent.mkdir(parents=True, exist_ok=True)
    receipt.write_text(json.dumps(batches.receipt(batch, [plan.shard_relpath(*s) for s in batch.shards], sha)))


def test_receipts_whose_shards_are_missing_or_incomplete_are_listed_and_dropped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = build_plan(_config(), ROOT)
    done = plan.batches[:6]
    for b in done:
        _finish(plan, b)
    assert plan.stale_receipts() == []  # six complete batches; the batches not run have no receipt to check
    Path(plan.shard(*done[0].shards[-1])).unlink()  # deleted by hand
    side = Path(plan.shard(*done[1].shards[0])).with_suffix(".json")
    side.write_text(json.dumps({"prepared_sha256": "b" * 64}))  # computed from other data than its receipt says
    Path(plan.shard(*done[2].shards[0])).with_suffix(".json").unlink()  # a shard without its sidecar
    Path(plan.receipt(done[3].name)).write_text("{not json")  # a receipt cut short
    stale = [plan.receipt(b.name) for b in done[:4]]
    assert plan.stale_receipts() == stale
    said = io.StringIO()
    assert plan.drop_stale_receipts(said) == stale
    assert [Path(plan.receipt(b.name)).exists() for b in done] == [False] * 4 + [True] * 2
    assert said.getvalue().splitlines() == [f"banditrepro: batch {b.name} has a shard missing or incomplete: it "
                                            "runs again" for b in done[:4]]
    assert plan.stale_receipts() == [] and plan.drop_stale_receipts() == []


def test_rule_all_asks_for_the_receipts_of_every_batch_of_an_always_available_dataset(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = build_plan(_config(), ROOT)
    optional = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d)}
    assert optional and any(b.dataset in optional for b in plan.batches)  # the test config has one (yahoo30)
    assert plan.receipt_targets() == [plan.receipt(b.name) for b in plan.batches if b.dataset not in optional]


@pytest.mark.parametrize("minutes", [None, 20])
def test_estimate_counts_the_batches_the_receipt_check_runs_again(tmp_path, monkeypatch, minutes):
    """A shard deleted by hand after its batch ran: `banditrepro estimate` counts one batch to run, which is
    the one batch whose receipt the plan drops (then Snakemake runs it: its receipt is missing)."""
    monkeypatch.chdir(tmp_path)
    plan = build_plan(_config(batch_minutes=minutes), ROOT)
    for ds in {b.dataset for b in plan.batches}:
        Path(plan.layout.prepared_file(ds)).parent.mkdir(parents=True, exist_ok=True)
        Path(plan.layout.prepared_file(ds)).write_text(ds)
    for b in plan.batches:
        _finish(plan, b, batches.file_sha256(plan.layout.prepared_file(b.dataset)))
    assert estimate(plan)["batches"] == 0
    victim = plan.batches[len(plan.batches) // 2]
    Path(plan.shard(*victim.shards[0])).unlink()
    numbers = estimate(plan)
    assert numbers["batches"] == 1 and numbers["new_shards"] == 1
    assert plan.drop_stale_receipts() == [plan.receipt(victim.name)]
    assert estimate(plan)["batches"] == 1  # after the drop too (a dry run drops it: estimate agrees again)
