"""Shard format 2 (docs/decisions.md#shard-format): float32 curves, delta-encoded in shards, float64 R(T) and
R(T/2) per run; summaries whose claim-read values equal those of float64 curves; files of format 1 read alone
but never mixed with format 2; the format in every cell's code digest; the estimate's bytes from the format."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from banditrepro import ReproError
from banditrepro.aggregate import summarize
from banditrepro.atomic import write_npz
from banditrepro.cell import load_npz, load_runs, run_cells, shard_arrays, write_cell, write_shard
from banditrepro.shardformat import FORMAT_KEY, SHARD_FORMAT, decode_curves, encode_curves, half_index

SEED = 20240601


@pytest.fixture(scope="module")
def duel_results():
    from banditrepro.instances import PreferenceMatrix
    from tests.conftest import SIX_RANKERS

    return run_cells("rucb", None, PreferenceMatrix(SIX_RANKERS, name="six-rankers"), 3000, range(4), SEED)


def _format1_shard(results, path):
    """A shard as 9042ad1 wrote it: float64 curves, R(T) per run, no R(T/2), no format recorded."""
    arrays = shard_arrays(results)
    del arrays[FORMAT_KEY]
    for m in results[0].curves:
        arrays[m] = np.stack([r.curves[m] for r in results])
        del arrays[f"half_{m}"]
    write_npz(path, arrays)
    return path


def test_a_run_file_holds_float32_curves_and_the_float64_values_claims_read(tmp_path, simulate, six_rankers):
    res = simulate("rucb", six_rankers, 2000)
    write_cell(res, tmp_path / "run.npz")
    cell = load_npz(tmp_path / "run.npz")
    assert cell[FORMAT_KEY] == SHARD_FORMAT
    k = half_index(res.grid)
    assert 0 < k < res.grid.size - 1 and res.grid[k] <= 1000 < res.grid[k + 1]
    for m, curve in res.curves.items():
        assert curve.dtype == np.float64  # the kernel adds in float64; only the stored copy is float32
        assert cell[m].dtype == np.float32 and np.array_equal(cell[m], curve.astype(np.float32))
        assert isinstance(cell[f"final_{m}"], float) and cell[f"final_{m}"] == curve[-1]
        assert cell[f"half_{m}"] == curve[k]
    assert np.any(cell["regret"].astype(np.float64) != res.curves["regret"])  # float32 did round something


def test_a_shard_stores_encoded_curves_that_decode_exactly(tmp_path, duel_results):
    path = tmp_path / "runs0-3.npz"
    write_shard(duel_results, path)
    raw = load_npz(path)
    grid = duel_results[0].grid
    assert raw[FORMAT_KEY] == SHARD_FORMAT
    assert raw["regret"].dtype == np.uint8 and raw["regret"].shape == (4, 4, grid.size)
    block = load_runs(path)
    for m in duel_results[0].curves:
        expected = np.stack([r.curves[m] for r in duel_results])
        assert block[m].dtype == np.float32 and np.array_equal(block[m], expected.astype(np.float32))
        assert block[f"final_{m}"].dtype == np.float64 and np.array_equal(block[f"final_{m}"], expected[:, -1])
        assert np.array_equal(block[f"half_{m}"], expected[:, half_index(grid)])
    # the point of the encoding: well under the float32 curves' own compressed size
    plain = dict(raw, **{m: block[m] for m in duel_results[0].curves})
    write_npz(tmp_path / "plain.npz", plain)
    assert path.stat().st_size < 0.7 * (tmp_path / "plain.npz").stat().st_size


def test_the_curve_encoding_is_lossless_for_every_float32():
    rng = np.random.default_rng(0)
    curves = np.cumsum(rng.random((5, 300)), axis=1)
    curves[1] = 0.0
    curves[2, 100:] = curves[2, 99]  # a curve that stops growing
    curves[3] = -curves[3]  # decreasing: the differences wrap modulo 2^32
    curves[4, :5] = [np.inf, np.nan, -0.0, 3e38, 1e-45]
    back = decode_curves(encode_curves(curves))
    assert back.dtype == np.float32
    assert np.array_equal(back.view(np.uint32), curves.astype(np.float32).view(np.uint32))
    with pytest.raises(ValueError):
        decode_curves(np.zeros((3, 2, 2), np.uint8))


def test_a_summary_reads_what_claims_read_exactly_as_from_float64_curves(tmp_path, duel_results):
    """R(T), R(T/2) per run and the mean, s.e. and CI at those two grid points are bit for bit those of the
    float64 curves (format 1); the rest of the curves agree to float32's precision."""
    old = summarize([_format1_shard(duel_results, tmp_path / "old.npz")])
    write_shard(duel_results, tmp_path / "new.npz")
    new = summarize([tmp_path / "new.npz"])
    assert sorted(old) == sorted(new)
    k = half_index(new["grid"])
    for m in duel_results[0].curves:
        assert np.array_equal(old[f"{m}_final"], new[f"{m}_final"])
        assert np.array_equal(old[f"{m}_half"], new[f"{m}_half"])
        for stat in ("mean", "se", "lo", "hi"):
            a, b = old[f"{m}_{stat}"], new[f"{m}_{stat}"]
            assert a[-1] == b[-1] and a[k] == b[k], (m, stat)
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6 * max(1.0, float(np.abs(a).max())))
    assert not np.array_equal(old["regret_mean"], new["regret_mean"])  # float32 curves elsewhere


def test_format1_shards_are_read_alone_and_never_mixed_with_format2(tmp_path, duel_results):
    old = _format1_shard(duel_results[:2], tmp_path / "runs0-1.npz")
    assert load_runs(old)[FORMAT_KEY] == 1 and summarize([old])["runs"].tolist() == [0, 1]
    write_shard(duel_results[2:], tmp_path / "runs2-3.npz")
    with pytest.raises(ReproError, match="shard format 2.*format 1: recompute"):
        summarize([old, tmp_path / "runs2-3.npz"])
    assert old.exists() and (tmp_path / "runs2-3.npz").exists()  # not corrupt: nothing deleted


def test_a_file_of_an_unknown_format_is_refused_and_kept(tmp_path, duel_results):
    arrays = shard_arrays(duel_results)
    arrays[FORMAT_KEY] = np.int64(SHARD_FORMAT + 1)
    write_npz(tmp_path / "future.npz", arrays)
    with pytest.raises(ReproError, match=f"shard format {SHARD_FORMAT + 1}"):
        summarize([tmp_path / "future.npz"])
    assert (tmp_path / "future.npz").exists()


def test_a_new_shard_format_moves_every_cell_to_a_new_code_folder(tmp_path):
    from banditrepro import algorithms, closure
    from banditrepro.workflow import digests

    copy = tmp_path / "banditrepro"
    shutil.copytree(closure.ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    fmt = copy / "shardformat.py"
    text = fmt.read_text()
    assert text.count(f"SHARD_FORMAT = {SHARD_FORMAT}\n") == 1
    fmt.write_text(text.replace(f"SHARD_FORMAT = {SHARD_FORMAT}\n", f"SHARD_FORMAT = {SHARD_FORMAT + 1}\n"))
    names = algorithms.names()
    assert all(digests.cell_code(n, copy) != digests.cell_code(n) for n in names)


def test_the_estimate_counts_a_shards_bytes_in_the_current_format(tmp_path, bernoulli5):
    """Bytes per run and per shard come from the current format's measured table, and agree with shards of 10
    and 100 runs written here (a run costs fewer bytes in the larger shard)."""
    from banditrepro.grid import regret_grid
    from banditrepro.workflow import estimate

    assert SHARD_FORMAT in estimate.SHARD_BYTES
    T = 100_000
    duel, mab = estimate.bytes_per_run("rucb", T), estimate.bytes_per_run("dp-ts-ucb", T)
    float64_duel = 5 * 8 * len(regret_grid(T))  # format 1's uncompressed curves of a run
    assert 0 < mab < duel < 0.25 * float64_duel
    assert 0 < estimate.bytes_per_shard("dp-ts-ucb") < estimate.bytes_per_shard("rucb")
    results = run_cells("dp-ts-ucb", None, bernoulli5, T, range(100), SEED)
    per_run = []
    for n in (10, 100):
        write_shard(results[:n], tmp_path / f"s{n}.npz")
        written = (tmp_path / f"s{n}.npz").stat().st_size + (tmp_path / f"s{n}.json").stat().st_size
        forecast = n * mab + estimate.bytes_per_shard("dp-ts-ucb")
        assert 0.67 < forecast / written < 1.5, (n, forecast, written)
        per_run.append(written / n)
    assert per_run[1] < per_run[0]


def test_the_default_config_at_1000_runs_forecasts_at_most_1_gb_of_shards(tmp_path, monkeypatch):
    from banditrepro.workflow.estimate import estimate, load_config
    from banditrepro.workflow.plan import build_plan
    from tests.workflow.common import ROOT

    config = load_config(ROOT, overrides=["runs=1000", "results_dir=results/nothing-here"])
    monkeypatch.chdir(tmp_path)  # the plan looks for existing shards relative to the working folder: none here
    numbers = estimate(build_plan(config, ROOT))
    assert numbers["new_runs"] >= 180_000
    assert 0.2e9 < numbers["bytes"] <= 1e9
