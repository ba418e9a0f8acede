"""Runs of one cell -> summary: mean, standard error and 95 % CI of every regret metric on the grid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from banditrepro import ReproError
from banditrepro.atomic import write_npz
from banditrepro.cell import CorruptFile, load_cell, load_npz

# numpy's npz loader returns metric curves under their metric names; these keys are bookkeeping
_META = {"grid", "n_batches", "run", "horizon", "base_seed", "algorithm", "instance", "params"}


def t_quantile(n: int) -> float:
    """Two-sided 95 % Student-t quantile with n − 1 degrees of freedom (normal for n ≤ 1)."""
    from scipy.special import stdtrit  # the t inverse CDF without scipy.stats' ~0.3 s import

    return float(stdtrit(n - 1, 0.975)) if n > 1 else 0.0


def _load_or_remove(load, path, what: str):
    """Load a result file; a corrupt one is deleted (so the next run regenerates it) and named in one line.

    Cells and summaries are workflow outputs: a missing one is simply rebuilt by the next
    ``snakemake`` run, whereas a present-but-corrupt one would stop every run that reads it.
    """
    try:
        return load(path)
    except CorruptFile as exc:
        try:
            Path(path).unlink()
        except OSError as err:
            raise ReproError(f"corrupt {what} {path} ({exc.reason}); could not remove it ({err.strerror}): "
                             f"delete it and rerun snakemake to regenerate it") from None
        raise ReproError(f"corrupt {what} {path} removed ({exc.reason}); rerun snakemake to regenerate it") from None


def _sidecar_wall(cell_path: str | Path, cell: dict) -> float:
    """The kernel's wall seconds from a run's ``.json`` sidecar, or NaN if it is missing, unreadable or
    describes another run (instance, horizon, run index or algorithm differ from the ``.npz``)."""
    try:
        side = json.loads(Path(cell_path).with_suffix(".json").read_text())
        same = (side["instance"] == cell["instance"] and int(side["horizon"]) == int(cell["horizon"])
                and int(side["run"]) == int(cell["run"])
                and str(side["algorithm_id"]).split("+")[0] == str(cell["algorithm"]))
        return float(side["wall_seconds"]) if same else np.nan
    except (OSError, ValueError, KeyError, TypeError):
        return np.nan


def summarize(cell_paths: list[str | Path]) -> dict[str, np.ndarray]:
    if not cell_paths:
        raise ReproError("summarize: no cell files given")
    loaded = [(_load_or_remove(load_cell, p, "cell"), p) for p in cell_paths]
    # every per-run array is stored in run order, the order of ``runs`` (claims pair runs by index)
    loaded.sort(key=lambda cp: int(cp[0]["run"]))
    cells, cell_paths = [c for c, _ in loaded], [p for _, p in loaded]
    first = cells[0]
    for c, p in zip(cells, cell_paths):
        for key in ("algorithm", "instance", "horizon", "params"):
            if c[key] != first[key]:
                raise ReproError(f"summarize: {p} has {key}={c[key]!r}, expected {first[key]!r}")
        if not np.array_equal(c["grid"], first["grid"]):
            raise ReproError(f"summarize: {p} has a different grid")
    runs = [c["run"] for c in cells]
    if len(set(runs)) != len(runs):
        raise ReproError("summarize: duplicate run indices")
    n = len(cells)
    q = t_quantile(n)
    out: dict[str, np.ndarray] = {
        "grid": first["grid"], "runs": np.asarray(runs, dtype=np.int64), "n_runs": np.int64(n),
        "horizon": np.int64(first["horizon"]), "algorithm": np.str_(first["algorithm"]),
        "instance": np.str_(first["instance"]), "params": np.str_(first["params"]),
        "n_batches": np.asarray([c["n_batches"] for c in cells], dtype=np.int64),
    }
    # a generative dataset's per-run instance (cell.run_cell): kept per run, in the order of the *_final arrays
    for key in (k for k in first if k.startswith("instance_")):
        if any(key not in c for c in cells):
            raise ReproError(f"summarize: {key} is recorded in some cells of {first['instance']} but not all")
        out[key] = np.stack([np.asarray(c[key]) for c in cells])
    metrics = [k for k in first if "regret" in k and not k.startswith("final_") and k not in _META]
    # R(T/2) per run (the curve at the last grid point ≤ T/2): the claims' "late share" needs it, and the
    # summary is the claims job's declared input (cells are not)
    half = int(np.searchsorted(first["grid"], first["grid"][-1] // 2, side="right")) - 1
    for m in metrics:
        curves = np.stack([c[m] for c in cells])  # (runs, grid)
        mean = curves.mean(axis=0)
        se = curves.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(mean)
        out[f"{m}_mean"] = mean
        out[f"{m}_se"] = se
        out[f"{m}_lo"] = mean - q * se
        out[f"{m}_hi"] = mean + q * se
        out[f"{m}_final"] = curves[:, -1].copy()
        out[f"{m}_half"] = curves[:, half].copy() if half >= 0 else np.zeros(n)
    # wall times from the sidecars (not workflow outputs: ~9,000 declared files fewer); one that is missing,
    # unreadable or names another run than its .npz counts as unmeasured (NaN), never as this run's time
    walls = [_sidecar_wall(p, c) for p, c in zip(cell_paths, cells)]
    out["wall_seconds"] = np.asarray(walls, dtype=np.float64)
    return out


def write_summary(cell_paths, out_path) -> None:
    write_npz(out_path, summarize(cell_paths))


def load_summary(path: str | Path) -> dict[str, np.ndarray]:
    if not Path(path).exists():
        raise ReproError(f"summary not found: {path}")
    return _load_or_remove(lambda p: load_npz(p, ("grid", "runs", "n_runs", "horizon")), path, "summary")


def final_stats(summary: dict, metric: str) -> dict[str, float]:
    finals = np.asarray(summary[f"{metric}_final"], dtype=float)
    n = finals.size
    mean = float(finals.mean())
    se = float(finals.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    q = t_quantile(n)
    return {"mean": mean, "se": se, "ci_low": mean - q * se, "ci_high": mean + q * se, "runs": n}


def runtime_table(summary_paths: list[str | Path]):
    import pandas as pd

    rows = []
    for p in summary_paths:
        s = load_summary(p)
        w = np.asarray(s["wall_seconds"], dtype=float)
        rows.append({"dataset": s["instance"], "horizon": s["horizon"], "algorithm_id": Path(p).stem,
                     "runs": s["n_runs"], "kernel_seconds_mean": float(np.nanmean(w)),
                     "kernel_seconds_total": float(np.nansum(w)),
                     "ns_per_step": float(np.nanmean(w) / s["horizon"] * 1e9)})
    return pd.DataFrame(rows).sort_values(["dataset", "horizon", "algorithm_id"])


def write_runtime_table(summary_paths: list[str | Path], out) -> None:
    from banditrepro.atomic import write_text

    write_text(out, runtime_table(summary_paths).to_csv(index=False, float_format="%.6g"))
