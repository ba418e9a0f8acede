"""The content-keyed numba cache (banditrepro.kernel_cache, docs/decisions.md#kernel-cache): a moved copy of a
module reuses its compiled kernels, an edit recompiles, and a numba whose internals changed costs a recompile
with one warning, never a failure. Each import runs in a new interpreter, as a fresh clone's jobs do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

KERNEL = """
from numba import njit


@njit(cache=True)
def kernel(n):
    total = 0.0
    for i in range(n):
        total += i * {factor}
    return total
"""

# imports the module from `folder`, calls its kernel, reports whether numba loaded it from the cache
PROBE = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import banditrepro  # installs the locator (sets NUMBA_CACHE_LOCATOR_CLASSES)
    sys.path.insert(0, sys.argv[1])
    {setup}
    import kmod
    value = kmod.kernel(10)
stats = kmod.kernel.stats
print(json.dumps({{"value": value, "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values()),
                  "warnings": [str(w.message) for w in caught], "cache_path": kmod.kernel._cache._cache_path}}))
"""


def probe(folder: Path, cache: Path, setup: str = "pass") -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(SRC), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", PROBE.format(setup=setup), str(folder)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def write_module(folder: Path, factor: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kmod.py").write_text(KERNEL.format(factor=factor))


def test_moved_copy_reuses_the_cache(tmp_path):
    cache = tmp_path / "cache"
    write_module(tmp_path / "a", 2)
    first = probe(tmp_path / "a", cache)
    assert (first["hits"], first["misses"]) == (0, 1)
    # the same bytes elsewhere, written later (another path, another mtime): what a fresh clone is
    time.sleep(0.01)
    write_module(tmp_path / "elsewhere" / "b", 2)
    moved = probe(tmp_path / "elsewhere" / "b", cache)
    assert (moved["hits"], moved["misses"]) == (1, 0)
    assert moved["value"] == first["value"] == 90.0
    assert moved["cache_path"] == first["cache_path"]
    assert str(tmp_path / "a") not in first["cache_path"]  # filed by module and content, not by folder
    assert not first["warnings"] and not moved["warnings"]


def test_an_edit_recompiles(tmp_path):
    cache = tmp_path / "cache"
    write_module(tmp_path / "a", 2)
    probe(tmp_path / "a", cache)
    write_module(tmp_path / "a", 3)  # same path, new content
    edited = probe(tmp_path / "a", cache)
    assert (edited["hits"], edited["misses"]) == (0, 1)
    assert edited["value"] == 135.0
    write_module(tmp_path / "a", 2)  # reverted: the first compilation is found again
    reverted = probe(tmp_path / "a", cache)
    assert (reverted["hits"], reverted["misses"]) == (1, 0)


BROKEN = "import numba.core.caching as c; c._CacheLocator = None  # numba's internals 'changed'"


def test_changed_numba_internals_fall_back_with_one_warning(tmp_path):
    cache = tmp_path / "cache"
    write_module(tmp_path / "a", 2)
    broken = probe(tmp_path / "a", cache, setup=BROKEN)
    assert broken["value"] == 90.0
    assert len(broken["warnings"]) == 1 and "numba's cache internals changed" in broken["warnings"][0]
    # numba's default locator took over: it still caches, under the folder's path hash
    assert broken["misses"] == 1 and Path(broken["cache_path"]).parent == cache
    again = probe(tmp_path / "a", cache, setup=BROKEN)
    assert again["hits"] == 1


# a kernel numba compiles but cannot cache: it calls a C function through ctypes, whose address is baked in
UNCACHABLE = """
import ctypes, ctypes.util
from numba import njit

_labs = ctypes.CDLL(ctypes.util.find_library("c")).labs
_labs.restype, _labs.argtypes = ctypes.c_long, [ctypes.c_long]


@njit(cache=True)
def kernel(n):
    return float(_labs(-n) * 9)
"""


def test_a_kernel_numba_cannot_cache_warns_and_runs(tmp_path):
    # numba's "cannot cache" warning names the locator's source file; a locator without it crashed the compile
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "kmod.py").write_text(UNCACHABLE)
    out = probe(tmp_path / "a", tmp_path / "cache")
    assert out["value"] == 90.0
    assert any("Cannot cache compiled function" in w for w in out["warnings"]), out["warnings"]

def test_package_import_sets_the_locator_unless_the_user_did():
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(SRC)
    code = "import os, banditrepro; print(os.environ['NUMBA_CACHE_LOCATOR_CLASSES'])"
    ours = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    assert ours.stdout.strip() == "banditrepro.kernel_cache.ContentKeyedLocator"
    env["NUMBA_CACHE_LOCATOR_CLASSES"] = "UserProvidedCacheLocator"
    theirs = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    assert theirs.stdout.strip() == "UserProvidedCacheLocator"


@pytest.mark.parametrize("module", ["banditrepro.recorder", "banditrepro.algorithms.c2b"])
def test_builtin_kernels_use_the_content_keyed_folder(module, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=str(SRC), NUMBA_CACHE_DIR=str(tmp_path))
    code = (f"import importlib, numba; m = importlib.import_module({module!r}); "  # numba first: still ours
            "d = [v for v in vars(m).values() if isinstance(v, numba.core.registry.CPUDispatcher) "
            "and v.py_func.__module__ == m.__name__][0]; "
            "print(d._cache._cache_path)")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    assert Path(out.stdout.strip()).name.startswith(module + "-")
