"""Compile the config's kernels beside the first run's downloads and preparation (docs/decisions.md#kernel-cache).

A first run compiles every kernel it uses (about 35 CPU-s). Compiled in the jobs' threads, inside the one
Snakemake process, compilations queue behind each other (numba compiles one function at a time per process)
and behind the GIL, on about one core. ``start`` (the Snakefile's ``onstart``) launches instead a few
background processes (``python -m banditrepro.warmup``) that compile the kernels of the config's algorithms
into the shared cache, side by side with the data jobs.

A job needing a kernel and a warm-up process compiling it must not both compile: each holds the kernel's
lock (``kernel_lock``, a ``flock`` on a file in the cache folder) while it loads or compiles, so whoever comes
second loads what the first cached. On a warm cache the warm-up loads and exits within about a second per
process; nothing waits for it, and a failed warm-up costs only the compile it did not do. Only the kernels'
types matter: the warm-up runs each algorithm for one step on a small instance of its kind, whose arrays
have the types of every prepared instance (read-only float64, C order).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

# the warm-up's own instances: a Condorcet matrix and Bernoulli arms, as every prepared dataset is one of these
_MATRIX = [[0.5, 0.6, 0.7], [0.4, 0.5, 0.6], [0.3, 0.4, 0.5]]
_MEANS = [0.9, 0.5, 0.1]


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


def algorithm_ids(plan) -> list[str]:
    """The algorithm ids of the plan's cells, most runs first (the ones the run needs longest)."""
    from banditrepro.workflow.plan import split_key

    runs: dict[str, int] = {}
    for key, n in plan.cell_runs.items():
        algo = split_key(key)[2]
        runs[algo] = runs.get(algo, 0) + n
    return sorted(runs, key=lambda a: (-runs[a], a))


def uncached(algos: list[str]) -> list[str]:
    """The built-in algorithms among ``algos`` whose module has no cached kernels for its current source
    (plugins are left to their jobs: their cache folders are their own, banditrepro.plugins)."""
    from banditrepro.algorithms.builtin import MODULES
    from banditrepro.kernel_cache import module_cached

    folder = os.environ.get("NUMBA_CACHE_DIR")
    if not folder:
        return []
    pkg = Path(__file__).parent / "algorithms"
    out = []
    for algo in algos:
        name = algo.split("+")[0]
        if name in MODULES and not module_cached(folder, f"banditrepro.algorithms.{MODULES[name]}",
                                                 str(pkg / f"{MODULES[name]}.py")):
            out.append(algo)
    return out


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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[1]),
                                                                      os.environ.get("PYTHONPATH")]))}
    procs = []
    with open(log, "w") as out:
        for i in range(n):
            procs.append(subprocess.Popen([sys.executable, "-m", "banditrepro.warmup", *algos[i::n]], env=env,
                                          stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                          start_new_session=True))
    return procs


def on_start(plan, workflow) -> list[subprocess.Popen]:
    """The Snakefile's ``onstart`` hook: ``start`` with the run's cores (a run without ``--cores``: none)."""
    try:
        cores = int(workflow.cores)
    except Exception:  # noqa: BLE001 - Snakemake raises its own error when the cores are not set
        return []
    return start(plan, cores, plan.data_log("warmup", "kernels"))


def main(argv: list[str]) -> int:
    import time

    for algo in argv:
        start = time.process_time()
        try:
            compile_algorithm(algo)  # under the kernel's lock (run_cells)
        except Exception as exc:  # noqa: BLE001 - the job compiles it then, and reports any error itself
            print(f"{algo}: not compiled ahead ({type(exc).__name__}: {exc})", flush=True)
            continue
        print(f"{algo}: ready in {time.process_time() - start:.2f} CPU-s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
