"""Helpers of the real-SLURM tests (tests/workflow/test_slurm*.py): a single-node SLURM, runs of the test
config through a copy of profiles/slurm, faults injected from outside (scancel, a shrunk time limit, scontrol
requeue, a second writer of a batch's shards, kill -9 of the main process), and what tells them apart
afterwards: the sbatch calls (a logging `sbatch` first on PATH), SLURM's job states (squeue keeps finished
jobs MinJobAge = 300 s), the shards log (one line per shard computed: shard, host, pid, SLURM job) and the
trace of a test-only hook (``PauseHook``).

A batch of the test config computes its shards in well under a second, faster than any fault can be aimed.
Shard leases used to give the tests a way to hold a batch in its middle (a live holder of the next shard's
claim); leases are gone (docs/decisions.md#content-addressing), so the hook does it instead: a
``sitecustomize`` on the runs' PYTHONPATH (SLURM passes the environment on to the jobs) wraps
``batches.compute_shard`` so that a job reaching an *armed* shard parks there, before computing it, until the
test releases it, as a batch on a slow node would. It also traces every spec a node reads
(``batches.read_spec``) and every shard computation's start, with times. The workflow's code is unchanged:
what is tested is what runs in production, paused."""

from __future__ import annotations

import hashlib
import json
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
    for tool in ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "munged"):
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
    """Jobs slurmctld still knows (finished ones too, for MinJobAge = 300 s): id, name, state, ..., start
    (the start of its latest run: a requeued job's restart)."""
    fields = ["id", "name", "state", "partition", "nodes", "comment", "limit", "start"]
    cmd = ["squeue", "--states=all", "--noheader", "--format=%i|%j|%T|%P|%N|%k|%l|%S"] + (["-j", job] if job else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    return [dict(zip(fields, ln.split("|"))) for ln in r.stdout.splitlines() if ln.strip()]


def job_state(env, job: str) -> str:
    return next((j["state"] for j in squeue(env, job)), "?")


def job_start(env, job: str) -> float:
    """Epoch seconds of the start of the job's latest run (squeue's %S, whole seconds)."""
    import datetime

    start = next(j["start"] for j in squeue(env, job))
    return datetime.datetime.fromisoformat(start).timestamp()


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
    """Every sbatch call so far: time (epoch s), job id, time limit (-t, minutes), comment (names the batch)."""
    path = Path(env["SBATCH_LOG"])
    out = []
    for line in path.read_text().splitlines() if path.exists() else []:
        when, jobid, args = line.split("\t", 2)
        argv = shlex.split(args)
        minutes = int(argv[argv.index("-t") + 1]) if "-t" in argv else None
        comment = next((a.split("=", 1)[1] for a in argv if a.startswith("--comment=")), None)
        if comment is None and "--comment" in argv:
            comment = argv[argv.index("--comment") + 1]
        out.append({"time": float(when), "id": jobid.split(";")[0].strip(), "minutes": minutes,
                    "comment": comment or "", "batch": batch_of(comment or "")})
    return out


def batch_of(comment: str) -> str | None:
    m = re.search(r"wildcards_batch=(\S+)", comment) or re.search(r"wildcards_(\S+)", comment)
    return m.group(1) if m else None


def shards_log(work: Path) -> list[tuple[str, str, str]]:
    """(shard, pid, SLURM job id or '-') of every line of the shards log."""
    path = work / SHARDS_LOG
    lines = path.read_text().splitlines() if path.exists() else []
    return [(ln.split()[0], ln.split()[2], ln.split()[3]) for ln in lines if ln.strip()]


def specs(work: Path) -> dict[str, dict]:
    """batch name -> its spec (rule batch_spec's <results>/batches/<batch>.json: what its node computes)."""
    return {p.stem: json.loads(p.read_text()) for p in (work / RESULTS / "batches").glob("*.json")}


_PLANNED = """
import json, sys
from pathlib import Path
from banditrepro.workflow.config import load_config
from banditrepro.workflow.plan import build_plan
root, profile, configfiles = Path(sys.argv[1]), Path(sys.argv[2]), [Path(f) for f in sys.argv[3:]]
p = build_plan(load_config(root, configfiles, [], profile), root, scan=False)
print(json.dumps({"batches": {b.name: [[p.shard(*s), p.shard_id(*s)] for s in b.shards] for b in p.batches},
                  "optional": sorted(d for d in p.catalog.datasets if p.catalog.is_optional(d))}))
"""


def planned_batches(profile: Path, configfiles=(TEST_CONFIG_FILE,)) -> tuple[dict[str, list[tuple[str, str]]],
                                                                             set[str]]:
    """The batches of a first run of a config through ``profile`` (what `banditrepro estimate` counts: the
    config as Snakemake builds it, the profile's cluster mode; no shard on disk): batch name -> its shards as
    (path under the run's folder, path under the results folder as the shards log writes it); and the optional
    datasets (probed by the run: their batches are submitted only if available)."""
    r = subprocess.run([sys.executable, "-c", _PLANNED, str(ROOT), str(profile), *map(str, configfiles)], cwd=ROOT,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                       timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    return {n: [tuple(s) for s in shards] for n, shards in got["batches"].items()}, set(got["optional"])


def always_there(batches: dict, optional: set[str]) -> list[str]:
    """The batches of datasets that need no probe (what a first run without the network submits)."""
    return [b for b in batches if b.rpartition("-")[0] not in optional]


_BY_HAND = """
import sys
from pathlib import Path
from banditrepro.workflow.batches import check_names, read_spec, run_batch
from banditrepro.workflow.config import load_config
from banditrepro.workflow.plan import build_plan
root, configfile, profile, name = sys.argv[1:5]
p = build_plan(load_config(Path(root), [Path(configfile)], [], Path(profile)), root)
batch = read_spec(p.layout.batch_spec(name), name)
check_names(p, batch)  # as a node does (jobs.simulate)
print(run_batch(p, batch, p.batch_prepared(name), None))
"""


def batch_by_hand(work: Path, profile: Path, batch: str) -> subprocess.Popen:
    """A second writer of ``batch``: its spec computed by hand in ``work`` (outside SLURM and Snakemake, with
    the workflow's batch body), as a user's second run of it would. Its output: the batch's log text."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BANDITREPRO_TEST_", "SLURM_"))}
    return subprocess.Popen([sys.executable, "-c", _BY_HAND, str(ROOT), str(TEST_CONFIG_FILE), str(profile), batch],
                            cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**env, "PYTHONPATH": str(ROOT / "src")})


# --------------------------------------------------------------------------------------------------------
# The test-only hook: armed shards a job parks at, and the trace of spec reads and shard computations

_SITECUSTOMIZE = '''"""Test-only (tests/workflow/slurm_harness.py, PauseHook): parks a job at an armed shard until
the test releases it, and traces spec reads and shard computations. Active only with BANDITREPRO_TEST_PAUSES."""
import os
import sys

_DIR = os.environ.get("BANDITREPRO_TEST_PAUSES")
_TARGET = "banditrepro.workflow.batches"


def _trace(event, **fields):
    import json
    import socket
    import time
    fields.update(event=event, time=time.time(), host=socket.gethostname(), pid=os.getpid(),
                  job=os.environ.get("SLURM_JOB_ID", "-"))
    fd = os.open(os.path.join(_DIR, "trace.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(fields) + "\\n").encode())
    finally:
        os.close(fd)


def _park(shard_id):
    """Park before computing an armed shard, once per SLURM job: the first job to reach it (or the same job
    again after a requeue) waits for its release; any later writer (a retry, a resumed run) goes on."""
    import hashlib
    import time
    point = os.path.join(_DIR, hashlib.sha256(shard_id.encode()).hexdigest()[:16])
    if not os.path.exists(point + ".armed") or os.path.exists(point + ".release"):
        return
    me = os.environ.get("SLURM_JOB_ID", "-")
    try:
        fd = os.open(point + ".paused", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, f"{os.getpid()} {me} {time.time()}\\n".encode())
        os.close(fd)
    except FileExistsError:
        with open(point + ".paused") as f:
            if f.read().split()[1] != me:
                return
    _trace("parked", shard=shard_id)
    while not os.path.exists(point + ".release"):
        time.sleep(0.05)
    _trace("released", shard=shard_id)


def _patch(module):
    compute_shard, read_spec = module.compute_shard, module.read_spec

    def traced_compute_shard(plan, shard, *args, **kwargs):
        shard_id = plan.shard_id(*shard)
        _park(shard_id)
        _trace("compute", shard=shard_id)
        return compute_shard(plan, shard, *args, **kwargs)

    def traced_read_spec(path, name, missing_ok=False):
        batch = read_spec(path, name, missing_ok)
        _trace("read_spec", caller=sys._getframe(1).f_code.co_name, path=str(path), batch=name,
               found=batch is not None, shards=len(batch.shards) if batch else None)
        return batch

    module.compute_shard, module.read_spec = traced_compute_shard, traced_read_spec


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name != _TARGET:
            return None
        from importlib.machinery import PathFinder
        spec = PathFinder.find_spec(name, path)
        if spec is not None:
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                _patch(module)

            spec.loader.exec_module = exec_module
        return spec


if _DIR:
    sys.meta_path.insert(0, _Finder())
'''


class PauseHook:
    """The hook's folder (its sitecustomize.py, the armed shards' files, the trace) under ``base``."""

    def __init__(self, base: Path):
        self.dir = base / "hook"
        self.dir.mkdir(parents=True)
        (self.dir / "sitecustomize.py").write_text(_SITECUSTOMIZE)

    def env(self, env: dict) -> dict:
        path = os.pathsep.join(p for p in (str(self.dir), env.get("PYTHONPATH", "")) if p)
        return {**env, "PYTHONPATH": path, "BANDITREPRO_TEST_PAUSES": str(self.dir)}

    def _point(self, shard_id: str) -> Path:
        return self.dir / hashlib.sha256(shard_id.encode()).hexdigest()[:16]

    def arm(self, shard_id: str) -> None:
        self._point(shard_id).with_suffix(".armed").write_text(shard_id + "\n")

    def parked(self, shard_id: str) -> dict | None:
        """The job parked at that shard (pid, SLURM job id, since when), or None."""
        try:
            pid, job, since = self._point(shard_id).with_suffix(".paused").read_text().split()
        except (FileNotFoundError, ValueError):  # not there, or being written
            return None
        return {"pid": int(pid), "job": job, "since": float(since)}

    def release(self, shard_id: str) -> None:
        self._point(shard_id).with_suffix(".release").write_text("")

    def trace(self) -> list[dict]:
        path = self.dir / "trace.jsonl"
        return [json.loads(ln) for ln in path.read_text().splitlines()] if path.exists() else []


def alive(pid: int) -> bool:
    """Whether a process of this host is running (not ended, not a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


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


def published_record(proj: Path) -> dict:
    """A folder's published.json without the sha256 of the files that hold measured seconds."""
    record = json.loads((proj / RESULTS / "published.json").read_text())
    for name, entry in record["files"].items():
        if Path(name).name in ("report.md", "runtime.csv"):
            entry.pop("sha256", None)
    return record


def assert_same_outputs(work: Path, local: Path) -> None:
    """Shards, prepared data, figure tables, claims, reproduction report and the publication record (every
    fixed path with the name of the store entry it was copied from) and summaries byte for byte; report.md but
    its run-time table."""
    results = work / RESULTS
    shards = files(work, f"{RESULTS}/cells", "runs*.npz")
    assert shards and shards == files(local, f"{RESULTS}/cells", "runs*.npz")
    prepared = files(work, "data/prepared", "*.json")
    assert prepared and prepared == files(local, "data/prepared", "*.json")
    tables = [p for p in files(work, f"{RESULTS}/tables", "*") if p.name != "runtime.csv"]
    assert tables and tables == [p for p in files(local, f"{RESULTS}/tables", "*") if p.name != "runtime.csv"]
    same_bytes = [*shards, *prepared, *tables]
    same_bytes += [Path(RESULTS) / f for f in ("claims.csv", "reproduction.md")]
    for rel in same_bytes:
        assert (work / rel).read_bytes() == (local / rel).read_bytes(), rel
    # published.json: the same fixed paths, each copied from a store entry of the same name, with the same bytes
    # but where a file holds measured seconds (report.md's run-time table, runtime.csv: their sha256 differ)
    assert published_record(work) == published_record(local)
    # a summary's .npz holds only numbers drawn from its runs (measured times: its .json sidecar)
    summaries = files(work, f"{RESULTS}/summaries", "*.npz")
    assert summaries and summaries == files(local, f"{RESULTS}/summaries", "*.npz")
    for rel in summaries:
        assert (work / rel).read_bytes() == (local / rel).read_bytes(), rel

    def without_runtimes(p):
        text = p.read_text()
        return text[:text.index("## Run time of the kernels")]
    assert without_runtimes(results / "report.md") == without_runtimes(local / RESULTS / "report.md")
    # no shard's temporary left (atomic writes, banditrepro/atomic.py: the faulted jobs were killed between
    # shards). kill -9 of the main process may leave one of a store entry it was writing: `banditrepro clean`
    # knows them (an interrupted write), and the entry itself is written again under its name
    assert not list((results / "cells").rglob(".*.part"))
