"""One simulation cell: (algorithm + parameters, instance, horizon, run) -> regret curves on a grid.

The cell file (``.npz``) holds only deterministic content, so the same cell gives the same bytes
whatever the scheduling; wall time and package versions go to a JSON sidecar.
"""

from __future__ import annotations

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
from banditrepro.regret import regret_table
from banditrepro.seeds import cell_generator


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
                  "params": np.str_(json.dumps(self.params, sort_keys=True))}
        for metric, curve in self.curves.items():
            arrays[metric] = curve
            arrays[f"final_{metric}"] = np.float64(curve[-1])
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
    spec = algorithms.get(algorithm)
    resolved = spec.resolve(params)
    spec.check_instance(instance)
    if int(horizon) != horizon or horizon < 1:
        raise ReproError(f"horizon must be a positive integer, got {horizon}")
    horizon = int(horizon)
    grid = regret_grid(horizon)
    metrics, tab = regret_table(instance)
    # Load (or compile) the kernel on a 1-step problem first, with a throwaway generator, so the
    # wall time reported is the simulation's alone; the cell's own stream is untouched.
    start = time.perf_counter()
    spec.run(instance, 1, tab, grid[:1], np.random.default_rng(0), **resolved)
    load = time.perf_counter() - start
    rng = cell_generator(base_seed, instance.name, run)
    start = time.perf_counter()
    out, n_batches, steps = spec.run(instance, horizon, tab, grid, rng, **resolved)
    wall = time.perf_counter() - start
    if steps != horizon:
        raise RuntimeError(f"{algorithm}: kernel ran {steps} steps, expected T={horizon}")
    curves = {m: np.ascontiguousarray(out[k]) for k, m in enumerate(metrics)}
    meta = {"load_seconds": load}
    if algorithm not in algorithms.MODULES:  # provenance of a plugin's cell: its distribution and version
        from banditrepro import plugins

        meta["plugin"] = plugins.origin(plugins.entry_points()[algorithm])
    return CellResult(algorithm, resolved, instance.name, horizon, run, base_seed, grid, curves,
                      int(n_batches), wall, meta)


def write_cell(result: CellResult, path: str | Path, sidecar: str | Path | None = None) -> None:
    path = Path(path)
    write_npz(path, result.arrays())
    write_json(sidecar or path.with_suffix(".json"), result.sidecar())


def simulate_to_file(algorithm_id: str, prepared: str | Path, horizon: int, run: int, base_seed: int,
                     out: str | Path, sidecar: str | Path | None = None) -> CellResult:
    """The workflow's cell job: algorithm id (``name+key=value…``) on a prepared dataset -> files."""
    from banditrepro.datasets.catalog import load_prepared

    name, params = algorithms.parse_algorithm_id(algorithm_id)
    result = run_cell(name, params, load_prepared(prepared), horizon, run, base_seed)
    write_cell(result, out, sidecar)
    return result


def load_cell(path: str | Path) -> dict[str, Any]:
    with np.load(path) as z:
        return {k: (z[k].item() if z[k].ndim == 0 else z[k]) for k in z.files}
