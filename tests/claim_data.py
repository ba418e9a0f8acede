"""Hand-made summaries and cells for claim tests: per-run finals (and halves) chosen so the verdict is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from banditrepro.atomic import write_npz
from tests.helpers import summary_file


def write_runs(root: Path, dataset: str, horizon: int, algo_id: str, finals, metrics=("regret",),
               halves=None) -> None:
    """A summary with per-run ``{metric}_final`` for every metric (same values) and, if ``halves`` is given,
    per-run ``{metric}_half`` (R at T/2, as aggregate.summarize writes it)."""
    finals = np.asarray(finals, dtype=float)
    runs = np.arange(finals.size)
    grid = np.array([1, horizon // 2, horizon], dtype=np.int64)
    s = {"grid": grid, "runs": runs, "n_runs": np.int64(finals.size), "horizon": np.int64(horizon)}
    for m in metrics:
        s[f"{m}_final"] = finals
        s[f"{m}_mean"] = np.array([0.0, float(np.mean(halves)) if halves is not None else 0.0, finals.mean()])
        if halves is not None:
            s[f"{m}_half"] = np.asarray(halves, dtype=float)
    write_npz(summary_file(dataset, horizon, algo_id, root), s)


def noisy(mean: float, n: int = 30, rel_sd: float = 0.1, seed: int = 0) -> np.ndarray:
    """n positive per-run values around ``mean`` (the same seed gives the same noise: paired runs)."""
    rng = np.random.default_rng(seed)
    return mean * (1 + rel_sd * rng.standard_normal(n))
