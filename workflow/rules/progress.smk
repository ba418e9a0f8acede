# A quiet run with one progress line. The default profile silences Snakemake's per-job blocks
# (`quiet: [rules, host]`; the default config printed 36,000 lines); this handler, attached to
# Snakemake's logger in its own process, drops the per-job progress chatter and turns the scheduler's
# progress events into one line every ~10 s — done/total jobs, elapsed, an estimate of what is left —
# and each failed job into one line naming its rule, outputs and log (its traceback still follows).
# `--quiet progress` (or `--quiet all`) silences the line too; BANDITREPRO_PROGRESS=0 restores
# Snakemake's own progress lines.
import logging
import time


class _ProgressLine(logging.Handler):
    EVERY = 10.0  # seconds between lines

    def __init__(self):
        super().__init__(level=logging.INFO)
        self.t0 = time.monotonic()  # onstart: the DAG is built, jobs are about to start
        self.last = 0.0

    @staticmethod
    def _clock(seconds):
        m, s = divmod(int(round(seconds)), 60)
        h, m = divmod(m, 60)
        return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"

    def emit(self, record):
        try:
            event = str(getattr(record, "event", ""))
            if event.endswith("PROGRESS") or event == "progress":
                self._progress(int(record.done), int(record.total))
            elif event.endswith("JOB_ERROR") or event == "job_error":
                sys.stderr.write(
                    f"banditrepro: job failed: rule {getattr(record, 'rule_name', '?')}; output "
                    f"{self._files(record, 'output')}; log {self._files(record, 'log')}\n"
                )
        except Exception:  # progress output must never break a run
            pass

    @staticmethod
    def _files(record, key):
        value = getattr(record, key, None) or []
        value = [value] if isinstance(value, str) else list(value)
        return ", ".join(str(v).strip() for v in value) or "-"

    def _progress(self, done, total):
        now = time.monotonic()
        if done < total and now - self.last < self.EVERY and done > 0:
            return
        self.last = now
        elapsed = now - self.t0
        left = (
            f", about {self._clock(elapsed / done * (total - done))} left"
            if 0 < done < total
            else ""
        )
        pct = 100 * done // max(total, 1)
        sys.stderr.write(
            f"banditrepro: {done}/{total} jobs done ({pct} %), {self._clock(elapsed)} elapsed{left}\n"
        )
        sys.stderr.flush()


# what the line replaces: two lines per scheduling pass and three per finished job
_CHATTER = ("Select jobs to execute", "Execute ")
_REPLACED = {"progress", "job_finished"}


def _no_chatter(record):
    event = str(getattr(record, "event", "")).rsplit(".", 1)[-1].lower()
    return event not in _REPLACED and not str(record.msg).startswith(_CHATTER)


def attach_progress_line():
    """Called from `onstart` (Snakefile): Snakemake sets up its logger after parsing, removing handlers.
    Only in the default profile's quiet mode (`quiet: [rules, host]`), never in a cluster job step.
    """
    from snakemake.logging import logger as smk_logger
    from snakemake.settings.enums import Quietness

    quiet = set(workflow.output_settings.quiet or ())
    if os.environ.get("BANDITREPRO_PROGRESS", "1") == "0" or workflow.remote_exec:
        return
    if (
        Quietness.RULES not in quiet
        or Quietness.PROGRESS in quiet
        or Quietness.ALL in quiet
    ):
        return
    if not any(type(h).__name__ == "_ProgressLine" for h in smk_logger.handlers):
        for h in smk_logger.handlers:
            h.addFilter(_no_chatter)
        smk_logger.addHandler(_ProgressLine())
