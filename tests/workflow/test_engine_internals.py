"""Snakemake internals the workflow touches fail soft (docs/decisions.md#engine-internals): each one removed,
the patches warn once, raise nothing, and a real run completes (banditrepro/workflow/engine.py)."""

import io
import logging
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from banditrepro.workflow import engine, progress
from tests.workflow.common import NARROWED_SHARDS, ROOT, SUBSET, TEST_CONFIG, TEST_RESULTS, shards_computed, smk

RENAMED = Path(__file__).with_name("renamed_internals.py")


class Warned:
    def __init__(self, capsys):
        self.capsys = capsys
        self.text = ""

    def getvalue(self) -> str:
        self.text += self.capsys.readouterr().err
        return self.text


@pytest.fixture
def warnings(monkeypatch, capsys):
    """What engine warns (stderr), on a fresh once-per-process memory."""
    monkeypatch.setattr(engine, "_warned", set())
    return Warned(capsys)


class Scheduler:
    """The internals scheduler.py patches, as Snakemake 9 has them."""

    def __init__(self):
        self._open_jobs = threading.Semaphore(0)

    def _schedule_reevalutation(self, delay):
        raise AssertionError("unpatched")

    @property
    def open_jobs(self):
        return []


def scheduler_with(**attrs):
    """A stand-in scheduler holding only ``attrs`` (and Snakemake's ``open_jobs`` property)."""
    sched = type("Bare", (), {"open_jobs": property(lambda self: [])})()
    for name, value in attrs.items():
        setattr(sched, name, value)
    return sched


def quiet():
    from snakemake.settings.enums import Quietness

    return SimpleNamespace(quiet={Quietness.RULES, Quietness.HOST})


def workflow(**parts):
    base = dict(output_settings=quiet(), remote_exec=True, scheduler=Scheduler())  # remote: no handler added
    base.update(parts)
    return SimpleNamespace(**{k: v for k, v in base.items() if v is not None})


def test_the_intact_internals_are_patched_without_a_word(warnings):
    wf = workflow()
    engine.at_parse(wf)
    engine.at_start(wf, {"batch_minutes": None})
    assert warnings.getvalue() == ""
    wf.scheduler._schedule_reevalutation(10)  # the coalescing version: starts a daemon timer, no AssertionError


@pytest.mark.parametrize("missing", ["_schedule_reevalutation", "_open_jobs"])
def test_a_scheduler_internal_missing_warns_once_and_leaves_it_unpatched(warnings, missing):
    present = {"_open_jobs": threading.Semaphore(0), "_schedule_reevalutation": lambda delay: None}
    present.pop(missing)
    sched = scheduler_with(**present)
    for _ in range(2):
        engine.at_start(workflow(scheduler=sched), {"batch_minutes": None})
    assert warnings.getvalue().count("\n") == 1 and "_schedule_reevalutation" in warnings.getvalue()
    assert warnings.getvalue().startswith(engine.PREFIX)


def test_the_workflows_scheduler_missing_warns_once(warnings):
    wf = workflow()
    del wf.scheduler
    engine.at_start(wf, {})
    engine.at_start(wf, {})
    lines = warnings.getvalue().splitlines()  # one per scheduler patch (timers, data jobs first), once each
    assert len(lines) == 2 and all("scheduler" in ln for ln in lines)


def test_a_scheduler_without_the_open_jobs_property_warns_once_and_keeps_its_order(warnings):
    sched = Scheduler()
    sched.__class__ = type("NoProperty", (), {"_schedule_reevalutation": Scheduler._schedule_reevalutation})
    for _ in range(2):
        engine.at_start(workflow(scheduler=sched), {"batch_minutes": None})
    assert warnings.getvalue().count("\n") == 1 and "open_jobs" in warnings.getvalue()
    assert type(sched).__name__ == "NoProperty"  # left unpatched


@pytest.mark.parametrize("missing", ["output_settings", "remote_exec"])
def test_a_missing_workflow_setting_costs_the_progress_filters_one_line(warnings, missing):
    wf = workflow(remote_exec=False)
    delattr(wf, missing)
    engine.at_parse(wf)  # parse time: must not fail the parse
    engine.at_start(wf, {})
    assert warnings.getvalue().count("\n") == 1 and "output_settings" in warnings.getvalue()


def test_a_quiet_setting_of_another_shape_warns_once(warnings):
    engine.at_parse(workflow(output_settings=SimpleNamespace(quiet=42), remote_exec=False))
    assert warnings.getvalue().count("\n") == 1


def test_the_submit_check_is_not_softened(warnings, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sbatch
    with pytest.raises(SystemExit, match="sbatch"):  # cluster mode without SLURM still stops the run
        engine.at_start(workflow(), {"batch_minutes": 20})


def test_log_records_of_another_shape_pass_the_filters():
    bare = SimpleNamespace()  # no msg, no event, no levelno
    assert progress.no_chatter(bare) is True
    assert progress.RepeatedStats().filter(bare) is True
    line = progress.ProgressLine(stream=io.StringIO())
    line.emit(bare)
    record = logging.LogRecord("snakemake", logging.INFO, "", 0, "x", None, None)
    record.event, record.done = "progress", "many"  # a field of another type
    line.emit(record)
    assert line.stream.getvalue() == ""


def test_a_soft_call_returns_the_default_and_passes_the_result():
    assert engine.soft("x", "y", lambda: 3) == 3
    assert engine.soft("x", "y", lambda: False) is False
    assert engine.soft("x-false", "y", lambda: False, false_is_missing=True, default="d") == "d"


@pytest.mark.workflow
def test_a_run_completes_on_a_snakemake_with_the_internals_renamed(narrowed_reference, tmp_path):
    """renamed_internals.py: Snakemake's source with `_schedule_reevalutation`, `_open_jobs` and
    `output_settings` renamed; a fresh run of the narrowed test config (46 shards in batches, summaries,
    figures, claims, report) completes, each patch says once that it was skipped, and its claims and tables are
    byte for byte those of the session's narrowed reference (tests/conftest.py), run by the intact Snakemake."""
    work = tmp_path / "w"
    r = smk("--directory", str(work), "--configfile", str(ROOT / TEST_CONFIG), "--cores", "2", "--config", *SUBSET,
            f"results_dir={TEST_RESULTS}", snakefile=ROOT / "Snakefile", timeout=900,
            runner=[sys.executable, str(RENAMED)])
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    warned = [ln for ln in out.splitlines() if ln.startswith(engine.PREFIX)]
    assert len(warned) == 2, warned
    assert any("output_settings" in ln for ln in warned) and any("_open_jobs" in ln for ln in warned)
    assert (work / TEST_RESULTS / "claims.csv").is_file()
    assert len(shards_computed(work / TEST_RESULTS)) == NARROWED_SHARDS
    here, fresh = work / TEST_RESULTS, narrowed_reference / TEST_RESULTS
    published = [Path("claims.csv"), *(p.relative_to(fresh) for p in sorted((fresh / "tables").rglob("*"))
                                        if p.is_file() and p.name != "runtime.csv")]
    assert len(published) > 10
    assert [str(p) for p in published if (here / p).read_bytes() != (fresh / p).read_bytes()] == []
