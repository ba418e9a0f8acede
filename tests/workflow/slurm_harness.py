"""Helpers of the real-SLURM tests (tests/workflow/test_slurm*.py): a single-node SLURM, runs of the test
config through a copy of profiles/slurm, faults injected from outside (scontrol requeue, a shrunk time limit,
claims left by other hosts, kill -9 of the main process), and what tells them apart afterwards: the sbatch
calls (a logging `sbatch` first on PATH), SLURM's job states (squeue keeps finished jobs MinJobAge = 300 s),
the jobs' SLURM logs and the shards log (one line per shard computed: shard, host, pid, SLURM job)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT.parent / "shared" / "data"
PROFILE = ROOT / "profiles" / "slurm"
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile")]
PARTITION = "ci"  # the CI cluster's partition; the profile's placeholder is replaced by it
RESULTS = "results/test"
SHARDS_LOG = f"{RESULTS}/logs/shards-computed.log"
# a config of one's own: the profile's cluster mode (its set-resources) stays on (docs/decisions.md#cluster-mode)
TEST_CONFIG_FILE = ROOT / ".test/config/config.yaml"
CONFIG = ["--configfile", str(TEST_CONFIG_FILE)]
# the profile's batch size: set-resources simulate:batch_minutes
BATCH_MINUTES = yaml.safe_load((PROFILE / "config.yaml").read_text())["set-resources"]["simulate"]["batch_minutes"]
LOCAL_CONFIG = ["--configfile", str(ROOT / ".test/config/config.yaml")]
REQUESTED = os.environ.get("BANDITREPRO_SLURM_TEST") == "1"
RUN_TIMEOUT = 300  # seconds: a guard against a hang, far above one run (~1-2 min on 2 busy cores)


def smk(*args, cwd=ROOT, timeout=600, env=None):
    return subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def requirements_missing() -> str | None:
    if os.geteuid() != 0:
        return "must run as root (slurmd starts the jobs)"
    for tool in ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "munged"):
        if not (shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")):
            return f"'{tool}' not found (apt-get install slurmctld slurmd slurm-client munge)"
    if not MIRROR.is_dir():
        return f"offline data mirror {MIRROR} not present"
    return None


@contextmanager
def single_node_slurm():
    """ci/slurm/start.sh in a short temporary folder (the munge socket lives there); yields the environment
    of the runs: SLURM_CONF, and a logging sbatch first on PATH (SBATCH_LOG: one line per call)."""
    state = Path(tempfile.mkdtemp(prefix="brslurm-", dir="/tmp"))
    env = {**os.environ, "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/sbin",
           "BANDITREPRO_SLURM_PARTITION": PARTITION}
    try:
        r = subprocess.run(["bash", str(ROOT / "ci/slurm/start.sh"), str(state)], capture_output=True,
                           text=True, timeout=120, env=env)
        assert r.returncode == 0, f"SLURM did not start:\n{r.stdout}\n{r.stderr}"
        wrapper = state / "bin"
        wrapper.mkdir()
        real = shutil.which("sbatch", path=env["PATH"])
        # the plugin feeds the job script on stdin: the command substitution passes it through
        (wrapper / "sbatch").write_text(
            "#!/bin/bash\n# test-only: log every submission (time, job id, arguments), then the real sbatch\n"
            f'out=$({shlex.quote(real)} "$@"); rc=$?\n'
            'printf "%s\\t%s\\t%s\\n" "$(date +%s.%N)" "$out" "$*" >>"$SBATCH_LOG"\n'
            'echo "$out"; exit $rc\n')
        (wrapper / "sbatch").chmod(0o755)
        yield {**env, "SLURM_CONF": str(state / "slurm.conf"), "PATH": f"{wrapper}:{env['PATH']}"}
    finally:
        r = subprocess.run(["bash", str(ROOT / "ci/slurm/stop.sh"), str(state), "--remove"],
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, f"SLURM daemons did not stop:\n{r.stdout}\n{r.stderr}"


def squeue(env, job: str | None = None) -> list[dict]:
    """Jobs slurmctld still knows (finished ones too, for MinJobAge = 300 s): id, name, state, ..."""
    fields = ["id", "name", "state", "partition", "nodes", "comment", "limit"]
    cmd = ["squeue", "--states=all", "--noheader", "--format=%i|%j|%T|%P|%N|%k|%l"] + (["-j", job] if job else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    return [dict(zip(fields, ln.split("|"))) for ln in r.stdout.splitlines() if ln.strip()]


def job_state(env, job: str) -> str:
    return next((j["state"] for j in squeue(env, job)), "?")


def slurm(env, *cmd) -> None:
    r = subprocess.run(list(cmd), capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, (cmd, r.stderr)


def make_profile(base: Path) -> Path:
    """profiles/slurm with only the partition changed (what a site edits)."""
    profile = base / "profile"
    profile.mkdir(parents=True)
    settings = yaml.safe_load((PROFILE / "config.yaml").read_text())
    settings["default-resources"]["slurm_partition"] = PARTITION
    (profile / "config.yaml").write_text(yaml.safe_dump(settings))
    return profile


def cluster_command(work: Path, profile: Path) -> list[str]:
    # No slurmdbd here, so no sacct: poll squeue (MinJobAge 300 s >= 3 x 5 s).
    return [*SNAKEMAKE, "--directory", str(work), "--workflow-profile", str(profile),
            "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "5",
            "--slurm-keep-successful-logs", *CONFIG]


def run_cluster(cmd, env, timeout=RUN_TIMEOUT) -> tuple[subprocess.CompletedProcess, float]:
    # The plugin ignores SIGTERM while polling; `timeout -s INT` makes a stuck run cancel its jobs and exit.
    start = time.monotonic()
    r = subprocess.run(["timeout", "-s", "INT", "-k", "30", str(timeout), *cmd], cwd=ROOT, capture_output=True,
                       text=True, timeout=timeout + 60, env=env)
    return r, time.monotonic() - start


def submissions(env) -> list[dict]:
    """Every sbatch call so far: job id, time limit (-t, minutes), comment (names the batch)."""
    path = Path(env["SBATCH_LOG"])
    out = []
    for line in path.read_text().splitlines() if path.exists() else []:
        _, jobid, args = line.split("\t", 2)
        argv = shlex.split(args)
        minutes = int(argv[argv.index("-t") + 1]) if "-t" in argv else None
        comment = next((a.split("=", 1)[1] for a in argv if a.startswith("--comment=")), None)
        if comment is None and "--comment" in argv:
            comment = argv[argv.index("--comment") + 1]
        out.append({"id": jobid.split(";")[0].strip(), "minutes": minutes, "comment": comment or ""})
    return out


def batch_of(comment: str) -> str | None:
    m = re.search(r"wildcards_batch=(\S+)", comment) or re.search(r"wildcards_(\S+)", comment)
    return m.group(1) if m else None


def shards_log(work: Path) -> list[tuple[str, str]]:
    """(shard, SLURM job id or '-') of every line of the shards log."""
    path = work / SHARDS_LOG
    lines = path.read_text().splitlines() if path.exists() else []
    return [(ln.split()[0], ln.split()[3]) for ln in lines if ln.strip()]


def receipts(work: Path) -> dict[str, list[str]]:
    """batch name -> its shards, from the receipts of the finished batches."""
    import json

    return {p.stem: json.loads(p.read_text())["shards"] for p in (work / RESULTS / "batches").glob("*.json")}


def planned_batches() -> dict[str, list[tuple[str, str]]]:
    """batch name -> its shards (path under the run's folder, path under the cells folder as the shards log
    writes it), as the workflow plans the test config in cluster mode."""
    import json

    code = ("import json, yaml; from banditrepro.workflow.plan import build_plan; "
            f"cfg = {{**yaml.safe_load(open({str(TEST_CONFIG_FILE)!r})), 'batch_minutes': {BATCH_MINUTES!r}}}; "
            "p = build_plan(cfg, '.', scan=False); print(json.dumps({b.name: [(p.shard(*s), p.shard_relpath(*s)) "
            "for s in b.shards] for b in p.batches}))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=120)
    assert r.returncode == 0, r.stderr
    return {name: [tuple(s) for s in shards] for name, shards in json.loads(r.stdout).items()}


def hold_claim(work: Path, shard: str) -> subprocess.Popen:
    """A live process holding ``shard``'s claim (workflow/shard_claims.py), renewing it: a batch reaching that
    shard waits for it, having finished the shards before it, until the holder ends (``end_holder``)."""
    from tests.workflow.common import hold_claim as hold

    return hold(work / shard)


def end_holder(p: subprocess.Popen) -> None:
    """SIGTERM: the holder releases its claim and exits (as a stopped batch does)."""
    from tests.workflow.common import end_holder as end

    end(p)


def plant_claim(work: Path, shard: str, host: str, slurm_job: str | None = None, age: float = 0.0) -> None:
    """A claim as a holder on ``host`` left it ``age`` seconds ago (file-system time) and no longer renews (a
    run killed on another login node or in another container; a batch's run before SLURM requeued it)."""
    import json
    from dataclasses import asdict

    from banditrepro.workflow.shard_claims import Holder, claim_path, fs_now

    claim = claim_path(work / shard)
    claim.parent.mkdir(parents=True, exist_ok=True)
    claim.write_text(json.dumps(asdict(Holder(host, 4242, slurm_job, time.time(), "planted"))))
    left = fs_now(claim) - age
    os.utime(claim, (left, left))


def slurm_logs(work: Path) -> str:
    """The SLURM logs of the run's jobs (--slurm-keep-successful-logs), concatenated."""
    return "".join(p.read_text(errors="replace") for p in sorted((work / ".snakemake").rglob("*.log"))
                   if "slurm_logs" in p.parts)


def wait_for(predicate, timeout: float, what: str, poll: float = 0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = predicate()
        if got:
            return got
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def kill9(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


# --------------------------------------------------------------------------------------------------------
# Comparing a run's outputs with the local reference run's


def files(root: Path, folder: str, pattern: str) -> list[Path]:
    return sorted(p.relative_to(root) for p in (root / folder).rglob(pattern) if p.is_file())


def assert_same_outputs(work: Path, local: Path) -> None:
    """Shards, prepared data, figure tables, claims and reproduction report byte for byte; summaries but
    their measured wall times; report.md but its run-time table."""
    results = work / RESULTS
    shards = files(work, f"{RESULTS}/cells", "runs*.npz")
    assert shards and shards == files(local, f"{RESULTS}/cells", "runs*.npz")
    same_bytes = [*shards, *files(work, "data/prepared", "*.json")]
    same_bytes += [Path(RESULTS) / f for f in ("claims.csv", "reproduction.md")]
    same_bytes += [p for p in files(work, f"{RESULTS}/tables", "*") if p.name != "runtime.csv"]
    for rel in same_bytes:
        assert (work / rel).read_bytes() == (local / rel).read_bytes(), rel
    summaries = sorted((results / "summaries").rglob("*.npz"))
    assert len(summaries) == len(list((local / RESULTS / "summaries").rglob("*.npz")))
    for path in summaries:
        rel = path.relative_to(work)
        with np.load(path) as a, np.load(local / rel) as b:
            assert sorted(a.files) == sorted(b.files), rel
            for key in a.files:
                if key != "wall_seconds":
                    assert np.array_equal(a[key], b[key]), (rel, key)

    def without_runtimes(p):
        text = p.read_text()
        return text[:text.index("## Run time of the kernels")]
    assert without_runtimes(results / "report.md") == without_runtimes(local / RESULTS / "report.md")
    # no claim left behind by a killed batch
    assert not list((results / "cells").rglob("*.claim*"))
