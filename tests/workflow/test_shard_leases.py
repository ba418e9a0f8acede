"""The shard claims' leases (banditrepro.workflow.shard_claims, docs/decisions.md#shard-leases): a holder
renews its claim while it computes; a claim not renewed for STALE seconds of file-system time is taken over,
whoever and wherever its holder was (another host, a requeued SLURM job); two takers never both win; a
waiting batch says whom it waits for once a minute; a stop request ends the wait. Small RENEW and STALE
(monkeypatched) keep these in fractions of a second."""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict

import pytest

from banditrepro.workflow import shard_claims as sc
from banditrepro.workflow import stop


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    stop.reset()
    yield
    stop.reset()
    with sc._LOCK:
        sc._HELD.clear()


def other_holder(host="node7", slurm_job="42"):
    return sc.Holder(host, 4242, slurm_job, time.time(), "feedbeef0000")


def write_claim(shard, holder, age=0.0):
    """A claim of ``holder`` last renewed ``age`` seconds ago, in file-system time."""
    claim = sc.claim_path(shard)
    claim.write_text(json.dumps(asdict(holder)) if isinstance(holder, sc.Holder) else holder)
    mtime = sc.fs_now(claim) - age
    os.utime(claim, (mtime, mtime))
    return claim


def no_wait(seconds):
    pytest.fail("waited for a claim that should have been taken over")


def test_the_file_systems_clock_is_read_from_a_probe_that_is_removed(tmp_path):
    claim = tmp_path / "runs0-0.npz.claim"
    (tmp_path / "other").write_bytes(b"")
    now = sc.fs_now(claim)
    assert abs(now - os.stat(tmp_path / "other").st_mtime) < 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other"]


def test_a_complete_shard_is_skipped_without_a_claim(tmp_path):
    shard = tmp_path / "runs0-0.npz"
    assert not sc.acquire(shard, lambda: True)
    assert not sc.claim_path(shard).exists()


def test_a_held_claim_is_renewed_until_released(tmp_path, monkeypatch):
    monkeypatch.setattr(sc, "RENEW", 0.05)
    shard = tmp_path / "runs0-0.npz"
    me = sc.Holder.me()
    assert sc.acquire(shard, shard.exists, me=me, wait=no_wait)
    claim = sc.claim_path(shard)
    old = sc.fs_now(claim) - 1000
    os.utime(claim, (old, old))
    deadline = time.monotonic() + 5
    while os.stat(claim).st_mtime == old and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sc.fs_now(claim) - os.stat(claim).st_mtime < 2  # touched by the renewing thread
    assert sc.read_holder(claim) == me
    sc.release(shard)
    assert not claim.exists() and not sc._HELD


def test_a_live_claim_is_waited_for_naming_its_holder_then_the_shard_is_skipped(tmp_path):
    shard = tmp_path / "runs0-0.npz"
    write_claim(shard, other_holder())
    waits, said = [], []

    def wait(seconds):  # the holder finishes while we wait: writes the shard, removes its claim
        waits.append(seconds)
        shard.write_bytes(b"npz")
        sc.claim_path(shard).unlink()

    assert not sc.acquire(shard, shard.exists, wait=wait, say=said.append)
    assert waits == [sc.POLL_SECONDS]
    assert len(said) == 1 and "host node7, pid 4242, SLURM job 42" in said[0], said


@pytest.mark.parametrize("holder", [other_holder(), other_holder("node7", None), "{"],
                         ids=["another host's SLURM job", "another host, no SLURM", "unreadable"])
def test_a_claim_not_renewed_for_STALE_is_taken_over_whoever_held_it(tmp_path, holder):
    """No squeue, no host or pid check: a requeued job (same SLURM job id, another node), a run resumed from
    another host or container, a holder killed while writing its claim all leave a claim that stops aging
    only when renewed."""
    shard = tmp_path / "runs0-0.npz"
    write_claim(shard, holder, age=sc.STALE + 1)
    me, said = sc.Holder.me(), []
    assert sc.acquire(shard, shard.exists, me=me, wait=no_wait, say=said.append)
    assert sc.read_holder(sc.claim_path(shard)) == me
    assert [p.name for p in tmp_path.iterdir()] == ["runs0-0.npz.claim"]  # nothing left aside
    assert len(said) == 1 and "took over" in said[0]
    sc.release(shard)


def test_a_holder_that_stops_renewing_is_taken_over_within_STALE(tmp_path, monkeypatch):
    monkeypatch.setattr(sc, "STALE", 0.6)
    monkeypatch.setattr(sc, "POLL_SECONDS", 0.05)
    shard = tmp_path / "runs0-0.npz"
    write_claim(shard, other_holder())  # renewed just now, then never again (its holder died)
    said = []
    start = time.monotonic()
    assert sc.acquire(shard, shard.exists, say=said.append)
    took = time.monotonic() - start
    assert 0.5 <= took < 0.6 + 2, took
    assert "waiting for host node7" in said[0] and "took over" in said[-1] and len(said) == 2, said
    sc.release(shard)


def test_ages_are_file_system_times_whatever_this_hosts_clock_says(tmp_path, monkeypatch):
    """A node whose clock is an hour ahead (or behind) of the file server: a claim renewed a moment ago is
    still live, one not renewed for two STALEs is still stale."""
    shard = tmp_path / "runs0-0.npz"
    real = time.time
    for skew in (3600.0, -3600.0):
        monkeypatch.setattr(sc.time, "time", lambda s=skew: real() + s)
        write_claim(shard, other_holder(), age=1.0)
        waits = []

        def wait(seconds, waits=waits):
            waits.append(seconds)
            sc.claim_path(shard).unlink()
            shard.write_bytes(b"npz")

        assert not sc.acquire(shard, shard.exists, wait=wait, say=lambda line: None)
        assert waits, f"a fresh claim taken over with the clock {skew:+.0f} s off"
        shard.unlink()
        write_claim(shard, other_holder(), age=2 * sc.STALE)
        assert sc.acquire(shard, shard.exists, wait=no_wait, say=lambda line: None)
        sc.release(shard)


def test_of_two_takers_one_wins_and_a_claim_renewed_meanwhile_is_put_back(tmp_path):
    shard = tmp_path / "runs0-0.npz"
    holder = other_holder()
    claim = write_claim(shard, holder, age=sc.STALE + 1)
    seen = os.stat(claim)
    assert sc._take_over(claim, seen, holder, sc.Holder.me())
    assert not sc._take_over(claim, seen, holder, sc.Holder.me())  # the second finds nothing to move
    # judged stale, then renewed by its (live, only slow) holder before the rename: left in place
    claim = write_claim(shard, holder, age=sc.STALE + 1)
    seen = os.stat(claim)
    os.utime(claim)
    assert not sc._take_over(claim, seen, holder, sc.Holder.me())
    assert sc.read_holder(claim) == holder
    assert [p.name for p in tmp_path.iterdir()] == ["runs0-0.npz.claim"]


def test_a_waiting_batch_says_whom_it_waits_for_once_a_minute(tmp_path, monkeypatch):
    shard = tmp_path / "runs0-0.npz"
    write_claim(shard, other_holder())
    clock = [1000.0]
    monkeypatch.setattr(sc.time, "monotonic", lambda: clock[0])
    said, waits = [], []

    def wait(seconds):  # 125 s of waiting, the claim renewed meanwhile; then the holder finishes
        waits.append(seconds)
        clock[0] += seconds
        os.utime(sc.claim_path(shard))
        if clock[0] >= 1125:
            shard.write_bytes(b"npz")

    assert not sc.acquire(shard, shard.exists, wait=wait, say=said.append)
    assert len(waits) == 25 and len(said) == 3, said  # at 0, 60 and 120 s
    assert all("waiting for host node7, pid 4242, SLURM job 42" in line for line in said)


def test_a_claim_taken_over_from_a_suspended_holder_is_dropped_and_left_to_the_taker(tmp_path, monkeypatch):
    renew = sc.renew_held
    monkeypatch.setattr(sc, "renew_held", lambda say=None: 0)  # the renewing thread stays out of the way
    shard = tmp_path / "runs0-0.npz"
    me = sc.Holder.me()
    assert sc.acquire(shard, shard.exists, me=me, wait=no_wait)
    taker = other_holder()
    sc.claim_path(shard).write_text(json.dumps(asdict(taker)))  # what a take-over leaves
    said = []
    assert renew(say=said.append) == 0
    assert len(said) == 1 and "claim lost" in said[0]
    sc.release(shard)
    assert sc.read_holder(sc.claim_path(shard)) == taker  # the taker's claim is not ours to remove


def test_a_stop_request_ends_the_wait_at_once(tmp_path):
    shard, holder = tmp_path / "runs0-0.npz", other_holder()
    write_claim(shard, holder)
    threading.Timer(0.2, stop.request, args=("SIGTERM",)).start()
    start = time.monotonic()
    with pytest.raises(stop.Stopped, match="SIGTERM"):
        sc.acquire(shard, shard.exists, say=lambda line: None)  # stop.wait: POLL_SECONDS, cut short
    assert time.monotonic() - start < 2
    assert sc.read_holder(sc.claim_path(shard)) == holder  # the holder's claim untouched


def test_the_suffixes_name_every_file_the_claims_leave(tmp_path):
    shard = tmp_path / "runs0-0.npz"
    assert sc.claim_path(shard).name == "runs0-0.npz" + sc.CLAIM_SUFFIX
    assert sc.STALE_INFIX.startswith(".") and sc.PROBE_INFIX.startswith(".")
