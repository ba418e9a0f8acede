"""Fail fast when the SLURM executor is chosen on a machine without SLURM.

Without this, `snakemake --workflow-profile profiles/slurm` on a laptop printed 7,055 lines of sacct errors
and a dry run said nothing. Snakemake 9 picks the executor after it parsed the workflow
(``workflow.executor_plugin`` is still None at parse time and is set in ``Workflow.execute``), so the check
reads the command line Snakemake itself parsed, profiles applied: the ``args`` of ``snakemake.cli.
args_to_api``, which parses the Snakefile further down its call stack. Called through the Python API
instead, there is no such frame and nothing is checked.
"""

from __future__ import annotations

import shutil
import sys

README_SECTION = 'README section "Running on a cluster"'


def cli_args():
    """The argparse namespace of the running `snakemake` command (profiles applied), or None."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "args_to_api" and "snakemake" in frame.f_code.co_filename:
            return frame.f_locals.get("args")
        frame = frame.f_back
    return None


def missing_tools(executor: str | None, status_command: str | None = None, which=shutil.which) -> list[str]:
    """Commands the executor needs that are not on PATH: sbatch, and the status command (sacct by default)."""
    if executor != "slurm":
        return []
    return [t for t in ("sbatch", status_command or "sacct") if which(t) is None]


def executor_problem(executor: str | None, status_command: str | None = None, which=shutil.which) -> str | None:
    """One line naming SLURM, what is missing and where to read, or None."""
    missing = missing_tools(executor, status_command, which)
    if not missing:
        return None
    return (f"the SLURM executor is selected (profiles/slurm or --executor slurm) but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not on PATH: no SLURM here; see {README_SECTION} "
            "(run without the SLURM profile to compute locally)")


def check_executor(workflow, args=None, which=shutil.which, stderr=None) -> str | None:
    """At parse time, before any job: a missing SLURM stops the run with one line (exit 1); in a dry run the
    line is a warning and the dry run continues. Returns the line, if any."""
    if workflow.remote_exec:  # a job step on a node: the main process checked
        return None
    args = args if args is not None else cli_args()
    if args is None:
        return None
    status = getattr(args, "slurm_status_command", None)  # unset: a dataclasses.MISSING sentinel
    line = executor_problem(getattr(args, "executor", None), status if isinstance(status, str) else None, which)
    if line is None:
        return None
    if getattr(args, "dryrun", False):
        (stderr or sys.stderr).write(f"banditrepro: warning: {line}\n")
        return line
    sys.exit(f"banditrepro: {line}")


LOCAL_EXECUTORS = (None, "local", "dryrun", "touch")


def submits_jobs(workflow, args=None) -> bool:
    """Whether this Snakemake process submits its jobs to a cluster (or runs on a node for one): then the
    missing shards are packed into bins (banditrepro/workflow/bins.py). Read from the command line, like
    ``check_executor``; a job step on a node says so itself (``workflow.remote_exec``)."""
    if workflow.remote_exec:
        return True
    args = args if args is not None else cli_args()
    return args is not None and getattr(args, "executor", None) not in LOCAL_EXECUTORS
