"""A bundle received from elsewhere, unpacked by the one reader of what crosses the boundary
(banditrepro/sharing/received.py has the rules and the limits, docs/sharing.md why): read as a stream, gzip
through a counter that stops at ``MAX_TOTAL_BYTES`` or ``MAX_RATIO`` times the archive's size, every tar header
checked here, files written into a fresh folder (``O_EXCL``, ``O_NOFOLLOW``) and hashed as they are written,
``checksums.sha256`` listing every file exactly once with its sha256.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import stat
import tarfile
import zlib
from pathlib import Path

from banditrepro.sharing import settled
from banditrepro.sharing.received import (
    CHECKSUMS,
    MAX_CHECKSUMS_BYTES,
    MAX_MEMBER_BYTES,
    MAX_MEMBERS,
    MAX_RATIO,
    MAX_TOTAL_BYTES,
    RATIO_SLACK,
    BadSource,
    bundle_allowed,
    check_name,
)


class _TooLarge(Exception):
    pass


class _Capped:
    """A stream that refuses to give more than ``cap`` bytes: what the gzip layer may unpack in all."""

    def __init__(self, f, cap: int):
        self.f, self.cap, self.n = f, cap, 0

    def read(self, n: int = -1) -> bytes:
        room = self.cap - self.n + 1
        data = self.f.read(room if n is None or n < 0 else min(n, room))
        self.n += len(data)
        if self.n > self.cap:
            raise _TooLarge
        return data


def unpack_bundle(archive: Path, into: Path, given: str) -> dict[str, int]:
    """Unpack ``archive`` into the empty folder ``into``; relative name -> size of each file. Two passes: the
    first checks every header and hashes every file without writing anything (so a refused bundle leaves
    nothing, not even in ``into``) and checks the checksums; the second writes the files, each hashed again and
    compared with the first pass. BadSource if anything is refused."""
    cap = min(MAX_TOTAL_BYTES, MAX_RATIO * archive.stat().st_size + RATIO_SLACK)
    files, hashes, sums = {}, {}, {}

    def hash_only(tar, info, parts):
        h = hashlib.sha256()
        data = tar.extractfile(info)
        keep = info.name == CHECKSUMS and info.size <= MAX_CHECKSUMS_BYTES
        while chunk := data.read(1 << 20):
            h.update(chunk)
            if keep:
                sums[info.name] = sums.get(info.name, b"") + chunk
        files[info.name], hashes[info.name] = info.size, h.hexdigest()

    _members(archive, given, cap, hash_only)
    check_checksums(sums.get(CHECKSUMS), files, hashes, given)
    made: set[Path] = set()

    def write(tar, info, parts):
        if info.isdir():
            _mkdirs(into, parts, made)
        elif _write_member(tar, info, _mkdirs(into, parts[:-1], made), parts[-1]) != hashes[info.name]:
            raise BadSource(f"{given}: changed while it was read ({info.name})")

    _members(archive, given, cap, write, folders=True)
    return files


def _members(archive: Path, given: str, cap: int, visit, folders: bool = False) -> None:
    """Call ``visit(tar, info, parts)`` for every file member (and folder, ``folders``) of the archive as it is
    streamed, once its header passed every check; at most ``cap`` bytes are unpacked in all."""
    seen: set[str] = set()
    total = 0
    try:
        with open(archive, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz, \
                tarfile.open(fileobj=_Capped(gz, cap), mode="r|") as tar:
            for info in tar:
                if len(seen) >= MAX_MEMBERS:
                    raise BadSource(f"{given}: more than {MAX_MEMBERS} members")
                name = info.name
                parts = check_name(name, given)
                if name.casefold() in seen:  # also a duplicate on a case-insensitive file system
                    raise BadSource(f"{given}: member {name!r} appears twice")
                seen.add(name.casefold())
                if info.type == tarfile.DIRTYPE:
                    if not (name in ("results", "data", "workflow") or bundle_allowed([*parts, "x"])
                            or settled.bundle_folder(parts)):
                        raise BadSource(f"{given}: folder {name!r} is not one a bundle holds")
                    if folders:
                        visit(tar, info, parts)
                    continue
                if info.type not in (tarfile.REGTYPE, tarfile.AREGTYPE) or info.issparse():
                    raise BadSource(f"{given}: member {name!r} is not a regular file (a link, device, FIFO or "
                                    "sparse file)")
                if not bundle_allowed(parts):
                    raise BadSource(f"{given}: member {name!r} is not under results/ or data/ nor a bundle's file")
                total += info.size
                if info.size > MAX_MEMBER_BYTES or total > MAX_TOTAL_BYTES:
                    raise BadSource(f"{given}: member {name!r} is larger than the limits ({MAX_MEMBER_BYTES} bytes "
                                    f"each, {MAX_TOTAL_BYTES} in all)")
                visit(tar, info, parts)
    except _TooLarge:
        raise BadSource(f"{given}: unpacks to more than {cap} bytes ({MAX_RATIO}x its size, a gzip bomb?)") from None
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise BadSource(f"{given}: cannot be unpacked: not a readable .tar.gz ({why})") from None


def _mkdirs(into: Path, parts: list[str], made: set) -> Path:
    """Make the folders ``parts`` under ``into`` one by one (never through a link: only this module writes here);
    ``made``: those made already."""
    here = into
    for part in parts:
        here = here / part
        if here in made:
            continue
        made.add(here)
        try:
            os.mkdir(here, 0o700)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                raise BadSource(f"{here.relative_to(into)} is both a file and a folder in the bundle") from None
    return here


def _write_member(tar, info, folder: Path, name: str) -> str:
    """Write one member's bytes to its new file (never an existing one, never through a link); its sha256."""
    src = tar.extractfile(info)
    h, n = hashlib.sha256(), 0
    fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        while chunk := src.read(1 << 20):
            n += len(chunk)
            h.update(chunk)
            out.write(chunk)
    if n != info.size:
        raise EOFError(f"member {info.name} ends early")
    return h.hexdigest()


def check_checksums(data: bytes | None, files: dict, hashes: dict, given: str) -> None:
    """``checksums.sha256`` (its bytes ``data``) lists every other file of the bundle once, with its sha256."""
    if CHECKSUMS not in files:
        raise BadSource(f"{given}: no {CHECKSUMS}: its files cannot be checked (bundle it with banditrepro bundle)")
    if files[CHECKSUMS] > MAX_CHECKSUMS_BYTES:
        raise BadSource(f"{given}: {CHECKSUMS} is larger than {MAX_CHECKSUMS_BYTES} bytes")
    try:
        text = (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise BadSource(f"{given}: {CHECKSUMS} is not UTF-8 text") from None
    listed: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("#") or not line:  # the withheld files' lines (bundle.checksums_text)
            continue
        m = re.fullmatch(r"([0-9a-f]{64})  (\S+)", line)
        if m is None or m.group(2) in listed:
            raise BadSource(f"{given}: {CHECKSUMS} line {n} is not '<sha256>  <member>' or names a member twice")
        listed[m.group(2)] = m.group(1)
    members = set(files) - {CHECKSUMS}
    extra, missing = sorted(members - set(listed)), sorted(set(listed) - members)
    if extra:
        raise BadSource(f"{given}: {extra[0]} is not listed in {CHECKSUMS} ({len(extra)} members are not)")
    if missing:
        raise BadSource(f"{given}: {missing[0]} is listed in {CHECKSUMS} but not in the bundle")
    wrong = sorted(name for name in members if hashes[name] != listed[name])
    if wrong:
        raise BadSource(f"{given}: {wrong[0]} does not have the sha256 {CHECKSUMS} lists ({len(wrong)} differ)")
