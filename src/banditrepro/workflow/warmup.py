"""Compile the config's kernels beside the first run's downloads and preparation (docs/decisions.md#kernel-cache).

A first run compiles every kernel it uses (about 30 CPU-s). Compiled in the jobs' threads, inside the one
Snakemake process, compilations queue behind each other (numba compiles one function at a time per process)
and behind the GIL, on about one core. ``start`` (the Snakefile's ``onstart``) launches instead a few
background processes (``python -m banditrepro.workflow.warmup``) that compile the kernels of the config's algorithms
into the shared cache, side by side with the data jobs.

A job needing a kernel and a warm-up process compiling it must not both compile: each holds the kernel's
lock (``kernel_cache.kernel_lock``, a ``flock`` on a file in the cache folder, waited for at most two
minutes and given up on a stop request) while it loads or compiles, so whoever comes second loads what the
first cached. With every module's kernels cached (a warm run) nothing is launched; nothing waits for a warm-up
either, and a failed one costs only the compile it did not do. Only the kernels' types matter: the warm-up runs
each algorithm for one step on a small instance of its kind, whose arrays have the types of every prepared
instance (read-only float64, C order).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from banditrepro.workflow.cells import kernel_name

# the warm-up's own instances: a Condorcet matrix and Bernoulli arms, as every prepared dataset is one of these
_MATRIX = [[0.5, 0.6, 0.7], [0.4, 0.5, 0.6], [0.3, 0.4, 0.5]]
_MEANS = [0.9, 0.5, 0.1]


def compile_algorithm(algo_id: str) -> None:
    """Load or compile ``algo_id``'s kernel (with its parameters' types) into the cache."""
    from banditrepro.algorithms import get, parse_algorithm_id
    from banditrepro.cell import run_cells
    from banditrepro.instances import BernoulliArms, PreferenceMatrix

    name, params = parse_algorithm_id(algo_id)
    spec = get(name)
    instance = PreferenceMatrix(_MATRIX, name="warm-up") if spec.problem == "duel" else BernoulliArms(
        _MEANS, name="warm-up")
    run_cells(name, params, instance, 1, [0], 0)


def preload(algos) -> None:
    """Before a batch computes its shards: load (or compile) each algorithm's kernel under its module's lock, so
    that a warm-up process compiling it is waited for, not raced. Once loaded in this process, a call costs
    about a millisecond (a one-step run on a 3-arm instance). Errors are left to the shards, which report
    them with the cell they belong to; a stop request while waiting for a lock stops the batch (``Stopped``)."""
    from banditrepro.kernel_cache import kernel_lock
    from banditrepro.workflow.stop import Stopped, wait

    for algo in dict.fromkeys(algos):
        try:
            with kernel_lock(kernel_name(algo), wait=wait):
                compile_algorithm(algo)
        except Stopped:
            raise  # not an error of the cell's: the batch ends as on a stop between its shards
        except Exception:  # noqa: BLE001, S110 - see the docstring
            pass


def algorithm_ids(plan) -> list[str]:
    """The algorithm ids of the plan's cells, most runs first (the ones the run needs longest)."""
    from banditrepro.workflow.cells import split_key

    runs: dict[str, int] = {}
    for key, n in plan.cell_runs.items():
        algo = split_key(key)[2]
        runs[algo] = runs.get(algo, 0) + n
    return sorted(runs, key=lambda a: (-runs[a], a))


def uncached(algos: list[str]) -> list[str]:
    """The built-in algorithms among ``algos`` whose module has no cached kernels for its import closure's
    current bytes (``kernel_cache.module_cached``: the key the locator files them under). Plugins are left to
    their jobs: their cache folders are their own (banditrepro.plugins)."""
    from banditrepro.algorithms.builtin import MODULES
    from banditrepro.kernel_cache import module_cached

    folder = os.environ.get("NUMBA_CACHE_DIR")
    if not folder:
        return []
    pkg = Path(__file__).parents[1] / "algorithms"
    out = []
    for algo in algos:
        name = kernel_name(algo)
        if name in MODULES and not module_cached(folder, f"banditrepro.algorithms.{MODULES[name]}",
                                                 str(pkg / f"{MODULES[name]}.py")):
            out.append(algo)
    return out


def modules_dealt(algos: list[str], n: int) -> list[list[str]]:
    """``algos`` (most runs first) in ``n`` shares for the warm-up processes, whole kernel modules dealt in
    turn in the order of their first algorithm. Dealt one algorithm at a time, two algorithms of one module
    (``rmed1``, ``rmed2``) went to two processes, and the second waited on the module's lock while the first
    compiled it: the default config's warm-up took 20.6–21.7 s instead of 17.0–17.7 s (2 processes, idle)."""
    from banditrepro.algorithms.builtin import MODULES

    modules: dict[str, list[str]] = {}
    for algo in algos:
        name = kernel_name(algo)
        modules.setdefault(MODULES.get(name, name), []).append(algo)
    shares: list[list[str]] = [[] for _ in range(n)]
    for k, group in enumerate(modules.values()):
        shares[k % n].extend(group)
    return [share for share in shares if share]


def start(plan, cores: int, log: str | Path) -> list[subprocess.Popen]:
    """Launch ``min(cores, 2)`` warm-up processes sharing the plan's algorithms whose kernels are not cached
    (none if all are, and none on a cluster: there the kernels compile on the nodes, and the submitting host
    may have no cores to spare)."""
    if plan.config.get("batch_minutes") or cores < 2:
        return []
    algos = uncached(algorithm_ids(plan))
    n = min(cores, 2, len(algos))
    if not n:
        return []
    log = Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    shares = modules_dealt(algos, n)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                                      os.environ.get("PYTHONPATH")]))}
    procs = []
    with open(log, "w") as out:
        for share in shares:
            procs.append(subprocess.Popen([sys.executable, "-m", "banditrepro.workflow.warmup", *share], env=env,
                                          stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                          start_new_session=True))
    import atexit

    atexit.register(reap, procs)
    return procs


def on_start(plan, workflow) -> list[subprocess.Popen]:
    """The Snakefile's ``onstart`` hook: ``start`` with the run's cores (a run without ``--cores``: none)."""
    try:
        cores = int(workflow.cores)
    except Exception:  # noqa: BLE001 - Snakemake raises its own error when the cores are not set
        return []
    return start(plan, cores, plan.data_log("warmup", "kernels"))


def reap(procs) -> None:
    """At the run's end: collect the warm-up processes that have ended (long before, in a first run), so their CPU
    counts among the run's children (``getrusage``, ``time``), as every job's does; one still compiling is left
    to finish on its own."""
    for proc in procs:
        proc.poll()


def main(argv: list[str]) -> int:
    import time

    from banditrepro.kernel_cache import kernel_lock
    from banditrepro.workflow.stop import wait

    for algo in argv:
        start = time.process_time()
        try:
            with kernel_lock(kernel_name(algo), wait=wait):
                compile_algorithm(algo)
        except Exception as exc:  # noqa: BLE001 - the job compiles it then, and reports any error itself
            print(f"{algo}: not compiled ahead ({type(exc).__name__}: {exc})", flush=True)
            continue
        print(f"{algo}: ready in {time.process_time() - start:.2f} CPU-s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
