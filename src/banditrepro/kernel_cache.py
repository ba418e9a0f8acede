"""A numba cache keyed by the sources a kernel is compiled from, wherever they are (docs/decisions.md#kernel-cache).

numba files a module's compiled kernels under a folder named by a hash of the module's absolute folder and
checks them against the module's own file only: a clone elsewhere recompiles every kernel (about 30 CPU-s),
and an edit of a helper another module inlines or calls (``banditrepro.recorder``, ``algorithms/ties.py``)
loads the stale kernel. ``ContentKeyedLocator`` files a module's kernels under its dotted name and a hash of
the bytes of its static import closure (the module and every package module it imports, transitively): the
same sources compiled anywhere find the same cache, and an edit of any of them gets a new folder.

numba asks for it through its public ``NUMBA_CACHE_LOCATOR_CLASSES`` setting, which ``banditrepro``'s
``__init__`` sets (unless the user did) before numba is imported. If numba's internals differ from what this
module expects, one warning is printed and numba's own locators are used: the cost is a recompile, never a
failure.

``kernel_lock`` keeps a job and a warm-up process (``banditrepro.workflow.warmup``) from compiling one module at once;
its wait is bounded and ends on a stop request (the caller's ``wait``), so it can never hang a run.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import time
import warnings
from pathlib import Path

from banditrepro import closure

LOCATOR = f"{__name__}.ContentKeyedLocator"  # the value for NUMBA_CACHE_LOCATOR_CLASSES

# How long a kernel lock is waited for before compiling without it. Whoever holds it loads or compiles one
# module: a large kernel compiles in about 1.3 CPU-s, a whole module (c2b-kl, its variants) in up to ~7 CPU-s,
# ~15 s of wall time on a loaded machine (docs/decisions.md#kernel-cache). 120 s is far beyond any honest
# holder, so only a hung one (a stopped process, a lock an NFSv3 server never grants) is passed by.
LOCK_TIMEOUT = 120.0
_POLL = 0.05  # seconds between non-blocking attempts: a stop request is seen within this

_warned = False


def _warn_once(exc: BaseException) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"banditrepro: numba's cache internals changed ({type(exc).__name__}: {exc}); kernels are "
                      "cached by numba's default rules (a moved or new copy of the project recompiles them, and "
                      "an edit of a helper in another module is not seen: empty NUMBA_CACHE_DIR after one)",
                      RuntimeWarning, stacklevel=3)


def _numba_defaults() -> list:
    from numba.core import caching

    return list(getattr(caching.CacheImpl, "_locator_classes", []))


# --- what a module's kernels are compiled from ----------------------------------------------------------


def _stamp(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_mtime_ns, st.st_size


@functools.cache
def _files_digest(stamps: tuple[tuple[str, tuple[str, int, int]], ...]) -> str:
    h = hashlib.sha256()
    for name, (path, _, _) in stamps:
        h.update(name.encode() + b"\0")
        h.update(Path(path).read_bytes() + b"\0")
    return h.hexdigest()


def files_digest(named) -> str:
    """Hash of the bytes of ``(name, path)`` files, read once per process per state (mtime, size) of them."""
    return _files_digest(tuple((name, _stamp(Path(path))) for name, path in named))


def source_digest(module: str, path) -> str:
    """Hash of what ``module``'s kernels are compiled from: the bytes of its import closure in the package.

    Bytes, not syntax trees: numba's compiled code carries the source's line numbers (tracebacks, the
    per-function disambiguator), so a comment that shifts lines must not load kernels compiled before it.
    A file outside the package (a plugin's module) counts with the closures of the ``banditrepro`` modules it
    imports (an inlined ``banditrepro.recorder``), but not the plugin's own other modules: those are covered by
    the plugin's cache folder (``banditrepro.plugins.cache_dir``), keyed by all of its package's files.
    """
    path = Path(path).resolve()
    root = closure.package_root(module, path)
    if root is not None:
        return files_digest(closure.closure_files((module,), root))
    return outside_digest([("", path)])


def outside_digest(named) -> str:
    """Hash of ``(name, path)`` files outside the package (a plugin's) and of the closures of the package
    modules they import: what their kernels compile from, as far as this package goes."""
    named = [(name, Path(path)) for name, path in named]
    ours = tuple(sorted(set().union(*(closure.package_imports(path) for _, path in named))))
    return files_digest([*named, *closure.closure_files(ours, closure.ROOT)])


def folder_name(module: str, digest: str) -> str:
    """The cache subfolder of a module's kernels: its dotted name and a hash of the sources they compile from."""
    return f"{module}-{digest[:20]}"


def module_cached(cache_dir: str, module: str, path: str) -> bool:
    """True if kernels of this module's current closure were cached (any index file in its folder)."""
    folder = os.path.join(cache_dir, folder_name(module, source_digest(module, path)))
    return os.path.isdir(folder) and any(f.endswith(".nbi") for f in os.listdir(folder))


# --- the locator numba asks for -------------------------------------------------------------------------


def _build(py_func, py_file):
    """Our locator for ``py_func``, or None where numba's own rules apply (no cache folder, no source file)."""
    from numba.core import config
    from numba.core.caching import _CacheLocator

    if not config.CACHE_DIR or not os.path.isfile(py_file):
        return None

    class Located(_CacheLocator):
        def __init__(self):
            self._py_file = py_file  # as on numba's own locators: its "cannot cache" warning names the file
            # hashed when the kernel is decorated, i.e. imported: the sources this process compiles from
            self._digest = source_digest(py_func.__module__, py_file)
            self._lineno = py_func.__code__.co_firstlineno
            self._path = os.path.join(config.CACHE_DIR, folder_name(py_func.__module__, self._digest))

        def get_cache_path(self):
            return self._path

        def get_source_stamp(self):
            # the index is valid for these sources, whatever their paths or mtimes
            return self._digest

        def get_disambiguator(self):
            return str(self._lineno)

    locator = Located()
    locator.ensure_cache_path()
    return locator


class ContentKeyedLocator:
    """The entry numba looks up: ``from_function`` returns a locator keyed by the sources' content, or one of
    numba's default locators when ours cannot be built (one warning per process)."""

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            locator = _build(py_func, py_file)
        except OSError:
            locator = None  # cache folder not writable: numba's defaults decide, as they would without us
        except Exception as exc:  # noqa: BLE001 - any change in numba's internals must cost a recompile only
            _warn_once(exc)
            locator = None
        if locator is not None:
            return locator
        for default in _numba_defaults():
            found = default.from_function(py_func, py_file)
            if found is not None:
                return found
        return None


# --- one compile of a module at a time ------------------------------------------------------------------


def _fcntl():
    try:
        import fcntl
    except ImportError:  # not POSIX: each process compiles on its own, as numba does by default
        return None
    return fcntl


def _open_lock(folder: str, name: str) -> int | None:
    """A descriptor of the module's lock file, or None in a cache folder we cannot write (numba cannot either)."""
    try:
        os.makedirs(folder, exist_ok=True)
        return os.open(os.path.join(folder, f"compile-{name}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None


def _acquire(fcntl, fd: int, name: str, wait) -> bool:
    """Take the lock, polling rather than blocking: a blocking ``flock`` is deaf to Ctrl-C and SIGTERM in a job
    thread and can hang for good on NFSv3. Between attempts ``wait(seconds)``, which raises on a stop request
    (the workflow's ``stop.wait``: ``Stopped``); after ``LOCK_TIMEOUT``, or where
    the file system has no locks, False: the caller compiles without it. A race costs CPU only, never a bad
    kernel: numba writes every cache file to a temporary name and ``os.replace``s it into place
    (``numba/core/caching.py``, ``_CacheImpl._open_for_write``), so a reader sees a whole file or none."""
    deadline = time.monotonic() + LOCK_TIMEOUT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:  # held by another process or thread
            pass
        except OSError:  # no lock service (ENOLCK: an NFS mount without lockd)
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            warnings.warn(f"banditrepro: the compile lock of {name} was held for {LOCK_TIMEOUT:g} s; compiling "
                          "without it (at worst the kernel is compiled twice)", RuntimeWarning, stacklevel=4)
            return False
        wait(min(_POLL, left))  # raises as soon as a stop is requested


@contextlib.contextmanager
def kernel_lock(algorithm: str, *, wait):
    """Held while ``algorithm``'s kernel is loaded or compiled, across processes and threads; one lock per
    module, since the algorithms of a module share kernels (no-op without a cache folder or ``fcntl``; waited
    for at most ``LOCK_TIMEOUT``). ``wait(seconds)`` sleeps between attempts and raises on a stop request: the
    caller passes the workflow's ``stop.wait`` (``Stopped``), so this low module need not know the workflow's
    signal handling (docs/architecture.md, "The floors")."""
    from banditrepro.algorithms.builtin import MODULES

    name = MODULES.get(algorithm, algorithm)
    folder = os.environ.get("NUMBA_CACHE_DIR")
    fcntl = _fcntl()
    fd = _open_lock(folder, name) if folder and fcntl is not None else None
    if fd is None:
        yield
        return
    try:
        _acquire(fcntl, fd, name, wait)
        yield
    finally:
        os.close(fd)  # releases the lock if taken
