"""Fail fast when cluster mode is chosen on a machine without SLURM.

Without this, `snakemake --workflow-profile profiles/slurm` on a laptop printed 7,055 lines of sacct errors.
Cluster mode is ``batch_minutes`` set: by profiles/slurm (``set-resources: simulate: batch_minutes``, which
no --configfile or --config of a user replaces; banditrepro/workflow/engine.py, docs/decisions.md#cluster-mode)
or by the config. The check runs in the workflow's ``onstart``
handler, which Snakemake calls only when jobs are about to run (never in a dry run, never in a job step on
a node), so a dry run without SLURM shows the plan and a real run stops before its first job.
"""

from __future__ import annotations

import shutil
import sys

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
