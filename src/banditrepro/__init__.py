"""banditrepro: reference reproduction of three bandit papers (C2B, Winner Stays, DP-TS-UCB).

Heavy modules (numba kernels, pandas, matplotlib) are imported lazily so that one simulation cell
starts fast; importing this package imports nothing but the standard library.
"""

__version__ = "0.1.0"


class ReproError(Exception):
    """Bad input or unavailable data: the CLI prints the message on one line, without a traceback."""


def _numba_cache_dir() -> None:
    """Point numba's on-disk cache at one stable folder, and have numba file kernels by their sources there.

    numba checks a cached kernel against its own module's file only, not against a helper it inlines from
    another module (the recorder): ``banditrepro.kernel_cache.ContentKeyedLocator`` names each module's
    subfolder by a hash of its whole import closure, so every job reuses the compiled kernels and none loads a
    stale one, in this folder or in a user's NUMBA_CACHE_DIR (which wins) alike. The folder's own name carries
    no hash: the subfolders do (docs/decisions.md#kernel-cache).
    """
    import os
    import sys

    os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_base() / "numba"))
    # kernels filed by content, not by path: a fresh clone or a moved folder reuses them; numba reads this
    # when imported
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
