"""A quiet run with one progress line, and one line per failure that says why.

The default profile silences Snakemake's per-job blocks (`quiet: [rules, host]`; the default config printed
36,000 lines). ``attach`` (from `onstart`) adds a handler to Snakemake's logger, in its own process, that
drops the per-job chatter and prints instead:

- every ~10 s: done/total jobs, elapsed, an estimate of what is left;
- per failed job: its rule, outputs and log, and the log's last line (the one-line reason, e.g. "checksum
  mismatch for raw file ..."); its traceback, if any, still follows;
- after Ctrl-C, as the run's last line: that it was interrupted and how to resume (Snakemake's own last
  word is "WorkflowError: At least one job did not complete successfully").

Both touch Snakemake internals (``output_settings``, ``remote_exec``, log record attributes): the Snakefile
calls them through banditrepro/workflow/engine.py, so a renamed one costs a warning line, never the run.

``drop_repeated_stats`` (parse time) removes the second copy of the job table a quiet dry run prints:
Snakemake prints the table before and after a dry run unless `quiet` is exactly {rules, progress}.
`--quiet progress` (or `--quiet all`) silences the line too; BANDITREPRO_PROGRESS=0 restores Snakemake's own.
"""

from __future__ import annotations

import logging
import os
import sys
import time

PREFIX = "banditrepro: "
INTERRUPTED = ("run interrupted; run the same command again to resume (finished jobs are kept, "
               "half-written outputs are redone)")

# what the line replaces: two lines per scheduling pass and three per finished job
_CHATTER = ("Select jobs to execute", "Execute ")
_REPLACED = {"progress", "job_finished"}


def _event(record) -> str:
    return str(getattr(record, "event", "")).rsplit(".", 1)[-1].lower()


def clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def last_line(paths, limit: int = 300) -> str:
    """The last non-empty line of the first readable log among ``paths`` ('' if none), shortened."""
    for p in paths:
        try:
            with open(p, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 8192))
                lines = [ln.strip() for ln in f.read().decode(errors="replace").splitlines() if ln.strip()]
        except OSError:
            continue
        if lines:
            line = lines[-1]
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def _files(record, key) -> list[str]:
    value = getattr(record, key, None) or []
    value = [value] if isinstance(value, str) else list(value)
    return [str(v).strip() for v in value]


class ProgressLine(logging.Handler):
    EVERY = 10.0  # seconds between lines

    def __init__(self, stream=None):
        super().__init__(level=logging.INFO)
        self.stream = stream
        self.t0 = time.monotonic()  # onstart: the DAG is built, jobs are about to start
        self.last = 0.0
        self.interrupted = False

    def _write(self, text: str) -> None:
        out = self.stream or sys.stderr
        out.write(PREFIX + text + "\n")
        out.flush()

    def emit(self, record):
        try:
            event = _event(record)
            if event == "progress":
                self.progress(int(record.done), int(record.total))
            elif event == "job_error":
                self.job_error(record)
            elif str(record.msg).startswith("Terminating processes on user request"):
                self.interrupted = True
            elif self.interrupted and record.levelno >= logging.ERROR and "did not complete" in str(record.msg):
                self._write(INTERRUPTED)
            elif record.levelno >= logging.ERROR and "KeyboardInterrupt" in str(record.msg):
                # Ctrl-C while Snakemake evaluates input functions (a DAG update after a checkpoint): it
                # reports an InputFunctionException wrapping the interrupt and stops there
                self._write(INTERRUPTED)
        except Exception:  # progress output must never break a run
            pass

    def job_error(self, record) -> None:
        logs = _files(record, "log")
        line = (f"job failed: rule {getattr(record, 'rule_name', '?')}; output "
                f"{', '.join(_files(record, 'output')) or '-'}; log {', '.join(logs) or '-'}")
        reason = last_line(logs)
        self._write(f"{line}: {reason}" if reason else line)

    def progress(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self.last < self.EVERY and done > 0:
            return
        self.last = now
        elapsed = now - self.t0
        left = f", about {clock(elapsed / done * (total - done))} left" if 0 < done < total else ""
        pct = 100 * done // max(total, 1)
        self._write(f"{done}/{total} jobs done ({pct} %), {clock(elapsed)} elapsed{left}")


def no_chatter(record) -> bool:
    try:
        return _event(record) not in _REPLACED and not str(record.msg).startswith(_CHATTER)
    except Exception:  # a record of another shape: pass it (docs/decisions.md#engine-internals)
        return True


def _quiet_profile(workflow) -> bool:
    """The default profile's quiet mode (`quiet: [rules, host]`) without --quiet progress/all."""
    from snakemake.settings.enums import Quietness

    quiet = set(workflow.output_settings.quiet or ())
    return Quietness.RULES in quiet and Quietness.PROGRESS not in quiet and Quietness.ALL not in quiet


def attach(workflow, logger=None) -> bool:
    """From `onstart`: the progress handler on Snakemake's logger, in the quiet profile only, never in a
    cluster job step or with BANDITREPRO_PROGRESS=0. True if attached (now or before)."""
    if logger is None:
        from snakemake.logging import logger
    if os.environ.get("BANDITREPRO_PROGRESS", "1") == "0" or workflow.remote_exec or not _quiet_profile(workflow):
        return False
    if not any(isinstance(h, ProgressLine) for h in logger.handlers):
        for h in logger.handlers:
            h.addFilter(no_chatter)
        logger.addHandler(ProgressLine())
    return True


class RepeatedStats(logging.Filter):
    """Passes the first job table (a RUN_INFO record with stats) and drops an identical later one."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def filter(self, record) -> bool:
        try:
            if _event(record) != "run_info" or getattr(record, "stats", None) is None:
                return True
            text = str(record.msg)
        except Exception:  # a record of another shape: pass it (docs/decisions.md#engine-internals)
            return True
        if text in self.seen:
            return False
        self.seen.add(text)
        return True


def drop_repeated_stats(workflow, logger=None) -> bool:
    """At parse time, in the quiet profile: the job table of a dry run once, not twice."""
    if logger is None:
        from snakemake.logging import logger
    if workflow.remote_exec or not _quiet_profile(workflow):
        return False
    f = RepeatedStats()
    for h in logger.handlers:
        h.addFilter(f)
    return True


__all__ = ["ProgressLine", "RepeatedStats", "attach", "drop_repeated_stats", "last_line"]
