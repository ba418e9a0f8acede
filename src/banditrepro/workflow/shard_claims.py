"""Who is computing a shard: one claim file per shard, so two batches never compute the same shard at once.

Two processes can hold the same batch: after the main Snakemake process is killed (``kill -9``, a closed
login session) its queued and running SLURM jobs go on unsupervised, and the same command run again submits
the same batches. Before computing a shard, a batch creates ``<shard>.claim`` with ``O_CREAT | O_EXCL``
(atomic on local and NFS v3+ file systems) holding its host, pid, SLURM job id and the time. A batch that
finds a claim: skips the shard if it is complete; waits while the holder is alive (same host: its pid; else
its SLURM job still in ``squeue``; else the claim younger than ``MAX_AGE``); takes the claim over from a
dead holder (killed, cancelled, timed out). The claim is removed once the shard's ``.npz`` is written.

Every shard computed appends one line ``<shard> <host> <pid> <slurm job or ->`` to the shards log
(``Layout.shards_log``; the shard relative to the cells folder), one ``O_APPEND`` write per line, so tests can
show that no shard was computed twice.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

POLL_SECONDS = 5.0
# a claim whose holder cannot be checked (another host, no squeue) counts as live this long: far more than
# a shard's work (about shard_seconds, 5 s by default; a batch's limit is 3 x its estimate + 5 min)
MAX_AGE = 6 * 3600.0
# squeue states of a job that may still write (every other state, or no such job, is a dead holder)
LIVE_STATES = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING",
               "REQUEUE_HOLD", "REQUEUE_FED", "STAGE_OUT", "SIGNALING", "STOPPED"}


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    slurm_job: str | None
    time: float

    @classmethod
    def me(cls) -> Holder:
        return cls(socket.gethostname(), os.getpid(), os.environ.get("SLURM_JOB_ID") or None, time.time())

    def line(self, shard: str) -> str:
        return f"{shard} {self.host} {self.pid} {self.slurm_job or '-'}\n"


def claim_path(shard: str | Path) -> Path:
    return Path(f"{shard}.claim")


def read_holder(claim: Path) -> Holder | None:
    """The claim's holder; None if the claim is gone. An unreadable claim (a holder killed while writing
    its few bytes) counts as a dead holder's."""
    try:
        text = claim.read_text()
    except FileNotFoundError:
        return None
    try:
        d = json.loads(text)
        return Holder(str(d["host"]), int(d["pid"]), d.get("slurm_job"), float(d["time"]))
    except (ValueError, KeyError, TypeError):
        return Holder("?", -1, None, 0.0)


def pid_alive(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():  # our own pid on our host: a dead process's pid given to us
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def slurm_job_alive(job: str, run=subprocess.run) -> bool | None:
    """Whether SLURM still runs or queues ``job``; None when squeue cannot say (not installed, no answer)."""
    try:
        r = run(["squeue", "-h", "-j", str(job), "-o", "%T"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    states = r.stdout.split()
    if r.returncode == 0:
        return any(s in LIVE_STATES for s in states)
    # squeue says "Invalid job id specified" for a job it no longer knows: ended
    return False if "invalid job id" in (r.stderr or "").lower() else None


def holder_alive(holder: Holder, me: Holder | None = None, slurm_alive=slurm_job_alive, now=time.time) -> bool:
    me = me or Holder.me()
    young = now() - holder.time < MAX_AGE
    if holder.host == me.host:
        return pid_alive(holder.pid) and young  # a live pid on an old claim: the pid was reused
    if holder.slurm_job:
        alive = slurm_alive(holder.slurm_job)
        if alive is not None:
            return alive
    return young


def _create(claim: Path, holder: Holder) -> bool:
    claim.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(asdict(holder)))
    return True


def _take_over(claim: Path, dead: Holder, me: Holder) -> None:
    """Move a dead holder's claim aside (rename is atomic: of two batches taking over, one moves it). If what
    was moved is not the claim judged dead (another batch took it over in between), it is put back."""
    aside = claim.with_name(f"{claim.name}.stale-{me.host}-{me.pid}")
    try:
        os.rename(claim, aside)
    except FileNotFoundError:
        return
    if read_holder(aside) != dead:
        os.replace(aside, claim)
    else:
        aside.unlink(missing_ok=True)


def acquire(shard: str | Path, complete, me: Holder | None = None, alive=holder_alive, sleep=time.sleep,
            poll: float = POLL_SECONDS) -> bool:
    """Claim ``shard`` for computing: True when this process now holds it (compute it, then ``release``);
    False when it is complete (``complete()``), whoever computed it."""
    me = me or Holder.me()
    claim = claim_path(shard)
    while True:
        if complete():
            return False
        if _create(claim, me):
            if complete():  # finished by a holder that released it between our check and our claim
                release(shard)
                return False
            return True
        holder = read_holder(claim)
        if holder is None or complete():
            continue
        if alive(holder, me):
            sleep(poll)
        else:
            _take_over(claim, holder, me)


def release(shard: str | Path) -> None:
    claim_path(shard).unlink(missing_ok=True)


def log_computed(log: str | Path, shard: str, me: Holder | None = None) -> None:
    """Append one line for a computed shard (one write of one line: lines of concurrent batches never mix)."""
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (me or Holder.me()).line(shard).encode())
    finally:
        os.close(fd)
