import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import SIX_RANKERS


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "banditrepro", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def matrix_file(tmp_path):
    path = tmp_path / "six.txt"
    np.savetxt(path, SIX_RANKERS)
    return path


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--algorithm", "nope", "--horizon", "10"], "unknown algorithm 'nope'"),
        (["--algorithm", "rucb", "--horizon", "0"], "--horizon must be a positive integer"),
        (["--algorithm", "rucb", "--horizon", "10", "--param", "beta=2"], "unknown parameter 'beta'"),
        (["--algorithm", "rucb", "--horizon", "10", "--param", "alpha=-1"], "alpha must be > 0"),
        (["--algorithm", "rucb", "--horizon", "10", "--param", "alpha"], "key=value"),
    ],
)
def test_bad_input_is_one_line_without_traceback(tmp_path, matrix_file, extra, message):
    r = cli("simulate", "--matrix", str(matrix_file), "--out", str(tmp_path / "c.npz"), *extra)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "c.npz").exists()


@pytest.mark.parametrize("content, message", [("0.5 0.6\n0.4\n", "ragged"),
                                              ("0.5 0.6\n0.6 0.5\n", "P + Pᵀ"),
                                              ("0.5 x\n0.5 0.5\n", "non-numeric")])
def test_bad_matrix_file(tmp_path, content, message):
    (tmp_path / "m.txt").write_text(content)
    r = cli("simulate", "--algorithm", "rucb", "--matrix", str(tmp_path / "m.txt"), "--horizon", "5",
            "--out", str(tmp_path / "c.npz"))
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_missing_dataset_names_the_fix(tmp_path):
    r = cli("simulate", "--algorithm", "rucb", "--dataset", "sushi16", "--horizon", "5",
            "--prepared-dir", str(tmp_path), "--out", str(tmp_path / "c.npz"))
    assert r.returncode == 2 and "not prepared" in r.stderr


def test_simulate_writes_identical_bytes_for_the_same_cell(tmp_path, matrix_file):
    outs = []
    for k in range(2):
        out = tmp_path / f"c{k}.npz"
        r = cli("simulate", "--algorithm", "rucb+alpha=0.51", "--matrix", str(matrix_file), "--horizon", "3000",
                "--seed", "4", "--out", str(out))
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    with np.load(tmp_path / "c0.npz") as z:
        assert z["grid"][-1] == 3000 and z["regret"].shape == z["grid"].shape
        assert {"regret", "weak_regret_binary", "strong_regret_utility"} <= set(z.files)
        assert np.all(np.diff(z["regret"]) >= 0)
    other = tmp_path / "other.npz"
    cli("simulate", "--algorithm", "rucb", "--matrix", str(matrix_file), "--horizon", "3000", "--seed", "5",
        "--out", str(other))
    assert other.read_bytes() != outs[0]


def test_datasets_command_lists_network_needs(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    r = cli("datasets", "--catalog", str(root / "config/datasets.yaml"), "--prepared-dir", str(tmp_path),
            "--mirror", str(root.parent / "shared" / "data"))
    assert r.returncode == 0
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("yahoo30"))
    assert "needs network" in line
