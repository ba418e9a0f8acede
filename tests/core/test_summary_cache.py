"""Summaries read once per process (banditrepro.aggregate.load_summary): the figure jobs of one Snakemake process
share what they read, a rewritten summary is read again, and no caller can change what the next one reads."""

from __future__ import annotations

import numpy as np
import pytest

from banditrepro import ReproError, aggregate, atomic


def write(path, value: float) -> None:
    atomic.write_npz(path, {"grid": np.array([1, 2]), "runs": np.array([0, 1]), "n_runs": np.int64(2),
                            "horizon": np.int64(2), "regret_mean": np.array([value, 2 * value])})


@pytest.fixture
def counted(monkeypatch):
    """The number of times a summary file was read from disk."""
    reads = []
    real = aggregate.load_npz
    monkeypatch.setattr(aggregate, "load_npz", lambda p, req=(): reads.append(p) or real(p, req))
    monkeypatch.setattr(aggregate, "_SUMMARIES", aggregate._SummaryCache(max_bytes=2**20))
    return reads


def test_a_summary_is_read_once(tmp_path, counted):
    path = tmp_path / "s.npz"
    write(path, 1.0)
    a, b = aggregate.load_summary(path), aggregate.load_summary(path)
    assert len(counted) == 1
    assert a is not b and a["regret_mean"].tolist() == b["regret_mean"].tolist() == [1.0, 2.0]


def test_a_rewritten_summary_is_read_again(tmp_path, counted):
    path = tmp_path / "s.npz"
    write(path, 1.0)
    aggregate.load_summary(path)
    write(path, 3.0)  # atomic rename: another file, as a summary job rewrites it
    assert aggregate.load_summary(path)["regret_mean"].tolist() == [3.0, 6.0]
    assert len(counted) == 2


def test_callers_cannot_change_what_others_read(tmp_path, counted):
    path = tmp_path / "s.npz"
    write(path, 1.0)
    first = aggregate.load_summary(path)
    with pytest.raises(ValueError, match="read-only"):
        first["regret_mean"] *= 2
    first["grid"] = None  # the dict is the caller's own
    again = aggregate.load_summary(path)
    assert again["regret_mean"].tolist() == [1.0, 2.0] and again["grid"].tolist() == [1, 2]


def test_the_cache_keeps_at_most_its_bytes(tmp_path, monkeypatch):
    cache = aggregate._SummaryCache(max_bytes=100)
    monkeypatch.setattr(aggregate, "_SUMMARIES", cache)
    for i in range(5):
        write(tmp_path / f"{i}.npz", float(i))
        aggregate.load_summary(tmp_path / f"{i}.npz")
    assert cache.nbytes <= 100 and len(cache._items) < 5


def test_a_missing_summary_is_one_line(tmp_path):
    with pytest.raises(ReproError, match="summary not found"):
        aggregate.load_summary(tmp_path / "none.npz")
