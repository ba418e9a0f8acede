"""Atomic, byte-reproducible file writes: a temporary file in the same directory, then ``os.replace``.

``durable=True`` (shards, their sidecars, receipts: docs/decisions.md#durable-writes) also syncs the temporary
file's data before the replace and the directory after, so a file that exists after a crash of the node or OS
is whole: a shard's sidecar never survives beside an empty ``.npz``."""

from __future__ import annotations

import errno
import io
import json
import os
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from banditrepro import ReproError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed zip timestamps: the same arrays give the same bytes


# errors of a full disk or an exhausted quota: said as such, in one line, whatever was being written
FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


def io_error_text(exc: OSError, path) -> str:
    """One line for an I/O error on ``path``: what the system said, and that nothing was deleted."""
    what = os.strerror(exc.errno) if exc.errno else str(exc)
    if exc.errno in FULL:
        return (f"{path}: not written: {what} (disk full or quota exceeded); free space, then run the same "
                f"command again")
    return f"{path}: I/O error: {what} (errno {errno.errorcode.get(exc.errno, exc.errno)}); nothing deleted"


def fsync_dir(folder: str | Path) -> None:
    """Sync a directory's entries (a rename in it) to disk. File systems that cannot sync a directory (some
    network and FUSE ones answer EINVAL) order their metadata writes themselves: nothing more to do there."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def _fsync_file(path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: str | Path, durable: bool = False, sync_dir: bool = True):
    """Yield a temporary path next to ``path``; move it into place only if the block succeeds. ``durable``:
    its data synced before, and (``sync_dir``) the directory after. A full disk or quota: ``ReproError``
    naming ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        if durable:
            _fsync_file(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual mode
        os.replace(tmp, path)
        if durable and sync_dir:
            fsync_dir(path.parent)
    except OSError as exc:
        if exc.errno in FULL:
            raise ReproError(io_error_text(exc, path)) from None
        raise
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_bytes(path: str | Path, data: bytes, durable: bool = False, sync_dir: bool = True) -> None:
    with atomic_path(path, durable, sync_dir) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | Path, text: str, durable: bool = False, sync_dir: bool = True) -> None:
    write_bytes(path, text.encode("utf-8"), durable, sync_dir)


def write_json(path: str | Path, obj, durable: bool = False, sync_dir: bool = True) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n", durable, sync_dir)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An ``.npz`` archive (readable by ``np.load``) with deterministic bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            arr = io.BytesIO()
            np.lib.format.write_array(arr, np.asanyarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, arr.getvalue())
    return buf.getvalue()


def write_npz(path: str | Path, arrays: dict[str, np.ndarray], durable: bool = False) -> None:
    write_bytes(path, npz_bytes(arrays), durable)
