"""Test helpers shared by the algorithm tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def played_pairs(kernel, P, T, seed, *params):
    """The pair a dueling kernel plays at every step, read back through a one-hot regret table.

    Each of the K² metrics of the table is the indicator of one ordered pair, and the grid holds every
    step, so the increments of the recorded curves name the pair of each step exactly.
    """
    K = P.shape[0]
    tab = np.zeros((K * K, K, K))
    for i in range(K):
        for j in range(K):
            tab[i * K + j, i, j] = 1.0
    grid = np.arange(1, T + 1, dtype=np.int64)
    out, _, steps = kernel(P, T, tab, grid, np.random.default_rng(seed), *params)
    assert steps == T
    inc = np.diff(out, axis=1, prepend=0.0)
    assert np.all(inc.sum(axis=0) == 1.0)
    idx = inc.argmax(axis=0)
    return np.stack([idx // K, idx % K], axis=1)


def layout_at(folder):
    """A Layout whose data folder and results folder are both ``folder`` (status/, prepared/, summaries/,
    tables/ side by side), as the figure and claim tests lay out their inputs."""
    from banditrepro.layout import Layout

    return Layout(str(folder), data_dir=str(folder))


def summary_file(dataset: str, horizon: int, algo_id: str, root) -> Path:
    """Where a summary sits under a summaries folder ``root`` (Layout.summary, for tests that write one)."""
    return Path(root) / dataset / f"T{horizon}" / f"{algo_id}.npz"
