"""The quiet profile's output (banditrepro.workflow.progress): progress lines, a failed job's reason beside its
failure line, the interrupt note as the last word, and a dry run's job table once."""

import io
import logging

from snakemake_interface_logger_plugins.common import LogEvent

from banditrepro.workflow.progress import INTERRUPTED, ProgressLine, RepeatedStats, last_line, no_chatter


def record(msg="", level=logging.INFO, **extra):
    r = logging.LogRecord("snakemake", level, __file__, 1, msg, None, None)
    r.__dict__.update(extra)
    return r


def test_failed_job_line_carries_the_logs_last_line(tmp_path):
    log = tmp_path / "prepare.log"
    log.write_text("reading raw files\nbanditrepro: checksum mismatch for raw file data/raw/x/y.txt\n\n")
    out = io.StringIO()
    ProgressLine(out).emit(record(event=LogEvent.JOB_ERROR, rule_name="prepare_dataset",
                                  output=["data/prepared/x.json"], log=[str(log)]))
    line = out.getvalue()
    assert line.count("\n") == 1 and "rule prepare_dataset" in line and str(log) in line
    assert line.rstrip().endswith("checksum mismatch for raw file data/raw/x/y.txt")


def test_failed_job_without_a_log_still_gets_one_line(tmp_path):
    out = io.StringIO()
    ProgressLine(out).emit(record(event=LogEvent.JOB_ERROR, rule_name="figure", output="a.png",
                                  log=[str(tmp_path / "missing.log")]))
    assert out.getvalue().count("\n") == 1 and "rule figure" in out.getvalue()


def test_last_line_is_shortened():
    assert last_line([]) == ""


def test_interrupt_note_follows_the_workflow_error():
    out = io.StringIO()
    h = ProgressLine(out)
    error = record("WorkflowError:\nAt least one job did not complete successfully.", level=logging.ERROR)
    h.emit(error)
    assert out.getvalue() == ""  # a failed job without Ctrl-C: no note
    h.emit(record("Terminating processes on user request, this might take some time."))
    h.emit(error)
    assert out.getvalue().strip().endswith(INTERRUPTED)


def test_interrupt_inside_an_input_function_gets_the_note_too():
    """Ctrl-C during a DAG update (input functions re-evaluated after a checkpoint) ends in Snakemake's
    InputFunctionException wrapping KeyboardInterrupt, without "Terminating processes"."""
    out = io.StringIO()
    h = ProgressLine(out)
    h.emit(record("InputFunctionException in rule simulate in file simulate.smk, line 21:\nError:\n"
                  "  KeyboardInterrupt: \nWildcards:\n  last=1", level=logging.ERROR))
    assert out.getvalue().strip().endswith(INTERRUPTED)
    other = io.StringIO()
    ProgressLine(other).emit(record("InputFunctionException in rule simulate:\n  KeyError: 'x'", level=logging.ERROR))
    assert other.getvalue() == ""


def test_progress_lines_are_rate_limited():
    out = io.StringIO()
    h = ProgressLine(out)
    for done in range(0, 51):
        h.emit(record(event=LogEvent.PROGRESS, done=done, total=50))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("banditrepro: 0/50 jobs done") and lines[-1].startswith("banditrepro: 50/50")
    assert len(lines) == 2


def test_chatter_is_dropped():
    assert not no_chatter(record("Select jobs to execute..."))
    assert not no_chatter(record(event=LogEvent.JOB_FINISHED))
    assert no_chatter(record("Building DAG of jobs..."))


def test_repeated_job_table_is_dropped_once():
    f = RepeatedStats()
    table = record("Job stats:\njob  count\nall  1", event=LogEvent.RUN_INFO, stats={"all": 1})
    assert f.filter(table) and not f.filter(table)
    assert f.filter(record("Job stats:\nother", event=LogEvent.RUN_INFO, stats={"x": 1}))
    assert f.filter(record("Nothing to be done", event=LogEvent.RUN_INFO))
