"""The SLURM profile, and a real run of the whole test config through a single-node SLURM.

The SLURM tests start munged, slurmctld and slurmd on this machine (ci/slurm/start.sh, as root; Debian
packages `slurmctld slurmd slurm-client munge`), run the test config from download to report with
`--workflow-profile profiles/slurm` (only the partition changed), and check that only the simulation bins
went through sbatch (downloads, preparation, summaries, figures, claims and report are local rules) and
that every output equals a local run's: shards byte for byte, summaries but their measured wall times,
figure tables, claims and reproduction report byte for byte, report.md but its run-time table. They run
only when BANDITREPRO_SLURM_TEST=1 (.ci/run sets it after installing the packages); asked for but
impossible, they fail instead of skipping.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT.parent / "shared" / "data"
PROFILE = ROOT / "profiles" / "slurm"
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile")]
PARTITION = "ci"  # the CI cluster's partition; the profile's placeholder is replaced by it

CONFIG = ["--configfile", str(ROOT / ".test/config/config.yaml")]
RESULTS = "results/test"
SLURM_TIMEOUT = 420  # seconds: a guard against a hang; the run takes ~1 min on an idle 2-core machine

REQUESTED = os.environ.get("BANDITREPRO_SLURM_TEST") == "1"


def smk(*args, cwd=ROOT, timeout=600, env=None):
    return subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


# --------------------------------------------------------------------------------------------------------
# The profile itself (always run: no SLURM needed)


def test_profile_is_valid_and_every_job_gets_site_settings_and_rule_resources(tmp_path):
    """A dry-run through profiles/slurm: Snakemake 9 accepts every key, the executor is the SLURM plugin's,
    every job carries the profile's partition and the runtime/mem_mb its rule sets (not the fallbacks)."""
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    assert "slurm_partition" in profile["default-resources"]
    r = smk("-n", "--directory", str(tmp_path), "--workflow-profile", str(PROFILE), *CONFIG)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    jobs = re.findall(r"^rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", r.stdout, re.M)
    rules = {rule for rule, _ in jobs}
    assert rules >= {"fetch_raw", "prepare_dataset", "summarize_cell", "figure", "claims", "report_md"}
    # under the SLURM executor the shards come in bins (banditrepro/workflow/bins.py), far fewer than cells
    bins = [rule for rule, _ in jobs if rule.startswith("simulate_bin_")]
    assert 1 <= len(bins) <= 12 and "simulate" not in rules
    assert len(bins) < sum(rule == "summarize_cell" for rule, _ in jobs) / 5
    partition = profile["default-resources"]["slurm_partition"]
    for rule, res in jobs:
        assert f"slurm_partition={partition}" in res, (rule, res)
        assert re.search(r"\bmem_mb=\d+", res) and re.search(r"\bruntime=\d+", res), (rule, res)
    # resources come from the rules: e.g. a figure asks for more memory than the profile's fallback
    figure = next(res for rule, res in jobs if rule == "figure")
    assert int(re.search(r"\bmem_mb=(\d+)", figure).group(1)) > profile["default-resources"]["mem_mb"]


# --------------------------------------------------------------------------------------------------------
# A real single-node SLURM


def _requirements_missing() -> str | None:
    if os.geteuid() != 0:
        return "must run as root (slurmd starts the jobs)"
    for tool in ("slurmctld", "slurmd", "sbatch", "squeue", "munged"):
        if not (shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")):
            return f"'{tool}' not found (apt-get install slurmctld slurmd slurm-client munge)"
    if not MIRROR.is_dir():
        return f"offline data mirror {MIRROR} not present"
    return None


@pytest.fixture(scope="module")
def cluster():
    if not REQUESTED:
        pytest.skip("real-SLURM test: set BANDITREPRO_SLURM_TEST=1 (needs root and the Debian packages "
                    "slurmctld slurmd slurm-client munge; .ci/run does this)")
    missing = _requirements_missing()
    if missing:
        pytest.fail(f"BANDITREPRO_SLURM_TEST=1 but {missing}")
    state = Path(tempfile.mkdtemp(prefix="brslurm-", dir="/tmp"))  # short path: the munge socket lives here
    env = {**os.environ, "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/sbin",
           "BANDITREPRO_SLURM_PARTITION": PARTITION}
    try:
        r = subprocess.run(["bash", str(ROOT / "ci/slurm/start.sh"), str(state)], capture_output=True,
                           text=True, timeout=120, env=env)
        assert r.returncode == 0, f"SLURM did not start:\n{r.stdout}\n{r.stderr}"
        yield {**env, "SLURM_CONF": str(state / "slurm.conf")}
    finally:
        r = subprocess.run(["bash", str(ROOT / "ci/slurm/stop.sh"), str(state), "--remove"],
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, f"SLURM daemons did not stop:\n{r.stdout}\n{r.stderr}"


def _squeue(env) -> list[dict]:
    """Every job slurmctld still knows (MinJobAge=300 s keeps finished ones): id, name, state, ..."""
    fields = ["id", "name", "state", "partition", "nodes", "comment"]
    r = subprocess.run(["squeue", "--states=all", "--noheader", "--format=%i|%j|%T|%P|%N|%k"],
                       capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    return [dict(zip(fields, ln.split("|"))) for ln in r.stdout.splitlines() if ln.strip()]


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    base = tmp_path_factory.mktemp("slurm")
    profile = base / "profile"
    profile.mkdir()
    settings = yaml.safe_load((PROFILE / "config.yaml").read_text())
    settings["default-resources"]["slurm_partition"] = PARTITION  # what a site edits
    (profile / "config.yaml").write_text(yaml.safe_dump(settings))
    work = base / "work"
    before = {j["id"] for j in _squeue(cluster)}
    # No slurmdbd here, so no sacct: poll squeue (MinJobAge 300 s >= 3 x 5 s). The plugin ignores SIGTERM
    # while polling; `timeout -s INT` makes a stuck run cancel its jobs and exit.
    cmd = ["timeout", "-s", "INT", "-k", "30", str(SLURM_TIMEOUT), *SNAKEMAKE,
           "--directory", str(work), "--workflow-profile", str(profile),
           "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "5",
           "--slurm-keep-successful-logs", *CONFIG]
    start = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=SLURM_TIMEOUT + 60, env=cluster)
    out = r.stdout + r.stderr
    took = time.monotonic() - start
    assert r.returncode == 0, f"SLURM run failed (exit {r.returncode}) after {took:.0f} s:\n{out[-6000:]}"
    print(f"SLURM run: {took:.0f} s")
    jobs = [j for j in _squeue(cluster) if j["id"] not in before]
    return work, out, jobs


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    if not REQUESTED:
        pytest.skip("only needed by the real-SLURM test")
    work = tmp_path_factory.mktemp("local")
    r = smk("--directory", str(work), "--workflow-profile", str(ROOT / "profiles/default"), "--cores", "2", *CONFIG)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return work


def test_only_the_simulation_bins_went_through_sbatch(slurm_run):
    work, out, jobs = slurm_run
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+)", out)
    ours = [j for j in jobs if j["id"] in submitted]
    assert len(ours) == len(submitted) and 1 <= len(submitted) <= 12, jobs
    assert len({j["name"] for j in ours}) == 1  # the plugin names every job by the run's UUID
    for j in ours:
        assert (j["state"], j["partition"], j["nodes"]) == ("COMPLETED", PARTITION, "localhost"), j
        assert re.match(r"rule_simulate_bin_\d+_\d+", j["comment"]), j
    # everything else ran on the submitting host
    local = set(re.findall(r"^localrule (\w+):", out, re.M))
    assert {"fetch_raw", "prepare_dataset", "summarize_cell", "figure", "claims", "report_md"} <= local
    # each bin's SLURM log shows its one job running on the node, in one Snakemake process
    logs = sorted((work / ".snakemake/slurm_logs").rglob("*.log"))
    assert {p.stem for p in logs} == set(submitted)
    for p in logs:
        text = p.read_text()
        assert len(re.findall(r"^localrule simulate_bin_\d+_\d+:", text, re.M)) == 1, p
        assert "1 of 1 steps (100%) done" in text, p


def test_outputs_equal_those_of_a_local_run(slurm_run, local_run):
    work = slurm_run[0]
    results = work / RESULTS

    def files(root, folder, pattern):  # relative paths under root/folder
        return sorted(p.relative_to(root) for p in (root / folder).rglob(pattern) if p.is_file())

    shards = files(work, f"{RESULTS}/cells", "runs*.npz")
    assert shards and shards == files(local_run, f"{RESULTS}/cells", "runs*.npz")
    same_bytes = [*shards, *files(work, "data/prepared", "*.json")]
    same_bytes += [Path(RESULTS) / f for f in ("claims.csv", "reproduction.md")]
    same_bytes += [p for p in files(work, f"{RESULTS}/tables", "*") if p.name != "runtime.csv"]
    for rel in same_bytes:
        assert (work / rel).read_bytes() == (local_run / rel).read_bytes(), rel
    # summaries: the same arrays, except the measured wall times (read from the non-deterministic sidecars)
    summaries = sorted((results / "summaries").rglob("*.npz"))
    assert len(summaries) == len(list((local_run / RESULTS / "summaries").rglob("*.npz")))
    for path in summaries:
        rel = path.relative_to(work)
        with np.load(path) as a, np.load(local_run / rel) as b:
            assert sorted(a.files) == sorted(b.files), rel
            for key in a.files:
                if key != "wall_seconds":
                    assert np.array_equal(a[key], b[key]), (rel, key)
    # the report: equal but for its run-time table (measured seconds)
    def without_runtimes(p):
        text = p.read_text()
        return text[:text.index("## Run time of the kernels")]
    assert without_runtimes(results / "report.md") == without_runtimes(local_run / RESULTS / "report.md")


def test_a_local_run_finds_the_clusters_shards_up_to_date(slurm_run):
    """Bins and the per-shard rule record the same things for a shard (banditrepro/workflow/bins.py), so
    the cluster's results are up to date for a local run in the same folder: nothing reruns."""
    work = slurm_run[0]
    r = smk("-n", "--directory", str(work), "--workflow-profile", str(ROOT / "profiles/default"), *CONFIG)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "Nothing to be done" in out, out[-3000:]
