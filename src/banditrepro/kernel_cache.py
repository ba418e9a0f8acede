"""A numba cache that survives a fresh clone or a moved folder (docs/decisions.md#kernel-cache).

numba files a module's compiled kernels under a folder named by a hash of the module's absolute folder, so a
clone elsewhere, a renamed checkout or a temporary copy compiles every kernel again (about 30 CPU-s for the
built-in kernels). ``ContentKeyedLocator`` files them under the module's dotted name and a hash of its
bytes instead: the same source compiled anywhere finds the same cache, and an edited one gets a new folder.

numba asks for it through its public ``NUMBA_CACHE_LOCATOR_CLASSES`` setting, which ``banditrepro``'s
``__init__`` sets (unless the user did) before numba is imported. If numba's internals differ from what this
module expects, one warning is printed and numba's own locators are used: the cost is a recompile, never a
failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import warnings

LOCATOR = f"{__name__}.ContentKeyedLocator"  # the value for NUMBA_CACHE_LOCATOR_CLASSES

_warned = False


def _warn_once(exc: BaseException) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"banditrepro: numba's cache internals changed ({type(exc).__name__}: {exc}); kernels are "
                      "cached by numba's default rules (a moved or new copy of the project recompiles them)",
                      RuntimeWarning, stacklevel=3)


def _numba_defaults() -> list:
    from numba.core import caching

    return list(getattr(caching.CacheImpl, "_locator_classes", []))


def source_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def folder_name(module: str, digest: str) -> str:
    """The cache subfolder of a module's kernels: its dotted name and a hash of its bytes."""
    return f"{module}-{digest[:20]}"


def module_cached(cache_dir: str, module: str, path: str) -> bool:
    """True if kernels of this module's current source were cached (any index file in its folder)."""
    folder = os.path.join(cache_dir, folder_name(module, source_digest(path)))
    return os.path.isdir(folder) and any(f.endswith(".nbi") for f in os.listdir(folder))


def _build(py_func, py_file):
    """Our locator for ``py_func``, or None where numba's own rules apply (no cache folder, no source file)."""
    from numba.core import config
    from numba.core.caching import _CacheLocator

    if not config.CACHE_DIR or not os.path.isfile(py_file):
        return None

    class Located(_CacheLocator):
        def __init__(self):
            self._py_file = py_file  # as on numba's own locators: its "cannot cache" warning names the file
            self._digest = source_digest(py_file)  # hashed once: the bytes this process compiled from
            self._lineno = py_func.__code__.co_firstlineno
            self._path = os.path.join(config.CACHE_DIR, folder_name(py_func.__module__, self._digest))

        def get_cache_path(self):
            return self._path

        def get_source_stamp(self):
            # the index is valid for these bytes, whatever the file's path or mtime
            return self._digest

        def get_disambiguator(self):
            return str(self._lineno)

    locator = Located()
    locator.ensure_cache_path()
    return locator


class ContentKeyedLocator:
    """The entry numba looks up: ``from_function`` returns a locator keyed by the source's content, or one of
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


@contextlib.contextmanager
def kernel_lock(algorithm: str):
    """Held while ``algorithm``'s kernel is loaded or compiled, across processes and threads; one lock per
    module, since the algorithms of a module share kernels (no-op without a cache folder or ``fcntl``)."""
    from banditrepro.algorithms.builtin import MODULES

    name = MODULES.get(algorithm, algorithm)
    folder = os.environ.get("NUMBA_CACHE_DIR")
    try:
        import fcntl
    except ImportError:  # not POSIX: each process compiles on its own, as numba does by default
        fcntl = None
    if not folder or fcntl is None:
        yield
        return
    try:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(os.path.join(folder, f"compile-{name}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield  # a read-only cache: numba will not cache either
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
