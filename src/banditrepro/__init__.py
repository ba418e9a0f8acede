"""banditrepro: reference reproduction of three bandit papers (C2B, Winner Stays, DP-TS-UCB).

Heavy modules (numba kernels, pandas, matplotlib) are imported lazily so that one simulation cell
starts fast; importing this package imports nothing but the standard library.
"""

__version__ = "0.1.0"


NUMBA_CACHE_KEY = ""  # hash of the sources numba compiles (set below); plugin caches are keyed on it too


class ReproError(Exception):
    """Bad input or unavailable data: the CLI prints the message on one line, without a traceback."""


def _numba_cache_dir() -> None:
    """Point numba's on-disk cache at a folder keyed by a hash of this package's sources.

    numba invalidates a cached kernel only when the kernel's own file changes, not when a helper it
    inlines from another module (the recorder) does; keying the whole cache by those sources
    makes every job reuse the compiled kernels and never load a stale one (only the
    files numba compiles are hashed, so editing plotting code keeps the cache). A user's NUMBA_CACHE_DIR wins.
    """
    import hashlib
    import os
    import sys
    from pathlib import Path

    global NUMBA_CACHE_KEY
    root = Path(__file__).parent
    h = hashlib.sha256()
    compiled = [root / "recorder.py", *(root / "algorithms").glob("*.py")]  # what numba compiles
    for path in sorted(compiled):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    NUMBA_CACHE_KEY = h.hexdigest()[:16]
    os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_base() / f"numba-{NUMBA_CACHE_KEY}"))
    # inside it, kernels are filed by their module's content, not its path: a fresh clone or a moved folder
    # reuses them (banditrepro.kernel_cache, docs/decisions.md#kernel-cache); numba reads this when imported
    os.environ.setdefault("NUMBA_CACHE_LOCATOR_CLASSES", "banditrepro.kernel_cache.ContentKeyedLocator")
    numba_config = sys.modules.get("numba.core.config")
    if numba_config is not None:  # numba was imported first: it reads the environment again only when asked
        numba_config.reload_config()


def cache_base():
    """The folder of every compiled-kernel cache (ours and plugins', ``banditrepro.plugins``)."""
    import os
    from pathlib import Path

    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "banditrepro"


_numba_cache_dir()
