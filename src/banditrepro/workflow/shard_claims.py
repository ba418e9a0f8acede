"""Who is computing a shard: one claim file per shard, a lease its holder renews (docs/decisions.md#shard-leases).

Two processes can hold the same batch: after the main Snakemake process is killed (``kill -9``, a closed
login session) its queued and running SLURM jobs go on unsupervised, and the same command run again submits
the same batches; SLURM can requeue a batch onto another node under the same job id. Before computing a
shard, a batch creates ``<shard>.claim`` with ``O_CREAT | O_EXCL`` (atomic on local and NFS v3+ file
systems) holding its host, pid, SLURM job id, the time and a random token. While it computes, a daemon thread
touches the claim every ``RENEW`` seconds. A batch that finds a claim skips the shard if it is complete, waits
while the claim was renewed within ``STALE`` seconds (one line a minute naming the holder), and takes over a
claim older than that: its holder is dead, wherever it ran (killed, cancelled, requeued, timed out, another
host or container). No squeue, no pid check: the claim's age alone says, so the same rule holds everywhere.

Ages are file-system times against file-system times: "now" is the mtime of a probe file created beside the
claim (``<claim>.now-<host>-<pid>-<thread>``, removed at once), so clocks that differ between nodes and the
file server do not matter. The claim is removed once the shard's ``.npz`` is written, or when the batch stops.

Every shard computed appends one line ``<shard> <host> <pid> <slurm job or ->`` to the shards log
(``Layout.shards_log``; the shard relative to the cells folder), one ``O_APPEND`` write per line, so tests can
show that no shard was computed twice.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from banditrepro.workflow import stop

RENEW = 5.0  # seconds between two renewals of a held claim
STALE = 60.0  # a claim not renewed for this long (file-system time) is a dead holder's: taken over
POLL_SECONDS = 5.0  # a waiting batch looks again this often (a stop request interrupts the wait)
SAY_EVERY = 60.0  # a waiting batch says whom it waits for once a minute
# the files of this module, beside a shard (`banditrepro clean` recognises them by these)
CLAIM_SUFFIX = ".claim"
STALE_INFIX = ".stale-"  # <shard>.claim.stale-<host>-<pid>-<token>: a claim being taken over
PROBE_INFIX = ".now-"  # <shard>.claim.now-<host>-<pid>-<thread>: the file system's clock, read and removed


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    slurm_job: str | None
    time: float
    token: str = ""  # tells apart two holders with the same host and pid (a requeued job, a reused pid)

    @classmethod
    def me(cls) -> Holder:
        return cls(socket.gethostname(), os.getpid(), os.environ.get("SLURM_JOB_ID") or None, time.time(),
                   uuid.uuid4().hex[:12])

    def line(self, shard: str) -> str:
        return f"{shard} {self.host} {self.pid} {self.slurm_job or '-'}\n"

    def describe(self) -> str:
        return f"host {self.host}, pid {self.pid}" + (f", SLURM job {self.slurm_job}" if self.slurm_job else "")


def claim_path(shard: str | Path) -> Path:
    return Path(f"{shard}{CLAIM_SUFFIX}")


def read_holder(claim: Path) -> Holder | None:
    """The claim's holder; None if the claim is gone. An unreadable claim (a holder killed while writing
    its few bytes) names nobody; its age decides like any other's."""
    try:
        text = claim.read_text()
    except FileNotFoundError:
        return None
    try:
        d = json.loads(text)
        return Holder(str(d["host"]), int(d["pid"]), d.get("slurm_job"), float(d["time"]), str(d.get("token", "")))
    except (ValueError, KeyError, TypeError):
        return Holder("?", -1, None, 0.0)


def fs_now(claim: Path) -> float:
    """The file system's current time, as it stamps files in ``claim``'s folder (mtime of a fresh probe)."""
    probe = claim.with_name(f"{claim.name}{PROBE_INFIX}{socket.gethostname()}-{os.getpid()}-{threading.get_ident()}")
    probe.unlink(missing_ok=True)
    os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    try:
        return os.stat(probe).st_mtime
    finally:
        probe.unlink(missing_ok=True)


def _say(line: str) -> None:
    print(f"banditrepro: {line}", file=sys.stderr, flush=True)


def _create(claim: Path, holder: Holder) -> bool:
    claim.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(asdict(holder)))
    return True


def _take_over(claim: Path, seen: os.stat_result, holder: Holder, me: Holder) -> bool:
    """Move a stale claim aside: rename is atomic, so of two batches taking over, one moves it; the mover then
    creates its own claim with O_EXCL like any batch. If what was moved is not the claim judged stale
    (renewed or replaced in between: a live holder), it is put back."""
    aside = claim.with_name(f"{claim.name}{STALE_INFIX}{me.host}-{me.pid}-{me.token}")
    try:
        os.rename(claim, aside)
    except FileNotFoundError:
        return False
    moved = os.stat(aside)
    if (moved.st_ino, moved.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns) or read_holder(aside) != holder:
        try:
            os.link(aside, claim)  # back in place, unless a new claim is there already
        except FileExistsError:
            pass
        aside.unlink(missing_ok=True)
        return False
    aside.unlink(missing_ok=True)
    return True


def acquire(shard: str | Path, complete, me: Holder | None = None, wait=None, say=_say) -> bool:
    """Claim ``shard`` for computing: True when this process now holds it (compute it, then ``release``);
    False when it is complete (``complete()``), whoever computed it. Raises ``stop.Stopped`` when the run
    is asked to stop (Ctrl-C, SIGTERM) while it waits. ``wait(seconds)`` sleeps (default: ``stop.wait``)."""
    me = me or Holder.me()
    wait = wait or stop.wait
    claim = claim_path(shard)
    said = None
    while True:
        stop.check()
        if complete():
            return False
        if _create(claim, me):
            if complete():  # finished by a holder that released it between our check and our claim
                release(shard, me)
                return False
            _hold(claim, me)
            return True
        try:
            seen = os.stat(claim)
        except FileNotFoundError:
            continue
        holder = read_holder(claim)
        if holder is None or complete():
            continue
        age = fs_now(claim) - seen.st_mtime
        if age > STALE:
            if _take_over(claim, seen, holder, me):
                say(f"{shard}: took over the claim of {holder.describe()} (not renewed for {age:.0f} s)")
            continue
        if said is None or time.monotonic() - said >= SAY_EVERY:
            said = time.monotonic()
            say(f"{shard}: waiting for {holder.describe()}, which holds it (renewed {max(age, 0):.0f} s ago; "
                f"taken over once not renewed for {STALE:.0f} s)")
        wait(POLL_SECONDS)


def release(shard: str | Path, me: Holder | None = None) -> None:
    """Give up ``shard``'s claim (held by this process, or by ``me``): removed only if it is still ours, not
    another's that took it over meanwhile."""
    claim = claim_path(shard)
    with _LOCK:
        mine = _HELD.pop(claim, None) or me
    if mine is not None and read_holder(claim) == mine:
        claim.unlink(missing_ok=True)


# --- renewal: one daemon thread per process renews every claim the process holds ---------------------------

_HELD: dict[Path, Holder] = {}
_LOCK = threading.Lock()
_WAKE = threading.Event()
_RENEWER: list[threading.Thread] = []


def _hold(claim: Path, me: Holder) -> None:
    with _LOCK:
        _HELD[claim] = me
        if not _RENEWER or not _RENEWER[0].is_alive():
            _RENEWER[:] = [threading.Thread(target=_renew_forever, name="banditrepro-claims", daemon=True)]
            _RENEWER[0].start()
    _WAKE.set()  # the thread picks up the current RENEW at once


def renew_held(say=_say) -> int:
    """Touch every claim this process holds (mtime = the file system's now); returns how many. A claim that
    is no longer ours (taken over while this process was suspended longer than STALE) is dropped, named."""
    with _LOCK:
        held = list(_HELD.items())
    renewed = 0
    for claim, me in held:
        try:
            if read_holder(claim) == me:
                os.utime(claim)  # no times given: NFS sets the server's time
                renewed += 1
                continue
        except OSError:  # a transient error: the next renewal tries again, well within STALE
            continue
        with _LOCK:
            lost = _HELD.pop(claim, None) is not None
        if lost:
            say(f"{claim}: claim lost (not renewed for {STALE:.0f} s: was this process suspended?); "
                f"the shard is written anyway, with the same bytes")
    return renewed


def _renew_forever() -> None:
    while True:
        _WAKE.wait(RENEW)
        _WAKE.clear()
        renew_held()


def log_computed(log: str | Path, shard: str, me: Holder | None = None) -> None:
    """Append one line for a computed shard (one write of one line: lines of concurrent batches never mix)."""
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (me or Holder.me()).line(shard).encode())
    finally:
        os.close(fd)
