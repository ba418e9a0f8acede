"""The rules' input functions (banditrepro/workflow/inputs.py) on a plan of the test config, with a stand-in for
Snakemake's checkpoints: nothing past the summaries is listed, nor its key accepted, before the optional
datasets' probes ran; after them, only under the names the probes gave (issue 43, point 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from banditrepro import ReproError
from banditrepro.workflow.inputs import Inputs
from banditrepro.workflow.plan import build_plan
from tests.workflow.common import ROOT, test_config_dict


class Incomplete(Exception):
    """What Snakemake raises from ``checkpoints.<rule>.get`` before the checkpoint ran."""


class Probes:
    """``checkpoints`` with one checkpoint, probe_dataset, whose jobs have run once ``ran`` is set."""

    def __init__(self, layout):
        self.layout, self.ran, self.asked = layout, False, []

    @property
    def probe_dataset(self):
        return self

    def get(self, dataset):
        self.asked.append(dataset)
        if not self.ran:
            raise Incomplete(dataset)
        return type("Job", (), {"output": [self.layout.status_file(dataset)]})()


@pytest.fixture
def first_run(tmp_path, monkeypatch):
    """A plan of C2B's figures (Yahoo30 is optional) in an empty folder: no probe verdict yet."""
    monkeypatch.chdir(tmp_path)
    plan = build_plan(test_config_dict(papers=["c2b"], challengers=["rmed2"]), ROOT)
    return plan, Probes(plan.layout)


def probe_ran(plan, probes, available: bool) -> None:
    for dataset in plan.optional_datasets():
        path = Path(plan.layout.status_file(dataset))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"dataset": dataset, "available": available, "reason": "offline"}))
    probes.ran = True


def test_nothing_past_the_summaries_is_listed_before_the_probes_ran(first_run):
    plan, probes = first_run
    inputs = Inputs(plan, probes)
    assert plan.optional_datasets() == ["yahoo30"]
    board = plan.names.leaderboard["c2b"]
    for ask in (lambda: inputs.published(), lambda: inputs.report(plan.names.report),
                lambda: inputs.claims(plan.names.claims), lambda: inputs.leaderboard("c2b", board)):
        with pytest.raises(Incomplete):
            ask()
    assert set(probes.asked) == {"yahoo30"}
    # the summaries (what `all` asks first) need no probe: the simulation starts at once
    assert inputs.first() == plan.runtime_inputs()


def test_after_the_probes_every_job_reads_by_the_names_they_gave_and_an_earlier_name_is_refused(first_run):
    plan, probes = first_run
    inputs = Inputs(plan, probes)
    before = (plan.names.claims, plan.names.report, dict(plan.names.leaderboard))
    probe_ran(plan, probes, available=False)
    targets = inputs.published()
    assert (plan.names.claims, plan.names.report) != before[:2], "the probe's verdict is in the names"
    assert plan.store.claims_csv in targets and plan.store.report_md in targets
    report = inputs.report(plan.names.report)
    assert report["claims"] == plan.store.claims_csv and before[0] not in report["claims"]
    assert report["leaderboards"] == [plan.store.leaderboard("c2b", "csv")]
    assert before[2]["c2b"] not in report["leaderboards"][0]
    for ask in (lambda: inputs.report(before[1]), lambda: inputs.claims(before[0]),
                lambda: inputs.leaderboard("c2b", before[2]["c2b"])):
        with pytest.raises(ReproError, match="in this plan, not"):
            ask()


def test_split_runs_ask_for_an_optional_datasets_batches_only_where_its_probe_found_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = build_plan(test_config_dict(papers=["c2b"], runs=3, first_run=2), ROOT)
    probes = Probes(plan.layout)
    inputs = Inputs(plan, probes)
    yahoo = [b for b in plan.batches if b.dataset == "yahoo30"]
    assert yahoo and inputs.published() == []
    with pytest.raises(Incomplete):
        inputs.first()
    probe_ran(plan, probes, available=False)
    first = inputs.first()
    assert not {plan.batch_done(b.name) for b in yahoo} & set(first)
    assert {plan.batch_done(b.name) for b in plan.batches if b.dataset != "yahoo30"} <= set(first)
    probe_ran(plan, probes, available=True)
    assert {plan.batch_done(b.name) for b in yahoo} <= set(inputs.first())
