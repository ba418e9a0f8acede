"""Runs of one cell -> summary: mean, standard error and 95 % CI of every regret metric on the grid."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from banditrepro import ReproError
from banditrepro.atomic import write_npz
from banditrepro.cell import SHARED_KEYS, CorruptFile, load_npz, load_runs
from banditrepro.shardformat import FORMAT_KEY, half_index, is_curve

# numpy's npz loader returns metric curves under their metric names; these keys are bookkeeping
_META = {"grid", "n_batches", "run", "horizon", "base_seed", "algorithm", "instance", "params", FORMAT_KEY}


def t_quantile(n: int) -> float:
    """Two-sided 95 % Student-t quantile with n − 1 degrees of freedom (normal for n ≤ 1)."""
    from scipy.special import stdtrit  # the t inverse CDF without scipy.stats' ~0.3 s import

    return float(stdtrit(n - 1, 0.975)) if n > 1 else 0.0


class CorruptRemoved(ReproError):
    """A corrupt result file, deleted so the next run regenerates it (the only error that deletes)."""


def _load_or_remove(load, path, what: str):
    """Load a result file; a corrupt one is deleted (so the next run regenerates it) and named in one line.

    Cells and summaries are workflow outputs: a missing one is simply rebuilt by the next
    ``snakemake`` run, whereas a present-but-corrupt one would stop every run that reads it. Only bad bytes
    (``CorruptFile``) delete: an I/O error or MemoryError (``cell.ReadFailure``) fails naming the file.
    """
    try:
        return load(path)
    except CorruptFile as exc:
        try:
            Path(path).unlink()
        except OSError as err:
            raise ReproError(f"corrupt {what} {path} ({exc.reason}); could not remove it ({err.strerror}): "
                             f"delete it and rerun snakemake to regenerate it") from None
        raise CorruptRemoved(f"corrupt {what} {path} removed ({exc.reason}); rerun snakemake to regenerate it") \
            from None


def _sidecar_walls(path: str | Path, block: dict) -> np.ndarray:
    """The kernel's wall seconds of each run of a file, from its ``.json`` sidecar; NaN for all if the
    sidecar is missing, unreadable or describes other runs (instance, horizon, runs or algorithm differ)."""
    runs = np.asarray(block["run"])
    try:
        side = json.loads(Path(path).with_suffix(".json").read_text())
        named = side["runs"] if "runs" in side else [side["run"]]  # a shard's sidecar, or a run file's
        walls = side["wall_seconds"] if "runs" in side else [side["wall_seconds"]]
        same = (side["instance"] == block["instance"] and int(side["horizon"]) == int(block["horizon"])
                and [int(r) for r in named] == runs.tolist() and len(walls) == runs.size
                and str(side["algorithm_id"]).split("+")[0] == str(block["algorithm"]))
        return np.asarray(walls, dtype=np.float64) if same else np.full(runs.size, np.nan)
    except (OSError, ValueError, KeyError, TypeError):
        return np.full(runs.size, np.nan)


STACK = ("numpy", "numba", "python")  # what a shard's numbers may depend on besides the code (cell.versions)


def sidecar_stack(path: str | Path) -> str | None:
    """The numerics stack a file's sidecar records ("numpy 2.1.3, numba 0.61.0, python 3.11.7"); None if the
    sidecar is missing or unreadable or records no versions."""
    try:
        versions = json.loads(Path(path).with_suffix(".json").read_text())["versions"]
        return ", ".join(f"{k} {versions[k]}" for k in STACK)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def summarize(paths: list[str | Path], runs: int | None = None) -> dict[str, np.ndarray]:
    """Summary of the runs held by ``paths`` (shards or run files, any order). ``runs``: use runs
    0..runs-1 only, which the files must hold (a cell's last shard may hold more runs than asked)."""
    if not paths:
        raise ReproError("summarize: no cell files given")
    loaded = [(_load_or_remove(load_runs, p, "cell"), p) for p in paths]
    # every per-run array is stored in run order, the order of ``runs`` (claims pair runs by index)
    loaded.sort(key=lambda bp: int(bp[0]["run"][0]))
    first = loaded[0][0]
    for b, p in loaded:
        if b[FORMAT_KEY] != first[FORMAT_KEY]:  # float32 and float64 curves never meet in one summary
            raise ReproError(f"summarize: {p} is of shard format {b[FORMAT_KEY]}, {loaded[0][1]} of format "
                             f"{first[FORMAT_KEY]}: recompute the older files (docs/decisions.md#shard-format)")
        for key in ("algorithm", "instance", "horizon", "params"):
            if b[key] != first[key]:
                raise ReproError(f"summarize: {p} has {key}={b[key]!r}, expected {first[key]!r}")
        if not np.array_equal(b["grid"], first["grid"]):
            raise ReproError(f"summarize: {p} has a different grid")
        if set(b) != set(first):
            raise ReproError(f"summarize: {p} records {sorted(set(b) ^ set(first))} unlike {loaded[0][1]}")
    per_run = [k for k in first if k not in SHARED_KEYS]
    stacked = {k: np.concatenate([b[k] for b, _ in loaded]) for k in per_run}
    walls = np.concatenate([_sidecar_walls(p, b) for b, p in loaded])
    all_runs = stacked["run"].tolist()
    if len(set(all_runs)) != len(all_runs):
        raise ReproError("summarize: duplicate run indices")
    if runs is not None:
        if all_runs[:runs] != list(range(runs)):
            raise ReproError(f"summarize: the files hold runs {all_runs[:5]}..., not 0..{runs - 1}")
        stacked = {k: v[:runs] for k, v in stacked.items()}
        walls = walls[:runs]
    runs_list = stacked["run"].tolist()
    n = len(runs_list)
    q = t_quantile(n)
    out: dict[str, np.ndarray] = {
        "grid": first["grid"], "runs": np.asarray(runs_list, dtype=np.int64), "n_runs": np.int64(n),
        "horizon": np.int64(first["horizon"]), "algorithm": np.str_(first["algorithm"]),
        "instance": np.str_(first["instance"]), "params": np.str_(first["params"]),
        "n_batches": np.asarray(stacked["n_batches"], dtype=np.int64),
    }
    # a generative dataset's per-run instance (cell.run_cell): kept per run, in the order of the *_final arrays
    for key in (k for k in first if k.startswith("instance_")):
        out[key] = stacked[key]
    metrics = [k for k in first if is_curve(k) and k not in _META]
    # R(T/2) per run (the curve at the last grid point ≤ T/2): the claims' "late share" needs it, and the
    # summary is the claims job's declared input (cells are not)
    half = half_index(first["grid"])
    for m in metrics:
        curves = np.asarray(stacked[m], dtype=np.float64)  # (runs, grid); float32 in format 2, added in float64
        # R(T) and R(T/2) as the kernel added them (float64, stored per run): every column's statistics are
        # computed on that column alone, so these two columns are exactly those of float64 curves
        # (docs/decisions.md#shard-format)
        if f"final_{m}" in stacked:
            curves[:, -1] = stacked[f"final_{m}"]
        if f"half_{m}" in stacked and half >= 0:
            curves[:, half] = stacked[f"half_{m}"]
        mean = curves.mean(axis=0)
        se = curves.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(mean)
        out[f"{m}_mean"] = mean
        out[f"{m}_se"] = se
        out[f"{m}_lo"] = mean - q * se
        out[f"{m}_hi"] = mean + q * se
        out[f"{m}_final"] = curves[:, -1].copy()
        out[f"{m}_half"] = curves[:, half].copy() if half >= 0 else np.zeros(n)
    # wall times from the sidecars (not workflow outputs: a declared file costs Snakemake more than its
    # write); one that is missing, unreadable or names other runs than its file counts as unmeasured (NaN)
    out["wall_seconds"] = np.asarray(walls, dtype=np.float64)
    # the numerics stacks the shards came from (more than one: reproduction.md says so per figure)
    out["stacks"] = np.asarray(sorted({s for s in map(sidecar_stack, [p for _, p in loaded]) if s}), dtype=np.str_)
    return out


# what a summary measured rather than computed: kept in its ``.json`` sidecar, so that the ``.npz`` holds only
# numbers drawn from its runs' data and is the same bytes whichever machine or shards computed them (verify and
# merge compare summaries byte for byte; docs/decisions.md#summary-sidecar)
MEASURED = ("wall_seconds", "stacks")


def write_summary(paths, out_path, runs: int | None = None) -> None:
    """A summary: its ``.npz`` (the runs' statistics, deterministic bytes) and its ``.json`` sidecar (the
    kernels' wall seconds and the stacks that computed the runs), sidecar first: the ``.npz`` marks it done."""
    from banditrepro.atomic import write_json

    summary = summarize(paths, runs)
    write_json(Path(out_path).with_suffix(".json"), {"wall_seconds": [None if np.isnan(w) else float(w) for w in
                                                                      summary["wall_seconds"]],
                                                     "stacks": [str(s) for s in summary["stacks"]]})
    write_npz(out_path, {k: v for k, v in summary.items() if k not in MEASURED})


def summary_measures(path) -> dict:
    """A summary's sidecar: ``wall_seconds`` (one per run, NaN where unmeasured) and ``stacks``; NaNs and no
    stacks if it is missing or unreadable (measurements never stop a table)."""
    try:
        side = json.loads(Path(path).with_suffix(".json").read_text())
        walls = np.asarray([np.nan if w is None else w for w in side["wall_seconds"]], dtype=np.float64)
        return {"wall_seconds": walls, "stacks": [str(s) for s in side.get("stacks", [])]}
    except (OSError, ValueError, KeyError, TypeError):
        return {"wall_seconds": np.full(1, np.nan), "stacks": []}


class _SummaryCache:
    """Summaries already read by this process, by file identity (device, inode, size, mtime): the figure jobs of
    one Snakemake process read the same 189 summaries 765 times (default config), about 1 CPU-s. A rewritten
    summary is a new file (atomic rename: a new inode), so it is read again. Arrays are read-only, so that no
    caller can change what the next one reads; the least recently used go beyond ``max_bytes``."""

    def __init__(self, max_bytes: int):
        import collections
        import threading

        self.max_bytes, self.nbytes = max_bytes, 0
        self._items: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(path) -> tuple:
        st = Path(path).stat()
        return str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns

    def get(self, key):
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key, summary: dict) -> None:
        size = sum(v.nbytes for v in summary.values() if isinstance(v, np.ndarray))
        for v in summary.values():
            if isinstance(v, np.ndarray):
                v.setflags(write=False)
        with self._lock:
            if key not in self._items:
                self._items[key] = (summary, size)
                self.nbytes += size
            while self.nbytes > self.max_bytes and len(self._items) > 1:
                _, (_, gone) = self._items.popitem(last=False)
                self.nbytes -= gone


_SUMMARIES = _SummaryCache(max_bytes=256 * 2**20)


def load_summary(path: str | Path) -> dict[str, np.ndarray]:
    """A cell's summary (read-only arrays; a new dict each call)."""
    try:
        key = _SummaryCache.key(path)
    except FileNotFoundError:
        raise ReproError(f"summary not found: {path}") from None
    except OSError:
        key = None  # unreadable metadata: load_npz names the error
    found = _SUMMARIES.get(key) if key else None
    if found is None:
        summary = _load_or_remove(lambda p: load_npz(p, ("grid", "runs", "n_runs", "horizon")), path, "summary")
        if key:
            _SUMMARIES.put(key, summary)
        return dict(summary)
    return dict(found[0])


def final_stats(summary: dict, metric: str) -> dict[str, float]:
    finals = np.asarray(summary[f"{metric}_final"], dtype=float)
    n = finals.size
    mean = float(finals.mean())
    se = float(finals.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    q = t_quantile(n)
    return {"mean": mean, "se": se, "ci_low": mean - q * se, "ci_high": mean + q * se, "runs": n}


def summary_algorithm(path) -> str:
    """The algorithm id of a summary's path: its folder (``…/<algo>/<key>.npz``, the workflow's) or, in a folder
    made by hand, its name (``…/<algo>.npz``)."""
    p = Path(path)
    return p.parent.name if len(p.stem) == 16 and all(c in "0123456789abcdef" for c in p.stem) else p.stem


def runtime_table(summary_paths: list[str | Path]):
    import pandas as pd

    rows = []
    for p in summary_paths:
        s = load_summary(p)
        w = summary_measures(p)["wall_seconds"]
        rows.append({"dataset": s["instance"], "horizon": s["horizon"], "algorithm_id": summary_algorithm(p),
                     "runs": s["n_runs"], "kernel_seconds_mean": float(np.nanmean(w)),
                     "kernel_seconds_total": float(np.nansum(w)),
                     "ns_per_step": float(np.nanmean(w) / s["horizon"] * 1e9)})
    return pd.DataFrame(rows).sort_values(["dataset", "horizon", "algorithm_id"])


def write_runtime_table(summary_paths: list[str | Path], out) -> None:
    from banditrepro.atomic import write_text

    write_text(out, runtime_table(summary_paths).to_csv(index=False, float_format="%.6g"))
