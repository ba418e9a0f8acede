"""Everything the workflow reads from or patches in Snakemake itself, each behind a soft accessor.

Two kinds of contact with the engine (docs/decisions.md#engine-internals, #cluster-mode):

- a public setting: cluster mode is the SLURM profile's ``set-resources: simulate: batch_minutes: N``, a
  resource of rule ``simulate`` that no ``--configfile`` or ``--config`` of a user replaces. Snakemake hands
  it to the workflow (``workflow.resource_settings.overwrite_resources``) and to every job step it spawns
  (``--set-resources``), so the main process and a cluster node plan the same batches;
- internals: the scheduler's re-evaluation timers (banditrepro/workflow/scheduler.py) and the quiet
  profile's progress line and log filters (banditrepro/workflow/progress.py). A Snakemake release may rename
  them; then the run goes on unpatched (slower, or with Snakemake's own output) after one warning line.

``soft`` is the one place that turns a missing attribute into that line; ``at_parse`` and ``at_start`` are
what the Snakefile calls at parse time and from ``onstart``.
"""

from __future__ import annotations

import sys

from banditrepro.workflow import cluster, progress, scheduler

PREFIX = "banditrepro: warning: "
RULE = "simulate"  # the rule whose resource carries the batch size
SETTING = "batch_minutes"

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


def minutes_from_resources(overwrite_resources) -> float | None:
    """``batch_minutes`` of rule simulate from Snakemake's --set-resources mapping ({rule: {name: value}},
    values Snakemake ``Resource`` objects or plain numbers), or None. ValueError on a value not a number."""
    rule = (overwrite_resources or {}).get(RULE) or {}
    if SETTING not in rule:
        return None
    value = rule[SETTING]
    raw = getattr(value, "raw", value)  # a Resource keeps what was written (20, or "0.5": an expression)
    try:
        minutes = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"--set-resources {RULE}:{SETTING}={raw!r} is not a number of minutes") from None
    if not minutes > 0:
        raise ValueError(f"--set-resources {RULE}:{SETTING}={raw!r} must be > 0")
    return int(minutes) if minutes == int(minutes) else minutes


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


def apply_cluster_mode(config: dict, minutes: float | None) -> dict:
    """Cluster mode into ``config`` (in place): a batch_minutes the config sets (not null) wins, as a
    user's explicit size; else the profile's resource. The deprecated ``job_minutes`` counts as set."""
    if minutes is not None and config.get(SETTING) is None and config.get("job_minutes") is None:
        config[SETTING] = minutes
    return config


# --- internals -------------------------------------------------------------------------------------------


def at_parse(workflow) -> None:
    """Parse time: a quiet dry run prints its job table once (progress.drop_repeated_stats)."""
    soft("output_settings / logger handlers", "a quiet dry run may print its job table twice",
         progress.drop_repeated_stats, workflow)


def _coalesce(workflow):
    return scheduler.coalesce_reevaluation_timers(workflow.scheduler)


def _data_first(workflow):
    return scheduler.data_jobs_first(workflow.scheduler)


def at_start(workflow, config: dict) -> None:
    """``onstart``: cluster mode without SLURM stops here (one line, exit 1); then the soft patches."""
    cluster.check_submit_host(config)
    soft("output_settings / logger handlers", "Snakemake's own progress output instead of the progress line",
         progress.attach, workflow)
    soft("workflow.scheduler._schedule_reevalutation / _open_jobs",
         "scheduler not patched (one re-evaluation timer per finished job: slower, same results)", _coalesce,
         workflow, false_is_missing=True)
    soft("scheduler class property open_jobs", "data jobs not offered first (a first run waits longer for its data)",
         _data_first, workflow, false_is_missing=True)


__all__ = ["apply_cluster_mode", "at_parse", "at_start", "minutes_from_resources", "profile_minutes", "soft",
           "warn"]
