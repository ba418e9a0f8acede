"""The sha256 of a file's bytes, read in chunks: the one function that hashes a file whole, for the data a
name covers (a user's matrix file), a raw download checked against its catalog entry, a shard's prepared
data, and a bundle's members. Only the standard library, so the lowest module that hashes a file can use it."""

from __future__ import annotations

import hashlib

CHUNK = 1 << 20  # bytes read at a time: a prepared file or a bundle may be larger than what memory should hold


def file_sha256(path) -> str:
    """The hex sha256 of the file at ``path`` (OSError as ``open`` raises it)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()
