"""Cluster mode on a machine without SLURM fails fast with one line (banditrepro.workflow.engine): before any
job, within 10 output lines, naming SLURM, what is missing and where to read; a dry run shows its plan."""

import os
import sys
from pathlib import Path

import pytest

from banditrepro.workflow.engine import README_SECTION, check_submit_host, submit_problem
from tests.workflow.common import ROOT, TEST_CONFIG, smk

NO_TOOLS = {}.get  # a `which` that finds nothing
PROFILE = ROOT / "profiles/slurm"


def test_only_cluster_mode_needs_sbatch():
    assert submit_problem({"batch_minutes": None}, which=NO_TOOLS) is None
    assert submit_problem({}, which=NO_TOOLS) is None
    assert submit_problem({"batch_minutes": 20}, which={"sbatch": "/x"}.get) is None
    line = submit_problem({"batch_minutes": 20}, which=NO_TOOLS)
    assert "SLURM" in line and "sbatch" in line and README_SECTION in line and "\n" not in line


def test_the_onstart_check_exits_with_the_line():
    with pytest.raises(SystemExit) as exc:
        check_submit_host({"batch_minutes": 20}, which=NO_TOOLS)
    assert str(exc.value.code).startswith("banditrepro: ") and "sbatch" in str(exc.value.code)
    check_submit_host({"batch_minutes": None}, which=NO_TOOLS)  # local: nothing to check


@pytest.fixture
def no_slurm_path(tmp_path):
    """This PATH's commands without SLURM's (so the test means the same on a machine with SLURM)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    slurm = {"sbatch", "sacct", "squeue", "srun", "scancel", "sinfo", "scontrol", "salloc"}
    for folder in [str(Path(sys.executable).parent), *os.environ.get("PATH", "").split(os.pathsep)]:
        for exe in Path(folder).glob("*") if Path(folder).is_dir() else ():
            if exe.name not in slurm and not (bin_dir / exe.name).exists():
                (bin_dir / exe.name).symlink_to(exe)
    return {"PATH": str(bin_dir)}


@pytest.mark.workflow
def test_slurm_profile_without_slurm_fails_fast(tmp_path, no_slurm_path):
    # a --configfile of one's own keeps the profile's cluster mode (docs/decisions.md#cluster-mode)
    r = smk("--directory", str(tmp_path / "w"), "--workflow-profile", str(PROFILE),
            "--configfile", str(ROOT / TEST_CONFIG), env=no_slurm_path, timeout=300)
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    # Snakemake's banner and job table, then our line, last (onstart: before any job)
    assert r.returncode != 0 and "banditrepro: cluster mode" in lines[-1], lines[-10:]
    named = [ln for ln in lines if "sbatch" in ln]
    assert named == lines[-1:] and "SLURM" in named[0] and "Running on a cluster" in named[0], lines
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "w" / ".snakemake" / "slurm_logs").exists()  # nothing was submitted
    assert not (tmp_path / "w" / "data").exists()  # and no job ran, not even a local one


@pytest.mark.workflow
def test_slurm_dry_run_without_slurm_shows_its_plan(tmp_path, no_slurm_path):
    r = smk("-n", "--directory", str(tmp_path / "w"), "--workflow-profile", str(PROFILE),
            "--configfile", str(ROOT / TEST_CONFIG), env=no_slurm_path, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "Job stats" in out and "sbatch" not in out


@pytest.mark.workflow
def test_local_runs_are_not_checked(tmp_path, no_slurm_path):
    r = smk("-n", "--directory", str(tmp_path / "w"), "--configfile", str(ROOT / TEST_CONFIG),
            env=no_slurm_path, timeout=300)
    assert r.returncode == 0 and "SLURM" not in r.stdout + r.stderr
    assert os.environ.get("PATH")  # the parent's PATH untouched
