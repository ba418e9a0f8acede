"""A SLURM run on a machine without SLURM fails fast with one line (banditrepro.workflow.cluster): before any
job, within 10 output lines, naming SLURM, what is missing and where to read; a dry run warns and continues."""

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from banditrepro.workflow.cluster import README_SECTION, check_executor, executor_problem, missing_tools
from tests.workflow.common import ROOT, TEST_CONFIG, smk

NO_TOOLS = {}.get  # a `which` that finds nothing


def test_only_slurm_needs_its_tools():
    assert missing_tools("local", which=NO_TOOLS) == []
    assert missing_tools(None, which=NO_TOOLS) == []
    assert missing_tools("slurm", which=NO_TOOLS) == ["sbatch", "sacct"]
    assert missing_tools("slurm", "squeue", which=NO_TOOLS) == ["sbatch", "squeue"]
    assert missing_tools("slurm", which={"sbatch": "/x", "sacct": "/y"}.get) == []


def test_problem_line_names_slurm_the_tools_and_the_readme():
    line = executor_problem("slurm", which={"sacct": "/y"}.get)
    assert "SLURM" in line and "sbatch" in line and "sacct" not in line and README_SECTION in line
    assert "\n" not in line


def test_real_run_exits_and_dry_run_warns(capsys):
    wf = SimpleNamespace(remote_exec=False)
    args = SimpleNamespace(executor="slurm", slurm_status_command=None, dryrun=False)
    with pytest.raises(SystemExit) as exc:
        check_executor(wf, args, which=NO_TOOLS)
    assert "SLURM" in str(exc.value.code)
    args.dryrun = True
    assert check_executor(wf, args, which=NO_TOOLS)
    assert "warning" in capsys.readouterr().err
    assert check_executor(SimpleNamespace(remote_exec=True), args, which=NO_TOOLS) is None  # a node: no check
    assert check_executor(wf, SimpleNamespace(executor="local", dryrun=False), which=NO_TOOLS) is None


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
    r = smk("--directory", str(tmp_path / "w"), "--workflow-profile", str(ROOT / "profiles/slurm"),
            "--configfile", str(ROOT / TEST_CONFIG), env=no_slurm_path, timeout=120)
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) <= 10, lines
    named = [ln for ln in lines if "SLURM" in ln]
    assert len(named) == 1 and "sbatch" in named[0] and "Running on a cluster" in named[0], lines
    assert not (tmp_path / "w" / ".snakemake" / "slurm_logs").exists()  # nothing was submitted


@pytest.mark.workflow
def test_slurm_dry_run_without_slurm_warns_and_continues(tmp_path, no_slurm_path):
    r = smk("-n", "--directory", str(tmp_path / "w"), "--workflow-profile", str(ROOT / "profiles/slurm"),
            "--configfile", str(ROOT / TEST_CONFIG), env=no_slurm_path, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "warning" in out and "SLURM" in out and "Job stats" in out


@pytest.mark.workflow
def test_local_runs_are_not_checked(tmp_path, no_slurm_path):
    r = smk("-n", "--directory", str(tmp_path / "w"), "--configfile", str(ROOT / TEST_CONFIG),
            env=no_slurm_path, timeout=300)
    assert r.returncode == 0 and "SLURM" not in r.stdout + r.stderr
    assert os.environ.get("PATH")  # the parent's PATH untouched
