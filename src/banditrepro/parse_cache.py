"""What ``banditrepro.closure`` reads from a source file (its import statements and its code shape), kept on disk
by the file's content, so that a new process (every ``snakemake`` invocation plans again) reads it back instead
of parsing every module of the package anew.

An entry is filed under a sha256 of the file's bytes, the Python release (its ``ast`` differs between releases),
the entry layout (``FORMAT``) and the bytes of the code that computes entries (this file and closure.py), so any
edit of a source, of the parsing code or a new interpreter misses and computes afresh: no entry can be read for
a source it was not computed from. An entry that cannot be read, does not parse, or names another key is
ignored and recomputed; one that cannot be written (read-only home) is skipped: the cache only ever saves time
(docs/decisions.md#parse-cache). Standard library only, as closure.py beside it in the naming library (so the
atomic write is its own: ``banditrepro.atomic`` imports numpy and stands a floor above).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

FORMAT = "1"  # the entry's layout; raise it when what an entry holds changes
PYTHON = f"{sys.implementation.name}-{'.'.join(map(str, sys.version_info[:3]))}"


def folder() -> Path:
    """Beside the compiled kernels: ``banditrepro.cache_base() / "parse"``, spelled out here because the package's
    ``__init__`` stands a floor above the naming library (tests/core/test_parse_cache.py holds the two equal)."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "banditrepro" / "parse"


@functools.cache
def _code_version() -> str:
    """The bytes of the code an entry is computed by: an edit of the parser renames every entry."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in ("closure.py", "parse_cache.py"):
        h.update((here / name).read_bytes() + b"\0")
    return h.hexdigest()


def key(data: bytes) -> str:
    """The entry's name: the source's bytes, the Python release, the layout and the parsing code."""
    h = hashlib.sha256()
    for part in (FORMAT.encode(), PYTHON.encode(), _code_version().encode()):
        h.update(part + b"\0")
    h.update(data)
    return h.hexdigest()


def _valid(entry, k: str) -> bool:
    return (isinstance(entry, dict) and entry.get("key") == k and isinstance(entry.get("shape"), str)
            and isinstance(entry.get("imports"), list))


def load(k: str) -> dict | None:
    """The entry filed under ``k``, or None (absent, unreadable, malformed, or holding another key)."""
    try:
        entry = json.loads((folder() / f"{k}.json").read_bytes())
    except (OSError, ValueError):
        return None
    return entry if _valid(entry, k) else None


def store(k: str, entry: dict) -> None:
    """File ``entry`` under ``k`` atomically (a temporary file, then ``os.replace``); no error if it cannot."""
    try:
        where = folder()
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{k}.", suffix=".part", dir=where)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({**entry, "key": k}, f)
            os.replace(tmp, where / f"{k}.json")
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only or full cache folder: the next process parses again, nothing is wrong
