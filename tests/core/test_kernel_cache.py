"""The content-keyed numba cache (banditrepro.kernel_cache, docs/decisions.md#kernel-cache): a moved copy of a
module reuses its compiled kernels, an edit of the module or of any package module it imports recompiles (in
the user's NUMBA_CACHE_DIR too), and a numba whose internals changed costs a recompile with one warning, never
a failure. Each import runs in a new interpreter, as a fresh clone's jobs do. The compile lock's wait ends on
a stop request and after a timeout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from banditrepro import closure, kernel_cache
from banditrepro.kernel_cache import kernel_lock, module_cached
from banditrepro.workflow import stop

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
            "from banditrepro import kernel_cache as k; "
            "print(d._cache._cache_path); print(k.folder_name(m.__name__, k.source_digest(m.__name__, m.__file__)))")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    cache_path, expected = out.stdout.split()
    assert Path(cache_path).name.startswith(module + "-")
    assert Path(cache_path) == tmp_path / expected  # the folder module_cached (the warm-up) looks in


def test_the_default_cache_folder_is_one_stable_folder(tmp_path):
    # the per-module folders carry the sources' hash; the folder holding them must not, or a user's
    # NUMBA_CACHE_DIR (which has none) would behave otherwise than ours
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=str(SRC), XDG_CACHE_HOME=str(tmp_path))
    code = "import os, banditrepro; print(os.environ['NUMBA_CACHE_DIR'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    assert Path(out.stdout.strip()) == tmp_path / "banditrepro" / "numba"


# --- keyed by the closure: an edit of an imported module (the recorder every kernel inlines) -------------


def copy_package(tmp_path: Path) -> Path:
    """A copy of the package's sources (a second checkout), to edit without touching this one; its src folder."""
    src = tmp_path / "src"
    shutil.copytree(SRC / "banditrepro", src / "banditrepro", ignore=shutil.ignore_patterns("__pycache__"))
    return src


# RUCB's final regret on a 4-arm matrix, from the package on PYTHONPATH (checked: the copy, not this checkout)
RUCB = """
import banditrepro, sys
from banditrepro.cell import run_cells
from banditrepro.instances import PreferenceMatrix
assert banditrepro.__file__.startswith(sys.argv[1]), banditrepro.__file__
P = [[0.5, 0.55, 0.8, 0.9], [0.45, 0.5, 0.7, 0.6], [0.2, 0.3, 0.5, 0.52], [0.1, 0.4, 0.48, 0.5]]
print(repr(float(run_cells("rucb", {}, PreferenceMatrix(P, name="t"), 2000, [0], 3)[0].curves["regret"][-1])))
"""

# the recorder's increment, doubled: every regret doubles (exactly: a factor of 2 is exact in floating point)
INCREMENT = ("cum[m] += k * tab[m, i, j]", "cum[m] += 2 * k * tab[m, i, j]")


def final_regret(src: Path, cache: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-c", RUCB, str(src)], env=env, check=True, capture_output=True,
                         text=True).stdout
    return float(out.splitlines()[-1])


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path.name} no longer holds {old!r}: update the test's edit"
    path.write_text(text.replace(old, new))


def test_an_edited_recorder_changes_the_numbers_under_a_users_cache(tmp_path):
    # the filed issue: with NUMBA_CACHE_DIR set, doubling the recorder's increment left RUCB's regret as it was
    src = copy_package(tmp_path)
    users = tmp_path / "users-cache"
    before = final_regret(src, users)
    assert before > 0
    edit(src / "banditrepro" / "recorder.py", *INCREMENT)
    after = final_regret(src, users)
    assert after == final_regret(src, tmp_path / "empty-cache") == 2 * before


def test_module_cached_follows_the_closure(tmp_path):
    # the warm-up skips a module whose kernels are cached: only if cached for every module they compile from
    src = copy_package(tmp_path)
    pkg, cache = src / "banditrepro", tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(src))
    subprocess.run([sys.executable, "-m", "banditrepro.workflow.warmup", "rucb"], env=env, check=True,
                   capture_output=True)
    rucb = (str(cache), "banditrepro.algorithms.rucb", str(pkg / "algorithms" / "rucb.py"))
    assert module_cached(*rucb)
    walked = closure.closure(["banditrepro.algorithms.rucb"], pkg)
    assert "banditrepro.recorder" in walked and "banditrepro.plotting" not in walked
    plotting = pkg / "plotting.py"
    plotting.write_text(plotting.read_text() + "# edited\n")  # outside RUCB's closure: still cached
    assert module_cached(*rucb)
    recorder = pkg / "recorder.py"
    original = recorder.read_text()
    recorder.write_text(original + "# a comment: bytes count, since numba records line numbers\n")
    assert not module_cached(*rucb)
    recorder.write_text(original)
    assert module_cached(*rucb)


def test_a_module_outside_the_package_is_keyed_by_the_package_modules_it_imports(tmp_path):
    # a plugin's kernel that inlines banditrepro.recorder, as the plugin contract suggests
    src = copy_package(tmp_path)
    (tmp_path / "plug").mkdir()
    kmod = tmp_path / "plug" / "kmod.py"
    kmod.write_text("from banditrepro.recorder import record\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(src)
    code = "import sys; from banditrepro import kernel_cache as k; print(k.source_digest('kmod', sys.argv[1]))"

    def key() -> str:
        return subprocess.run([sys.executable, "-c", code, str(kmod)], env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    first = key()
    edit(src / "banditrepro" / "recorder.py", *INCREMENT)
    assert key() != first


# --- the compile lock: bounded, and ended by a stop request ------------------------------------------------


@pytest.fixture
def held(tmp_path, monkeypatch):
    """Start a thread holding ``algorithm``'s lock (in the test's cache folder) until the test ends, at most
    ``seconds``; a blocking lock would make the waiter wait that long."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    release, threads = threading.Event(), []

    def start(algorithm: str, seconds: float = 10.0) -> None:
        taken = threading.Event()

        def hold():
            with kernel_lock(algorithm, wait=stop.wait):
                taken.set()
                release.wait(seconds)

        threads.append(threading.Thread(target=hold, daemon=True))
        threads[-1].start()
        assert taken.wait(10)

    yield start
    release.set()
    for thread in threads:
        thread.join()
    stop.reset()


def test_a_lock_held_past_the_timeout_is_passed_by(held, monkeypatch):
    monkeypatch.setattr(kernel_cache, "LOCK_TIMEOUT", 0.3)
    held("rmed1")
    start = time.monotonic()
    with pytest.warns(RuntimeWarning, match="compile lock of rmed was held for 0.3 s"):
        with kernel_lock("rmed2", wait=stop.wait):  # the module of rmed1: the same lock
            waited = time.monotonic() - start
    assert 0.3 <= waited < 3.0


def test_a_stop_request_ends_the_wait(held):
    held("rucb")
    threading.Timer(0.3, stop.request, args=("SIGTERM",)).start()
    start = time.monotonic()
    with pytest.raises(stop.Stopped, match="stopped on SIGTERM"):
        with kernel_lock("rucb", wait=stop.wait):
            pass
    assert time.monotonic() - start < 0.3 + 1.0  # the default timeout is two minutes: the request ended it
