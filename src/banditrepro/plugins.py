"""Algorithms from other packages, registered under the entry-point group ``banditrepro.algorithms``.

The contract (README, "Extending"; example: ``examples/plugin``):

* **Registration.** In the plugin's ``pyproject.toml``::

      [project.entry-points."banditrepro.algorithms"]
      my-algo = "my_package.module:SPEC"

  The entry-point name is the algorithm's name (lower case, digits, '-'; it becomes part of file
  names) and must equal ``SPEC.name``. A name of a built-in algorithm is an error, never an override.
* **The spec** is a ``banditrepro.algorithms.AlgorithmSpec``: ``label`` (legend text; say
  "(reconstructed)" if it is one), ``problem`` ("duel": preference-matrix instances, or "mab":
  Bernoulli arms), ``citation``, ``params`` and ``run``.
* **Parameters** are ``Param(name, kind, default, doc, low=, high=, low_open=, high_open=, allow_none=)``
  with kind "float" | "int" | "bool" | "str". Manifests and ``--param key=value`` are coerced and
  range-checked against them (a one-line ``ReproError`` otherwise); the defaults must pass the same
  checks. Cell ids list the parameters that differ from the defaults (``my-algo+eta=0.2``).
* **The kernel** ``run(instance, T, tab, grid, rng, **params) -> (out, n_batches, steps)``:
  ``instance.P`` (K×K, ``P[i, j]`` = Pr(i beats j)) or ``instance.means``; ``T`` the horizon;
  ``tab[m, i, j]`` the regret of playing the pair (i, j) for one step under metric m (a MAB pull of
  arm i is (i, i)); ``grid`` the sorted int64 steps at which to report (last = T); ``rng`` the cell's
  ``np.random.Generator``: the only source of randomness allowed (common random numbers,
  docs/decisions.md#seeds-and-runs).
  It returns ``out[m, g]`` = cumulative regret of metric m after ``grid[g]`` steps (float64, shape
  ``(tab.shape[0], grid.size)``), the number of batches used (0 if not batched) and the number of
  steps played (must be T). ``Recorder`` below keeps this bookkeeping for a plain-Python kernel; a
  numba kernel uses ``banditrepro.recorder`` as ours do. ``run`` is also called once with T = 1 to
  load the kernel before the timed run.
* **Condorcet winner.** Every dueling instance has one (datasets without are refused when prepared,
  because the regret metrics are defined against it), so a kernel may rely on its existence but must
  learn it from duels, never read it from ``instance``.
* **Speed.** A plain-Python kernel works, about 100 times slower than a compiled one (a one-line
  warning says so once per process). Kernels compiled with ``numba.njit(cache=True)`` at module level
  are cached like ours: in ``~/.cache/banditrepro/plugin-<name>-<key>`` (inside ``NUMBA_CACHE_DIR`` if the
  user set one), where the key hashes the bytes of every ``.py`` file of the plugin's top-level package and of
  the import closure of the ``banditrepro`` modules they import (``banditrepro.kernel_cache``), so a change
  to either (including an inlined helper in another module) recompiles instead of loading a stale kernel.

Entry points are scanned only when a name is not built in, or when algorithms are listed, so the
workflow's parse time does not pay for them.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
import sys
import threading
from importlib import metadata, util
from pathlib import Path

import numpy as np

from banditrepro import ReproError, cache_base
from banditrepro.algorithms.base import AlgorithmSpec
from banditrepro.algorithms.builtin import MODULES

GROUP = "banditrepro.algorithms"
NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
_LOCK = threading.RLock()
_found: dict[str, metadata.EntryPoint] | None = None
_loaded: dict[str, AlgorithmSpec] = {}
_warned: set[str] = set()


def origin(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist else ep.value


def entry_points() -> dict[str, metadata.EntryPoint]:
    """Installed plugins, name -> entry point (scanned once per process; nothing is imported)."""
    global _found
    with _LOCK:
        if _found is None:
            found: dict[str, metadata.EntryPoint] = {}
            for ep in metadata.entry_points(group=GROUP):
                where = f"plugin algorithm {ep.name!r} ({origin(ep)}, {ep.value})"
                if ep.name in MODULES:
                    raise ReproError(f"{where} has the name of a built-in algorithm; rename its entry point")
                if not NAME.fullmatch(ep.name):
                    raise ReproError(f"{where}: names are lower-case letters, digits and '-'")
                if ep.name in found and found[ep.name].value != ep.value:
                    raise ReproError(f"{where} is also registered by {origin(found[ep.name])}")
                found[ep.name] = ep
            _found = found
        return _found


def load(name: str) -> AlgorithmSpec | None:
    """The plugin's spec (validated, kernel output checked), or None if no plugin has this name."""
    with _LOCK:
        if name not in _loaded:
            ep = entry_points().get(name)
            if ep is None:
                return None
            spec = _checked(name, _import(ep), ep)
            _loaded[name] = spec
        return _loaded[name]


def cache_dir(ep: metadata.EntryPoint) -> Path:
    """Where numba caches this plugin's kernels: keyed on the plugin's sources and the package modules they
    import, with those modules' closures (the recorder a kernel inlines)."""
    top = ep.value.partition(":")[0].split(".")[0]
    spec = util.find_spec(top)
    if spec is None or spec.origin is None:
        raise ReproError(f"plugin algorithm {ep.name!r}: module {top!r} not found ({ep.value})")
    root = Path(spec.origin).parent
    files = sorted(root.rglob("*.py")) if spec.submodule_search_locations else [Path(spec.origin)]
    # imported by name, out of the static import walk: every kernel's cache key covers this module's import
    # closure (the registry imports it), which must not take in kernel_cache's and digests' imports
    kernel_cache = importlib.import_module("banditrepro.kernel_cache")
    key = kernel_cache.outside_digest((path.relative_to(root).as_posix(), path) for path in files)
    return _plugins_base() / f"plugin-{ep.name}-{key[:16]}"


def _plugins_base() -> Path:
    """The folder of plugins' cache folders: beside ours, or inside the user's NUMBA_CACHE_DIR (which wins)."""
    folder = os.environ.get("NUMBA_CACHE_DIR")
    return cache_base() if Path(folder) == cache_base() / "numba" else Path(folder)


def _import(ep: metadata.EntryPoint):
    """Load the entry point with numba's cache pointed at the plugin's own folder.

    numba picks a kernel's cache folder when ``njit(cache=True)`` decorates it, i.e. while the plugin's
    module is imported; ours is restored right after. Our locator keys a plugin module's folder by its own file
    (and the ``banditrepro`` modules it imports) only: the plugin's folder, keyed by all its files, covers a
    helper inlined from another of its modules, also under a user's NUMBA_CACHE_DIR. An empty one (numba's
    caching by ``__pycache__``) is left alone.
    """
    try:
        if not os.environ.get("NUMBA_CACHE_DIR"):
            return ep.load()
        import numba.core.config as numba_config

        import banditrepro.recorder  # noqa: F401  (ours, cached in our folder, before the switch)

        previous = numba_config.CACHE_DIR
        numba_config.CACHE_DIR = str(cache_dir(ep))
        try:
            return ep.load()
        finally:
            numba_config.CACHE_DIR = previous
    except ReproError:
        raise
    except Exception as exc:  # a broken plugin is named on one line, whatever it raised
        raise ReproError(f"plugin algorithm {ep.name!r} ({ep.value}) failed to load: "
                         f"{type(exc).__name__}: {exc}") from None


def is_compiled(spec: AlgorithmSpec) -> bool:
    """True if ``run`` is a numba function or its module defines one (then the kernel is compiled)."""
    from numba.core.registry import CPUDispatcher

    home = getattr(spec.run, "__module__", "")
    members = list(vars(sys.modules[home]).values()) if home in sys.modules else []
    return any(isinstance(x, CPUDispatcher) and x.py_func.__module__ == home for x in [spec.run, *members])


def _checked(name: str, spec, ep: metadata.EntryPoint) -> AlgorithmSpec:
    where = f"plugin algorithm {name!r} ({origin(ep)})"
    if not isinstance(spec, AlgorithmSpec):
        raise ReproError(f"{where}: {ep.value} is a {type(spec).__name__}, expected an AlgorithmSpec")
    if spec.name != name:
        raise ReproError(f"{where}: the spec is named {spec.name!r}; the entry point must carry the same name")
    if spec.problem not in ("duel", "mab"):
        raise ReproError(f"{where}: problem must be 'duel' or 'mab', got {spec.problem!r}")
    if not callable(spec.run):
        raise ReproError(f"{where}: run is not callable")
    for p in spec.params:
        if not p.name.isidentifier() or p.kind not in ("float", "int", "bool", "str"):
            raise ReproError(f"{where}: bad parameter {p.name!r} of kind {p.kind!r}")
    spec.resolve({})  # the defaults must pass their own checks
    compiled = is_compiled(spec)
    kernel = spec.run

    def run(instance, T, tab, grid, rng, **params):
        if not compiled and name not in _warned:
            _warned.add(name)
            print(f"banditrepro: warning: {name} has a plain-Python kernel (no numba): expect cells "
                  "100x or more slower than compiled ones", file=sys.stderr)
        result = kernel(instance, T, tab, grid, rng, **params)
        try:
            out, n_batches, steps = result
        except (TypeError, ValueError):
            raise ReproError(f"{where}: run must return (out, n_batches, steps)") from None
        out = np.asarray(out, dtype=np.float64)
        if out.shape != (tab.shape[0], grid.shape[0]):
            raise ReproError(f"{where}: run returned out of shape {out.shape}, expected "
                             f"{(tab.shape[0], grid.shape[0])} (metrics x grid points)")
        if not np.all(np.isfinite(out)):
            raise ReproError(f"{where}: run returned non-finite regret")
        return out, int(n_batches), int(steps)

    return dataclasses.replace(spec, run=run)


class Recorder:
    """Plain-Python bookkeeping of a kernel's regret at the grid points (``banditrepro.recorder``'s).

    ``play(i, j, n)`` accounts ``n`` plays of the pair (i, j) (a MAB pull of arm i is (i, i));
    ``result(n_batches)`` is what ``run`` returns. Same float arithmetic as the compiled recorder, so
    the same plays give the same numbers; Python lists, not numpy, because per-step numpy calls on
    arrays of 5 metrics cost more than the arithmetic.
    """

    def __init__(self, tab: np.ndarray, grid: np.ndarray):
        self.rows = tab.transpose(1, 2, 0).tolist()  # rows[i][j] = per-step regret of (i, j), every metric
        self.grid = [int(t) for t in grid]
        self.cum = [0.0] * tab.shape[0]
        self.out = np.zeros((tab.shape[0], len(self.grid)))
        self.steps = 0
        self.next = 0  # index of the next grid point

    def play(self, i: int, j: int, n: int = 1) -> None:
        row, cum, grid = self.rows[i][j], self.cum, self.grid
        while n > 0:
            g = self.next
            k = min(n, grid[g] - self.steps) if g < len(grid) else n
            for m, r in enumerate(row):
                cum[m] += k * r
            self.steps += k
            n -= k
            if g < len(grid) and self.steps == grid[g]:
                self.out[:, g] = cum
                self.next += 1

    def result(self, n_batches: int = 0) -> tuple[np.ndarray, int, int]:
        return self.out, n_batches, self.steps
