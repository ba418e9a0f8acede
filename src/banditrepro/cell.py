"""One simulation cell: (algorithm + parameters, instance, horizon, run) -> regret curves on a grid.

Result files hold only deterministic content, so the same runs give the same bytes whatever the
scheduling; wall time and package versions go to a JSON sidecar beside each file. Two shapes:

- a *run file* (``write_cell``; ``banditrepro cell``): one run, every array as ``CellResult.arrays``;
- a *shard* (``write_shard``; the workflow's files): runs first..last of one cell, each per-run array
  stacked along a leading run axis (``run``, ``n_batches``, curves, finals, drawn instances), the arrays
  every run shares (grid, horizon, base seed, algorithm, instance, params, format) stored once.

Curves are float32, R(T) and R(T/2) float64 beside them, and a shard's curves are delta-encoded
(``shardformat``, docs/decisions.md#shard-format). ``load_runs`` reads either as a block of runs (a run file is
a block of one) with float32 curves.
"""

from __future__ import annotations

import errno
import json
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from banditrepro import ReproError, __version__, algorithms
from banditrepro.atomic import write_json, write_npz
from banditrepro.grid import regret_grid
from banditrepro.limits import MAX_HORIZON, MAX_HORIZON_TEXT, MAX_SEED
from banditrepro.regret import regret_table
from banditrepro.seeds import cell_generator, instance_seed_sequence
from banditrepro.shardformat import FORMAT_KEY, SHARD_FORMAT, decode_curves, encode_curves, half_index, is_curve


@dataclass
class CellResult:
    algorithm: str
    params: dict[str, Any]
    instance: str
    horizon: int
    run: int
    base_seed: int
    grid: np.ndarray
    curves: dict[str, np.ndarray]  # metric name (contains "regret") -> R(t) at grid
    n_batches: int
    wall_seconds: float
    meta: dict[str, Any] = field(default_factory=dict)
    drawn: dict[str, np.ndarray] = field(default_factory=dict)  # a generative dataset's instance of this run

    @property
    def algorithm_id(self) -> str:
        return algorithms.algorithm_id(self.algorithm, self.params)

    def describe(self) -> str:
        finals = ", ".join(f"{k}={v[-1]:.6g}" for k, v in self.curves.items())
        return (f"{self.algorithm_id} on {self.instance}, T={self.horizon}, run {self.run}: {finals} "
                f"({self.wall_seconds:.3f} s, kernel load {self.meta.get('load_seconds', 0):.3f} s)")

    def arrays(self) -> dict[str, np.ndarray]:
        arrays = {"grid": self.grid, "n_batches": np.int64(self.n_batches), "run": np.int64(self.run),
                  "horizon": np.int64(self.horizon), "base_seed": np.int64(self.base_seed),
                  "algorithm": np.str_(self.algorithm), "instance": np.str_(self.instance),
                  "params": np.str_(json.dumps(self.params, sort_keys=True)), FORMAT_KEY: np.int64(SHARD_FORMAT)}
        arrays.update(self.drawn)
        half = half_index(self.grid)
        for metric, curve in self.curves.items():
            # float32 curves for the figures; the values claims read stay float64 (docs/decisions.md#shard-format)
            arrays[metric] = np.asarray(curve, dtype=np.float32)
            arrays[f"final_{metric}"] = np.float64(curve[-1])
            arrays[f"half_{metric}"] = np.float64(curve[half] if half >= 0 else 0.0)
        return arrays

    def sidecar(self) -> dict[str, Any]:
        return {"algorithm_id": self.algorithm_id, "instance": self.instance, "horizon": self.horizon,
                "run": self.run, "wall_seconds": self.wall_seconds, "n_batches": self.n_batches,
                "versions": versions(), **self.meta}


def versions() -> dict[str, str]:
    import numba

    return {"banditrepro": __version__, "numpy": np.__version__, "numba": numba.__version__,
            "python": platform.python_version()}


def run_cell(algorithm: str, params: dict[str, Any] | None, instance, horizon: int, run: int,
             base_seed: int) -> CellResult:
    return run_cells(algorithm, params, instance, horizon, [run], base_seed)[0]


def run_cells(algorithm: str, params: dict[str, Any] | None, instance, horizon: int, runs, base_seed: int
              ) -> list[CellResult]:
    """Runs ``runs`` of one cell. What every run shares (parameters, grid, regret table of a fixed instance,
    the kernel's load) is set up once; each run draws from its own stream, so its result is the same as
    alone."""
    spec = algorithms.get(algorithm)
    resolved = spec.resolve(params)
    if int(horizon) != horizon or not 1 <= horizon <= MAX_HORIZON:
        raise ReproError(f"horizon must be an integer in [1, {MAX_HORIZON_TEXT}], got {horizon}")
    for run in runs:
        if not (0 <= run <= MAX_SEED and 0 <= base_seed <= MAX_SEED):
            raise ReproError(f"run index and base seed must be integers in [0, 2^63 - 1], got {run}, {base_seed}")
    horizon = int(horizon)
    grid = regret_grid(horizon)
    generative = getattr(instance, "generative", False)
    if not generative:
        spec.check_instance(instance)
        metrics, tab = regret_table(instance)
    plugin = {}
    if algorithm not in algorithms.MODULES:  # provenance of a plugin's cell: its distribution and version
        from banditrepro import plugins

        plugin = {"plugin": plugins.origin(plugins.entry_points()[algorithm])}
    results, load = [], None
    for run in runs:
        case, drawn = instance, {}
        if generative:
            # this run's instance, from its own stream (not the algorithm's); regret is measured on it
            case, u = instance.draw(instance_seed_sequence(base_seed, instance.name, run))
            # recorded: the utilities (they determine the matrix) and the top gap p_12 − 1/2 = (u_1 − u_2)/2
            drawn = {"instance_utilities": u, "instance_top_gap": np.float64(case.P[0, 1] - 0.5)}
            spec.check_instance(case)
            metrics, tab = regret_table(case)
        if load is None:
            # Load (or compile) the kernel on a 1-step problem first, with a throwaway generator, so the
            # wall time reported is the simulation's alone; the runs' own streams are untouched.
            start = time.perf_counter()
            spec.run(case, 1, tab, grid[:1], np.random.default_rng(0), **resolved)
            load = time.perf_counter() - start
        rng = cell_generator(base_seed, case.name, run)
        start, cpu_start = time.perf_counter(), time.thread_time()
        out, n_batches, steps = spec.run(case, horizon, tab, grid, rng, **resolved)
        wall, cpu = time.perf_counter() - start, time.thread_time() - cpu_start
        if steps != horizon:
            raise RuntimeError(f"{algorithm}: kernel ran {steps} steps, expected T={horizon}")
        curves = {m: np.ascontiguousarray(out[k]) for k, m in enumerate(metrics)}
        # CPU time of this thread in the kernel: unlike the wall time, it does not grow while other jobs
        # hold the cores. The kernel's load is counted once, on the first run.
        meta = {"load_seconds": load if not results else 0.0, "kernel_cpu_seconds": cpu, **plugin}
        results.append(CellResult(algorithm, resolved, case.name, horizon, run, base_seed, grid, curves,
                                  int(n_batches), wall, meta, drawn))
    return results


def write_cell(result: CellResult, path: str | Path, sidecar: str | Path | None = None) -> None:
    """The run's ``.npz`` (deterministic bytes) and its ``.json`` sidecar (wall time, versions). The sidecar is
    written first: the ``.npz`` is what marks the run done, so an interrupted write never leaves a finished
    run with an older run's sidecar."""
    path = Path(path)
    write_json(sidecar or path.with_suffix(".json"), result.sidecar())
    write_npz(path, result.arrays())


def simulate_to_file(algorithm_id: str, prepared: str | Path, horizon: int, run: int, base_seed: int,
                     out: str | Path, sidecar: str | Path | None = None) -> CellResult:
    """The workflow's cell job: algorithm id (``name+key=value…``) on a prepared dataset -> files."""
    from banditrepro.datasets.prepared import load_prepared

    name, params = algorithms.parse_algorithm_id(algorithm_id)
    result = run_cell(name, params, load_prepared(prepared), horizon, run, base_seed)
    write_cell(result, out, sidecar)
    return result


# arrays every run of a cell shares: stored once in a shard; every other array is per run
SHARED_KEYS = ("grid", "horizon", "base_seed", "algorithm", "instance", "params", FORMAT_KEY)


def shard_arrays(results: list[CellResult]) -> dict[str, np.ndarray]:
    """One shard's arrays: the shared ones once, the per-run ones stacked in the order of ``results``."""
    if not results:
        raise ReproError("a shard holds at least one run")
    per_run = [r.arrays() for r in results]
    first = per_run[0]
    out = {k: first[k] for k in SHARED_KEYS}
    for key in first:
        if key not in SHARED_KEYS:
            out[key] = np.stack([np.asarray(a[key]) for a in per_run])
            if is_curve(key):
                out[key] = encode_curves(out[key])
    return out


def shard_sidecar(results: list[CellResult]) -> dict[str, Any]:
    """A shard's sidecar: what names its runs, then each run's measured times (lists in run order)."""
    each = [r.sidecar() for r in results]
    side = {k: each[0][k] for k in ("algorithm_id", "instance", "horizon", "versions")}
    side["runs"] = [r.run for r in results]
    for key in ("wall_seconds", "n_batches", "load_seconds", "kernel_cpu_seconds"):
        side[key] = [e.get(key) for e in each]
    if "plugin" in each[0]:
        side["plugin"] = each[0]["plugin"]
    return side


def write_shard(results: list[CellResult], path: str | Path, prepared_sha256: str | None = None) -> None:
    """A shard (deterministic bytes) and its ``.json`` sidecar (wall times, versions), sidecar first, each replaced
    atomically and synced. The ``.npz`` is what makes the shard complete (``shard_complete``): written last, so a
    write killed halfway leaves at most a sidecar, and a second writer of the same name writes the same bytes."""
    path = Path(path)
    side = shard_sidecar(results)
    if prepared_sha256 is not None:
        side["prepared_sha256"] = prepared_sha256
    # durable (docs/decisions.md#durable-writes): both files' data synced; the directory once, after the .npz
    # (both renames are in it), before the shard can count as complete
    write_json(path.with_suffix(".json"), side, durable=True, sync_dir=False)
    write_npz(path, shard_arrays(results), durable=True)


def shard_complete(path: str | Path) -> bool:
    """Whether a shard is done: its ``.npz`` exists. Its name covers everything its bytes depend on
    (banditrepro/workflow/names.py) and it is written atomically and last, so a file under its name is whole
    and current; nothing else is consulted."""
    return Path(path).is_file()


def simulate_shard(algorithm_id: str, prepared: str | Path, horizon: int, first: int, last: int,
                   base_seed: int, out: str | Path, prepared_sha256: str | None = None) -> list[CellResult]:
    """The workflow's cell job: runs first..last of an algorithm id on a prepared dataset -> one shard.
    Each run draws from its own stream (``seeds.cell_generator``), so the bytes of run r do not depend on
    the shard that holds it. ``prepared_sha256`` (of ``prepared``) goes into the sidecar."""
    from banditrepro.datasets.prepared import load_prepared

    name, params = algorithms.parse_algorithm_id(algorithm_id)
    instance = load_prepared(prepared)
    results = run_cells(name, params, instance, horizon, range(first, last + 1), base_seed)
    write_shard(results, out, prepared_sha256)
    return results


class CorruptFile(ReproError):
    """A result file (cell or summary) that exists but cannot be read back; ``reason`` says why."""

    def __init__(self, path: str | Path, reason: str):
        self.path, self.reason = Path(path), " ".join(reason.split())  # one line, whatever numpy says
        super().__init__(f"{self.path}: unreadable ({self.reason})")


class ReadFailure(ReproError):
    """A result file that could not be read for a reason other than its bytes (I/O error, no memory): the
    job fails naming it, and nothing is deleted; the same command again reads it."""

    def __init__(self, path: str | Path, exc: BaseException):
        self.path = Path(path)
        if isinstance(exc, OSError) and exc.errno:
            from banditrepro.atomic import io_error_text

            text = io_error_text(exc, path)
        else:
            text = f"{path}: could not be read ({type(exc).__name__}); nothing deleted"
        super().__init__(f"{text}; run the same command again")


_CELL_KEYS = ("grid", "run", "horizon", "base_seed", "algorithm", "instance", "params", "n_batches", "regret")


def _unreadable(exc: BaseException) -> bool:
    """Whether an error reading a file says nothing of its bytes: an I/O error of the system (EIO, ESTALE on
    NFS, a file gone meanwhile) or no memory. EINVAL is a seek before the start: a truncated archive."""
    if isinstance(exc, MemoryError):
        return True
    return isinstance(exc, OSError) and exc.errno is not None and exc.errno != errno.EINVAL


def load_npz(path: str | Path, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every array of an ``.npz`` (0-d ones as scalars); ``CorruptFile`` if its bytes are bad (zip, format,
    CRC, shape), a ``ReproError`` naming the file, not corruption, on an I/O error or MemoryError: only
    corruption may delete a file (docs/decisions.md#only-corruption-deletes)."""
    try:
        found = Path(path).is_file()
    except OSError as exc:
        raise ReadFailure(path, exc) from None
    if not found:
        raise ReproError(f"not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            # reading every member checks each CRC, so a truncated or bit-flipped archive fails here
            out = {}
            for k in z.files:
                v = z[k]  # each z[k] decompresses the member again: read it once
                out[k] = v.item() if v.ndim == 0 else v
    except Exception as exc:  # noqa: BLE001 -- whatever the bytes are, the answer is "this file is bad"
        if _unreadable(exc):
            raise ReadFailure(path, exc) from None
        raise CorruptFile(path, f"{type(exc).__name__}: {exc}") from None
    missing = [k for k in required if k not in out]
    if missing:
        raise CorruptFile(path, f"no {', '.join(missing)}")
    return out


def load_runs(path: str | Path) -> dict[str, Any]:
    """A run file or a shard as a block of runs: the shared arrays, and every per-run array with a leading
    run axis (``run`` is then a 1-d array). ``CorruptFile`` if it cannot be read or does not fit together."""
    block = load_npz(path, _CELL_KEYS)
    block.setdefault(FORMAT_KEY, 1)  # written before formats were recorded: float64 curves
    if block[FORMAT_KEY] not in (1, SHARD_FORMAT):  # not corrupt, so not to be deleted: from another version
        raise ReproError(f"{path}: shard format {block[FORMAT_KEY]}, this version reads 1 and {SHARD_FORMAT}")
    if np.ndim(block["run"]) == 0:  # a run file: a block of one
        block = {k: (v if k in SHARED_KEYS else np.asarray(v)[None]) for k, v in block.items()}
    elif block[FORMAT_KEY] == SHARD_FORMAT:  # a shard of format 2: delta-encoded curves
        try:
            block.update({k: decode_curves(v) for k, v in block.items() if is_curve(k)})
        except ValueError as exc:
            raise CorruptFile(path, str(exc)) from None
    grid = np.asarray(block["grid"])
    runs = np.asarray(block["run"])
    if grid.ndim != 1 or grid.size == 0 or runs.ndim != 1 or runs.size == 0:
        raise CorruptFile(path, "no runs or no grid")
    bad = [k for k, v in block.items() if k not in SHARED_KEYS and np.shape(v)[:1] != runs.shape]
    bad += [k for k, v in block.items() if is_curve(k) and np.shape(v) != (runs.size, grid.size)]
    if bad:
        raise CorruptFile(path, f"arrays {sorted(set(bad))} do not match its runs and grid")
    return block
