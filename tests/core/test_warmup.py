"""The first run's kernel warm-up (banditrepro.workflow.warmup, docs/decisions.md#kernel-cache): what it compiles is
what a job on a prepared instance loads (no second compile), a job and a warm-up never compile one module at once,
and a warm cache, a cluster run or a single core launch nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from banditrepro.kernel_cache import kernel_lock
from banditrepro.workflow import stop, warmup

SRC = Path(__file__).resolve().parents[2] / "src"

# a job's kernel load on an instance unlike the warm-up's (4 arms, other numbers): numba's cache statistics
JOB = """
import json, numba
from banditrepro.cell import run_cells
from banditrepro.instances import PreferenceMatrix
import banditrepro.algorithms.rucb as m
P = [[0.5, 0.55, 0.8, 0.9], [0.45, 0.5, 0.7, 0.6], [0.2, 0.3, 0.5, 0.52], [0.1, 0.4, 0.48, 0.5]]
run_cells("rucb", None, PreferenceMatrix(P, name="job"), 50, [0], 3)
d = [v for v in vars(m).values()
     if isinstance(v, numba.core.registry.CPUDispatcher) and v.py_func.__module__ == m.__name__]
print(json.dumps({"hits": sum(sum(k.stats.cache_hits.values()) for k in d),
                  "misses": sum(sum(k.stats.cache_misses.values()) for k in d)}))
"""


def env_with_cache(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(SRC))
    return env


def test_warm_up_compiles_what_a_job_loads(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    env = env_with_cache(cache)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    assert warmup.uncached(["rucb", "rmed1"]) == ["rucb", "rmed1"]
    out = subprocess.run([sys.executable, "-m", "banditrepro.workflow.warmup", "rucb"], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.startswith("rucb: ready in ")
    assert warmup.uncached(["rucb", "rmed1"]) == ["rmed1"]
    job = json.loads(subprocess.run([sys.executable, "-c", JOB], env=env, check=True, capture_output=True,
                                    text=True).stdout.splitlines()[-1])
    assert job["misses"] == 0 and job["hits"] >= 1


# takes a module's lock (rmed2: the module of rmed1) and prints when it got it
LOCKER = """
import sys, time
from banditrepro.kernel_cache import kernel_lock
with kernel_lock(sys.argv[1], wait=time.sleep):
    print(time.time(), flush=True)
"""


def test_one_module_compiles_in_one_place_at_a_time(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    env = env_with_cache(cache)
    with kernel_lock("rmed1", wait=stop.wait):
        same = subprocess.Popen([sys.executable, "-c", LOCKER, "rmed2"], env=env, stdout=subprocess.PIPE, text=True)
        other = subprocess.run([sys.executable, "-c", LOCKER, "rucb"], env=env, check=True, capture_output=True,
                               text=True)
        time.sleep(1.0)
        released = time.time()
    got = float(same.communicate(timeout=60)[0])
    assert got >= released  # rmed2 shares rmed1's module: it waited for the release
    assert float(other.stdout) < released  # another module's lock was free all along


def test_nothing_launched_on_a_cluster_on_one_core_or_a_warm_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    plan = SimpleNamespace(config={"batch_minutes": None}, cell_runs={"six-rankers/T1000/rucb": 20})
    assert warmup.start(SimpleNamespace(config={"batch_minutes": 20}, cell_runs=plan.cell_runs), 2,
                        tmp_path / "log") == []
    assert warmup.start(plan, 1, tmp_path / "log") == []
    monkeypatch.setattr(warmup, "uncached", lambda algos: [])
    assert warmup.start(plan, 2, tmp_path / "log") == []
    assert not (tmp_path / "log").exists()


def test_algorithms_ordered_by_their_runs():
    plan = SimpleNamespace(cell_runs={"a/T10/rucb": 20, "b/T10/rucb": 20, "a/T10/c2b": 100, "a/T10/btm": 20})
    assert warmup.algorithm_ids(plan) == ["c2b", "rucb", "btm"]


def test_each_module_goes_to_one_warm_up_process_in_priority_order():
    from banditrepro.algorithms.builtin import MODULES

    algos = ["rmed1", "c2b-kl", "rmed2", "rucb", "rmed1+alpha=0.6", "c2b-kl+pairs=literal", "btm"]
    shares = warmup.modules_dealt(algos, 2)
    assert shares == [["rmed1", "rmed2", "rmed1+alpha=0.6", "rucb"], ["c2b-kl", "c2b-kl+pairs=literal", "btm"]]
    owner = {MODULES[a.split("+")[0]]: i for i, share in enumerate(shares) for a in share}
    assert all(owner[MODULES[a.split("+")[0]]] == i for i, share in enumerate(shares) for a in share)
    assert warmup.modules_dealt(["rmed1", "rmed2"], 2) == [["rmed1", "rmed2"]]  # no empty process


def test_preload_leaves_errors_to_the_shards(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    warmup.preload(["no-such-algorithm", "rucb+alpha=oops"])  # the batch's shards report these, naming the cell


def test_preload_stops_on_a_stop_request_while_it_waits(tmp_path, monkeypatch):
    # a batch waiting for a warm-up's compile ends on Ctrl-C / SIGTERM, not after it (nor after two minutes)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    release, taken = threading.Event(), threading.Event()

    def hold():
        with kernel_lock("rucb", wait=stop.wait):
            taken.set()
            release.wait(10)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        assert taken.wait(10)
        stop.request("SIGINT")
        with pytest.raises(stop.Stopped):
            warmup.preload(["rucb"])
    finally:
        release.set()
        holder.join()
        stop.reset()


def test_on_start_without_cores_launches_nothing(tmp_path, monkeypatch):
    class NoCores:
        @property
        def cores(self):
            raise RuntimeError("Workflow requires a total number of cores to be defined")

    plan = SimpleNamespace(config={"batch_minutes": None}, cell_runs={"six-rankers/T1000/rucb": 20},
                           data_log=lambda kind, name: f"logs/{kind}/{name}.log")
    monkeypatch.setattr(warmup, "start", lambda *a: ["launched"])
    assert warmup.on_start(plan, NoCores()) == []
    assert warmup.on_start(plan, SimpleNamespace(cores=2)) == ["launched"]


def test_ended_warm_ups_count_among_the_runs_children():
    # the first run's CPU (getrusage of the children, `time`) must include the compile the warm-up did
    import resource

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    proc = subprocess.Popen([sys.executable, "-c", burn])
    while not _ended(proc.pid):  # not proc.poll(): that would reap it here
        time.sleep(0.01)
    def cpu():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    before = cpu()
    warmup.reap([proc])
    assert cpu() - before >= 0.25
    assert proc.returncode == 0


def _ended(pid: int) -> bool:
    """The process has exited and waits to be reaped (a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
