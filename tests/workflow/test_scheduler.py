"""banditrepro.workflow.scheduler: Snakemake starts a re-evaluation timer per scheduling pass and each timer
starts the next pass (56,000 passes for 432 jobs); the patch keeps one pending, daemon timer."""

import inspect
import threading
import time

from banditrepro.workflow.engine import coalesce_reevaluation_timers


class FakeScheduler:
    def __init__(self):
        self._open_jobs = threading.Semaphore(0)

    def _schedule_reevalutation(self, delay):
        raise AssertionError("not patched")


def test_one_pending_daemon_timer_wakes_the_scheduler_once():
    s = FakeScheduler()
    assert coalesce_reevaluation_timers(s)
    before = threading.active_count()
    for _ in range(100):  # 100 scheduling passes within one window
        s._schedule_reevalutation(0.05)
    assert threading.active_count() <= before + 1
    assert all(t.daemon for t in threading.enumerate() if isinstance(t, threading.Timer))
    assert s._open_jobs.acquire(timeout=2)  # the one timer wakes the scheduler once...
    time.sleep(0.2)
    assert not s._open_jobs.acquire(blocking=False)  # ...and only once
    s._schedule_reevalutation(0.01)  # once it fired, the next pass can start a new one
    assert s._open_jobs.acquire(timeout=2)


def test_other_internals_are_left_alone():
    assert not coalesce_reevaluation_timers(object())


def test_installed_snakemake_has_the_internals_the_patch_replaces():
    """Else every run is silently ~2x slower."""
    from snakemake.scheduling.job_scheduler import JobScheduler

    assert hasattr(JobScheduler, "_schedule_reevalutation")
    assert "self._open_jobs" in inspect.getsource(JobScheduler.__init__)


class FakeReady:
    def __init__(self, names):
        self.jobs = [type("Job", (), {"name": n})() for n in names]

    @property
    def open_jobs(self):
        return list(self.jobs)


def test_ready_data_jobs_are_offered_alone():
    from banditrepro.workflow.engine import data_jobs_first

    s = FakeReady(["simulate"] * 100 + ["prepare_dataset", "fetch_raw", "summarize_cell"])
    assert data_jobs_first(s)
    assert sorted(j.name for j in s.open_jobs) == ["fetch_raw", "prepare_dataset"]
    s.jobs = s.jobs[:100] + s.jobs[-1:]  # data done: every ready job again
    assert len(s.open_jobs) == 101
    s.jobs = []
    assert s.open_jobs == []  # empty exactly when nothing is ready (the scheduler's end condition)
    assert not data_jobs_first(object())


def test_installed_snakemake_reads_open_jobs_for_each_pass():
    from snakemake.scheduling.job_scheduler import JobScheduler

    assert isinstance(JobScheduler.open_jobs, property)
    assert "set(self.open_jobs)" in inspect.getsource(JobScheduler.schedule)
