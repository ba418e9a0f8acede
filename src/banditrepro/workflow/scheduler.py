"""One pending re-evaluation timer instead of a growing swarm (measured: 56,000 scheduling passes for 432 jobs).

Snakemake's scheduler ends every scheduling pass by starting a threading.Timer that wakes it again after the
rate-limit window (`max-jobs-per-timespan`, 1 s by default). The pass that timer wakes starts another timer,
and every finished job wakes one more pass, which starts its own: after n finished jobs n timer chains cycle
once a second each, and every pass re-scores the ready jobs. With the default config's 432 jobs in ~4 min that
was ~56,000 passes and as many thread starts, most of Snakemake's main-thread CPU. One pending timer gives the
same guarantee (the scheduler looks again within the window; finished jobs wake it anyway), so the run's
scheduler gets this coalescing version; its timer is a daemon, so the process never waits for it at exit.
Applied from `onstart` (the scheduler exists then, no job has run) through banditrepro/workflow/engine.py: if a
future Snakemake renames these internals nothing is patched, one warning line says so and the run is only
slower — tests/workflow/test_scheduler.py fails then (docs/decisions.md#engine-internals).
"""

from __future__ import annotations

import threading


def coalesce_reevaluation_timers(scheduler) -> bool:
    """Make ``scheduler`` keep at most one pending re-evaluation timer; False if its internals differ."""
    if not (hasattr(scheduler, "_schedule_reevalutation") and hasattr(scheduler, "_open_jobs")):
        return False
    pending = threading.Lock()  # held while a timer is pending

    def wake():
        pending.release()
        scheduler._open_jobs.release()

    def schedule_reevaluation(delay):
        # none pending: start one; else the pending one will wake the scheduler in time
        if pending.acquire(blocking=False):
            timer = threading.Timer(delay, wake)
            timer.daemon = True
            timer.start()

    scheduler._schedule_reevalutation = schedule_reevaluation
    return True


# Rules whose jobs a first run needs before most cells can start (docs/decisions.md#kernel-cache).
DATA_RULES = frozenset({"fetch_raw", "probe_dataset", "prepare_dataset"})


def data_jobs_first(scheduler) -> bool:
    """While any data job is ready, let a scheduling pass see only the ready data jobs.

    With ``scheduler-subsample`` a pass looks at 10 random ready jobs; once a few datasets are prepared, the
    remaining fetches and preparations are a few among a hundred ready batches: in a measured first run the last
    one ended 232 s after the start (13 s with this change). Data jobs take about a second each. Offering them
    alone while any is ready starts them at the next free core; the set a pass sees is empty exactly when the
    ready set is. False (nothing patched) if Snakemake's internals differ.
    """
    cls = type(scheduler)
    prop = getattr(cls, "open_jobs", None)
    if not isinstance(prop, property) or prop.fget is None:
        return False
    ready = prop.fget

    def open_jobs(self):
        jobs = ready(self)
        data = [job for job in jobs if getattr(job, "name", None) in DATA_RULES]
        return data or jobs

    scheduler.__class__ = type(cls.__name__, (cls,), {"open_jobs": property(open_jobs), "__module__": __name__})
    return True
