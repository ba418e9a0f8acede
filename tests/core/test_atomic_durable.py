"""Durable writes (banditrepro.atomic, docs/decisions.md#durable-writes): for shards, sidecars and receipts the
data of the temporary file is synced before it replaces the target, and the directory after; a full disk or
quota is said in one line and leaves neither a temporary file nor a half-written target. And only corruption
deletes (docs/decisions.md#only-corruption-deletes): an I/O error or MemoryError reading a result file names
the file in one line and deletes nothing."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from banditrepro import ReproError, atomic
from banditrepro.aggregate import CorruptRemoved, load_summary, summarize
from banditrepro.cell import CorruptFile, ReadFailure, load_npz


@pytest.fixture
def synced(monkeypatch):
    """Every os.fsync and os.replace, in order: ("file" | "dir", path) and ("replace", target)."""
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        path = os.readlink(f"/proc/self/fd/{fd}")
        events.append(("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file", path))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    monkeypatch.setattr(atomic.os, "replace", replace)
    return events


def write_by_path(path, durable=True):  # a writer that takes a path (matplotlib's savefig)
    with atomic.atomic_path(path, durable) as tmp:
        tmp.write_bytes(b"written by path")


@pytest.mark.parametrize("write", [
    lambda p: atomic.write_npz(p, {"a": np.arange(3)}, durable=True),
    lambda p: atomic.write_json(p, {"prepared_sha256": "x"}, durable=True),
    write_by_path,
], ids=["npz", "json", "atomic_path"])
def test_data_is_synced_before_the_replace_and_the_directory_after(tmp_path, synced, write):
    target = tmp_path / "sub" / "runs0-0.npz"
    write(target)
    assert [kind for kind, _ in synced] == ["file", "replace", "dir"], synced
    assert synced[0][1].startswith(str(target.parent / f".{target.name}.")) and synced[0][1].endswith(".part")
    assert synced[1][1] == str(target) and synced[2][1] == str(target.parent)
    assert target.is_file() and [p.name for p in target.parent.iterdir()] == [target.name]


def test_other_writes_are_atomic_but_not_synced(tmp_path, synced):
    """Summaries, tables, figures: Snakemake's outputs, rewritten by a rerun; a sync each would cost the
    local run (docs/performance.md#durable-writes)."""
    atomic.write_json(tmp_path / "summary.json", {"a": 1})
    write_by_path(tmp_path / "figure.png", durable=False)
    assert [kind for kind, _ in synced] == ["replace", "replace"]


def test_a_shard_and_its_sidecar_are_synced_before_the_directory_once(tmp_path, synced, monkeypatch):
    from banditrepro import cell

    monkeypatch.setattr(cell, "shard_sidecar", lambda results: {"runs": [0]})
    monkeypatch.setattr(cell, "shard_arrays", lambda results: {"a": np.arange(2)})
    shard = tmp_path / "runs0-0.npz"
    cell.write_shard([], shard, "sha")
    sidecar = shard.with_suffix(".json")
    assert [kind for kind, _ in synced] == ["file", "replace", "file", "replace", "dir"], synced
    assert Path(synced[0][1]).name.startswith(".runs0-0.json.") and synced[1][1] == str(sidecar)
    assert Path(synced[2][1]).name.startswith(".runs0-0.npz.") and synced[3][1] == str(shard)
    assert synced[4][1] == str(tmp_path)


@pytest.mark.parametrize("code", ["ENOSPC", "EDQUOT"])
def test_a_full_disk_is_said_in_one_line_and_leaves_nothing_half_written(tmp_path, monkeypatch, code):
    target = tmp_path / "receipt.json"
    target.write_text("old")

    def full(fd):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(ReproError) as err:
        atomic.write_json(target, {"new": 1}, durable=True)
    text = str(err.value)
    assert "\n" not in text and str(target) in text and "disk full or quota exceeded" in text, text
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["receipt.json"]


def test_a_directory_that_cannot_be_synced_is_accepted(tmp_path, monkeypatch):
    """Some network and FUSE file systems answer EINVAL to fsync of a directory."""
    real = os.fsync

    def no_dir_sync(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "Invalid argument")
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", no_dir_sync)
    atomic.write_text(tmp_path / "a.txt", "x", durable=True)
    assert (tmp_path / "a.txt").read_text() == "x"


# --- only corruption deletes ---------------------------------------------------------------------------------

def shard(tmp_path):
    path = tmp_path / "runs0-1.npz"
    atomic.write_npz(path, {"grid": np.array([1, 2]), "run": np.array([0, 1]), "horizon": np.int64(2),
                            "base_seed": np.int64(7), "algorithm": np.str_("a"), "instance": np.str_("i"),
                            "params": np.str_("{}"), "n_batches": np.array([1, 1]),
                            "regret": np.ones((2, 2)), "final_regret": np.ones(2)})
    return path


@pytest.mark.parametrize("error", [OSError(errno.EIO, "Input/output error"),
                                   OSError(errno.ESTALE, "Stale file handle"), MemoryError()],
                         ids=["EIO", "ESTALE", "MemoryError"])
def test_an_io_error_or_memory_error_fails_naming_the_file_and_deletes_nothing(tmp_path, monkeypatch, error):
    path = shard(tmp_path)
    before = path.read_bytes()

    def failing(*args, **kwargs):
        raise error

    monkeypatch.setattr(np, "load", failing)
    with pytest.raises(ReadFailure) as err:
        load_npz(path)
    assert not isinstance(err.value, CorruptFile)
    text = str(err.value)
    assert "\n" not in text and str(path) in text and "nothing deleted" in text, text
    with pytest.raises(ReproError) as err:  # through the summary: not taken for corruption, not removed
        summarize([path], 2)
    assert not isinstance(err.value, CorruptRemoved) and "\n" not in str(err.value)
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", [lambda b: b[: len(b) // 2], lambda b: b[:60] + bytes([b[60] ^ 0xFF]) + b[61:],
                                    lambda b: b"", lambda b: b"not a zip at all"],
                         ids=["truncated", "bit flip", "empty", "not a zip"])
def test_bad_bytes_are_corruption_and_only_they_delete(tmp_path, damage):
    path = shard(tmp_path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(CorruptFile):
        load_npz(path)
    with pytest.raises(CorruptRemoved, match="removed"):
        load_summary(path)
    assert not path.exists()
