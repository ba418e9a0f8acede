"""The one error a received folder or bundle is refused with: its own module so that every check of the
reader (received.py, unpack.py, and settled.py for settle's files) raises it without importing another."""

from __future__ import annotations

from banditrepro import ReproError


class BadSource(ReproError):
    """A path that is not a results folder or a bundle this reader accepts (exit status 2: bad input)."""
