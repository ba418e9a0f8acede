"""Every contact of the workflow with Snakemake itself: what it reads, checks and patches, each behind a soft accessor.

Two kinds of contact with the engine (docs/decisions.md#engine-internals, #cluster-mode):

- a public setting: cluster mode is the SLURM profile's ``set-resources: simulate: batch_minutes: N``, a
  resource of rule ``simulate`` that no ``--configfile`` or ``--config`` of a user replaces. Snakemake hands
  it to the workflow (``workflow.resource_settings.overwrite_resources``) and to every job step it spawns
  (``--set-resources``), so the main process and a cluster node plan the same batches;
- the submit-host check: cluster mode on a machine without ``sbatch`` stops in ``onstart`` with one line;
- internals: the scheduler's re-evaluation timers and data-first offering (below) and the quiet profile's
  progress line and log filters (banditrepro/workflow/progress.py). A Snakemake release may rename them; then
  the run goes on unpatched (slower, or with Snakemake's own output) after one warning line.

``soft`` is the one place that turns a missing attribute into that line; ``at_parse`` and ``at_start`` are
what the Snakefile calls at parse time and from ``onstart``.
"""

from __future__ import annotations

import shutil
import sys
import threading

from banditrepro.workflow import progress
from banditrepro.workflow.config import (
    RULE,
    SETTING,
    apply_cluster_mode,  # noqa: F401 - the config's one merge, re-exported
    minutes_from_resources,
)

PREFIX = "banditrepro: warning: "

_warned: set[str] = set()  # one line per internal and process


def warn(what: str, effect: str, exc: BaseException | None = None, stream=None) -> None:
    """One line, once per ``what`` in this process."""
    if what in _warned:
        return
    _warned.add(what)
    reason = f" ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})" if exc is not None else ""
    (stream or sys.stderr).write(f"{PREFIX}Snakemake internal {what} not found{reason}; {effect}\n")


def soft(what: str, effect: str, fn, *args, default=None, false_is_missing=False, **kwargs):
    """``fn(*args, **kwargs)``; if it raises (an internal renamed, a type changed), or returns False with
    ``false_is_missing`` (a patch that found its internals missing): one warning line and ``default``.
    Never raises an Exception."""
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 -- any change of an internal must leave the run going
        warn(what, effect, exc)
        return default
    if result is False and false_is_missing:
        warn(what, effect)
        return default
    return result


# --- cluster mode: a public setting ---------------------------------------------------------------------


def profile_minutes(workflow) -> float | None:
    """The resource setting of the running workflow (None if not set). If Snakemake no longer exposes
    ``resource_settings.overwrite_resources``: one warning line, and cluster mode is the config's alone."""
    def read():
        return minutes_from_resources(workflow.resource_settings.overwrite_resources)

    try:
        return read()
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001
        warn("workflow.resource_settings.overwrite_resources",
             f"cluster mode ({RULE}:{SETTING}) is read from the config only", exc)
        return None


# --- cluster mode without SLURM: one line, before any job ---------------------------------------------------
# Without this, `snakemake --workflow-profile profiles/slurm` on a laptop printed 7,055 lines of sacct errors.
# The check runs in ``onstart``, which Snakemake calls only when jobs are about to run (never in a dry run, never
# in a job step on a node), so a dry run without SLURM shows the plan and a real run stops before its first job.

README_SECTION = 'README section "Running on a cluster"'


def submit_problem(config: dict, which=shutil.which) -> str | None:
    """One line naming SLURM, what is missing and where to read, or None."""
    if config.get("batch_minutes") is None or which("sbatch") is not None:
        return None
    return ("cluster mode is set (batch_minutes, from the SLURM profile's set-resources or the config) but sbatch "
            "is not on PATH: "
            f"no SLURM here; see {README_SECTION} (run without the SLURM profile to compute locally)")


def check_submit_host(config: dict, which=shutil.which) -> None:
    """``onstart``: stop the run with one line (exit 1) before any job when cluster mode has no SLURM."""
    line = submit_problem(config, which)
    if line:
        sys.exit(f"banditrepro: {line}")


# --- the scheduler: one pending re-evaluation timer, data jobs first ----------------------------------------
# Snakemake's scheduler ends every scheduling pass by starting a threading.Timer that wakes it again after the
# rate-limit window (`max-jobs-per-timespan`, 1 s by default). The pass that timer wakes starts another timer,
# and every finished job wakes one more pass, which starts its own: after n finished jobs n timer chains cycle
# once a second each, and every pass re-scores the ready jobs (measured: 56,000 scheduling passes for 432 jobs,
# most of Snakemake's main-thread CPU). One pending timer gives the same guarantee (the scheduler looks again
# within the window; finished jobs wake it anyway); its timer is a daemon, so the process never waits for it at
# exit. tests/workflow/test_scheduler.py fails if a Snakemake release renames these internals
# (docs/decisions.md#engine-internals).

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


# --- internals -------------------------------------------------------------------------------------------


def at_parse(workflow) -> None:
    """Parse time: a quiet dry run prints its job table once (progress.drop_repeated_stats)."""
    soft("output_settings / logger handlers", "a quiet dry run may print its job table twice",
         progress.drop_repeated_stats, workflow)


def _coalesce(workflow):
    return coalesce_reevaluation_timers(workflow.scheduler)


def _data_first(workflow):
    return data_jobs_first(workflow.scheduler)


def at_start(workflow, config: dict) -> None:
    """``onstart``: cluster mode without SLURM stops here (one line, exit 1); then the soft patches."""
    check_submit_host(config)
    soft("output_settings / logger handlers", "Snakemake's own progress output instead of the progress line",
         progress.attach, workflow)
    soft("workflow.scheduler._schedule_reevalutation / _open_jobs",
         "scheduler not patched (one re-evaluation timer per finished job: slower, same results)", _coalesce,
         workflow, false_is_missing=True)
    soft("scheduler class property open_jobs", "data jobs not offered first (a first run waits longer for its data)",
         _data_first, workflow, false_is_missing=True)


__all__ = ["apply_cluster_mode", "at_parse", "at_start", "check_submit_host", "coalesce_reevaluation_timers",
           "data_jobs_first", "minutes_from_resources", "profile_minutes", "soft", "submit_problem", "warn"]
