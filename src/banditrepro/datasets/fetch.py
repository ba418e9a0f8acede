"""Obtaining raw files: configured mirrors first (local folders or URLs), then the upstream URL.

Every file is verified (sha256, or git blob id where upstream publishes only that) before it is moved
into place atomically; a failure leaves no partial file and raises a one-line ``ReproError``.
"""

from __future__ import annotations

import hashlib
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from banditrepro import ReproError
from banditrepro.atomic import atomic_path
from banditrepro.filehash import file_sha256


def git_blob_of(path: Path) -> str:
    """``git hash-object`` of a file: sha1 over 'blob <size>\\0' + content."""
    data = Path(path).read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def checksum_mismatch(path: Path, sha256: str | None = None, git_blob: str | None = None) -> str | None:
    """None if ``path`` matches its declared checksum, else "sha256 <actual> … expected <declared>"."""
    if not sha256 and not git_blob:
        return "no checksum declared"
    for kind, expected, of in (("sha256", sha256, file_sha256), ("git blob", git_blob, git_blob_of)):
        if expected:
            got = of(path)
            if got != expected:
                return f"{kind} {got}, expected {expected}"
    return None


def verify(path: Path, sha256: str | None = None, git_blob: str | None = None, label: str = "") -> None:
    """Raise a one-line ``ReproError`` naming the file and both hashes unless ``path`` is the declared file."""
    problem = checksum_mismatch(path, sha256, git_blob)
    if problem == "no checksum declared":
        raise ReproError(f"{label or path.name}: no checksum declared; refusing an unverified file")
    if problem:
        raise ReproError(f"checksum mismatch for {label or path.name}: {problem}")


def _is_url(s: str) -> bool:
    return s.startswith(("http://", "https://", "file://"))


def download(url: str, dest: Path, retries: int = 3, timeout: float = 60.0, backoff: float = 2.0) -> None:
    """Download ``url`` to ``dest`` (no verification here); retries with exponential back-off."""
    last = None
    for attempt in range(retries):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp, open(dest, "wb") as f:
                shutil.copyfileobj(resp, f, length=1 << 20)
            return
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last = exc
            if attempt + 1 < retries:
                time.sleep(backoff ** attempt)
    reason = getattr(last, "reason", last)
    raise ReproError(f"download failed: {url} ({reason})")


def fetch(relpath: str, dest: str | Path, *, url: str | None, sha256: str | None = None,
          git_blob: str | None = None, mirrors: list[str] = (), retries: int = 3, timeout: float = 60.0,
          derive_from_url: Callable[[Path, Path], None] | None = None, log=print) -> str:
    """Place the verified file ``relpath`` at ``dest``; return where it came from.

    ``mirrors`` are tried in order (``<mirror>/<relpath>``; folders that do not exist are skipped), then
    ``url``. If ``derive_from_url`` is given, what ``url`` serves is an upstream archive that the function
    turns into the file (e.g. Kamishima's sushi orders -> win counts); the result is verified the same way.
    """
    dest = Path(dest)
    tried = []

    def attempt(where: str, obtain: Callable[[Path], None]) -> bool:
        """Obtain into a temporary file and verify; a bad copy is reported and the next source tried."""
        try:
            with atomic_path(dest) as tmp:
                obtain(tmp)
                verify(tmp, sha256, git_blob, relpath)
            return True
        except (ReproError, OSError) as exc:
            reason = exc if isinstance(exc, ReproError) else f"{exc.strerror or exc}"
            tried.append(f"{where}: {reason}")
            log(f"{relpath}: {where}: {reason}; trying the next source")
            return False

    for mirror in mirrors:
        if _is_url(mirror):
            candidate_url = mirror.rstrip("/") + "/" + relpath
            if attempt(candidate_url, lambda tmp, u=candidate_url: download(u, tmp, retries=1, timeout=timeout)):
                return candidate_url
            continue
        src = Path(mirror) / relpath
        if not Path(mirror).is_dir():
            continue
        if not src.is_file():
            tried.append(f"{mirror}: not there")
            continue
        if attempt(str(src), lambda tmp, s=src: shutil.copyfile(s, tmp)):
            return str(src)
    if url:
        log(f"{relpath}: not in any mirror (or no good copy there), downloading {url}")

        def from_url(tmp: Path) -> None:
            if derive_from_url is None:
                download(url, tmp, retries=retries, timeout=timeout)
                return
            raw = tmp.with_suffix(".download")
            try:
                download(url, raw, retries=retries, timeout=timeout)
                derive_from_url(raw, tmp)
            finally:
                raw.unlink(missing_ok=True)

        if attempt(url, from_url):
            return url
    where = "; ".join(tried) or "no mirror configured"
    raise ReproError(f"cannot obtain {relpath}: {where}")
