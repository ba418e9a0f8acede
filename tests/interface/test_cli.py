import subprocess
import sys

import numpy as np
import pytest

from banditrepro.cli import main
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
        (["--algorithm", "rucb", "--horizon", "0"], "argument --horizon: must be an integer in [1, 10^9], got '0'"),
        (["--algorithm", "rucb", "--horizon", "10", "--seed", "-1"], "argument --seed: must be an integer"),
        (["--algorithm", "rucb", "--horizon", "10", "--param", "B_offset=1"], "unknown parameter 'B_offset'"),
        (["--algorithm", "c2b", "--horizon", "10", "--param", "B_offset=" + "9" * 30], "64-bit integer"),
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
    from pathlib import Path

    catalog = str(Path(__file__).resolve().parents[2] / "config" / "datasets.yaml")
    r = cli("simulate", "--algorithm", "rucb", "--dataset", "sushi16", "--horizon", "5", "--catalog", catalog,
            "--prepared-dir", str(tmp_path), "--out", str(tmp_path / "c.npz"))
    assert r.returncode == 2 and "not prepared" in r.stderr and "banditrepro prepare sushi16" in r.stderr
    r = cli("simulate", "--algorithm", "rucb", "--dataset", "nosuch", "--horizon", "5", "--catalog", catalog,
            "--prepared-dir", str(tmp_path), "--out", str(tmp_path / "c.npz"))
    assert r.returncode == 2 and "unknown dataset 'nosuch' (known: six-rankers" in r.stderr


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

    root = Path(__file__).resolve().parents[2]
    r = cli("datasets", "--catalog", str(root / "config/datasets.yaml"), "--prepared-dir", str(tmp_path),
            "--mirror", str(root.parent / "shared" / "data"))
    assert r.returncode == 0
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("yahoo30"))
    assert "needs network" in line


# ------------------------------------------------------------------ corrupt cells
def _cells(tmp_path, matrix_file, runs=3):
    paths = []
    for r in range(runs):
        out = tmp_path / "cells" / f"run{r}.npz"
        assert main(["simulate", "--algorithm", "rucb", "--matrix", str(matrix_file), "--horizon", "200",
                     "--seed", str(r), "--out", str(out)]) == 0  # in-process: fast
        paths.append(out)
    return paths


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "flip", "not-a-cell"])
def test_corrupt_cell_is_named_removed_and_regenerated(tmp_path, matrix_file, damage):
    cells = _cells(tmp_path, matrix_file)
    good = cells[1].read_bytes()
    if damage == "truncate":
        cells[1].write_bytes(good[: len(good) // 2])
    elif damage == "garbage":
        cells[1].write_bytes(bytes(range(256)) * 4)
    elif damage == "empty":
        cells[1].write_bytes(b"")
    elif damage == "flip":  # one byte inside a compressed member: the CRC check must catch it
        i = good.index(b"regret.npy") + 200
        cells[1].write_bytes(good[:i] + bytes([good[i] ^ 0xFF]) + good[i + 1:])
    else:  # a valid archive without the cell's arrays
        np.savez(cells[1], x=np.arange(3))
    summary = tmp_path / "s.npz"
    r = cli("summarize", *map(str, cells), "--out", str(summary))
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert f"corrupt cell {cells[1]} removed" in r.stderr and "rerun" in r.stderr
    assert not cells[1].exists() and not summary.exists()
    assert cells[0].exists() and cells[2].exists()  # only the bad one goes
    # what the next run does: regenerate the missing cell (same bytes) and summarize
    assert main(["simulate", "--algorithm", "rucb", "--matrix", str(matrix_file), "--horizon", "200",
                 "--seed", "1", "--out", str(cells[1])]) == 0
    assert cells[1].read_bytes() == good
    assert main(["summarize", *map(str, cells), "--out", str(summary)]) == 0
    from banditrepro.aggregate import load_summary

    assert load_summary(summary)["runs"].tolist() == [0, 1, 2]


def test_corrupt_summary_is_named_and_removed(tmp_path, matrix_file):
    from banditrepro import ReproError
    from banditrepro.aggregate import load_summary

    summary = tmp_path / "s.npz"
    assert main(["summarize", *map(str, _cells(tmp_path, matrix_file, 2)), "--out", str(summary)]) == 0
    summary.write_bytes(summary.read_bytes()[:-100])
    with pytest.raises(ReproError, match=f"corrupt summary {summary} removed .*rerun"):
        load_summary(summary)
    assert not summary.exists()


def test_summary_stores_per_run_arrays_in_run_order_whatever_the_input_order(tmp_path, matrix_file):
    """Claims pair runs by index through ``runs``: every per-run array must follow it."""
    from banditrepro.aggregate import summarize
    from banditrepro.cell import load_npz

    cells = _cells(tmp_path, matrix_file)
    ordered, shuffled = summarize(cells), summarize([cells[2], cells[0], cells[1]])
    assert ordered["runs"].tolist() == [0, 1, 2]
    assert [k for k in ordered if not np.array_equal(ordered[k], shuffled[k])] == []  # wall times included
    # R(T) as the kernel added it, in float64 (the stored curve is float32: docs/decisions.md#shard-format)
    assert ordered["regret_final"].tolist() == [load_npz(c)["final_regret"] for c in cells]


def test_summary_takes_wall_times_only_from_sidecars_that_name_their_run(tmp_path, matrix_file):
    """Sidecars are not workflow outputs, so a summary must not trust one that is missing, broken or left
    by another run: it records NaN (unmeasured) for it, never another run's time."""
    from banditrepro.aggregate import summarize

    cells = _cells(tmp_path, matrix_file)
    walls = summarize(cells)["wall_seconds"]
    assert np.all(np.isfinite(walls)) and np.all(walls > 0)
    side = [c.with_suffix(".json") for c in cells]
    side[0].write_text(side[1].read_text())  # run 1's sidecar next to run 0's cell
    side[1].unlink()
    side[2].write_text("{not json")
    assert np.isnan(summarize(cells)["wall_seconds"]).all()


def test_a_summary_records_the_numerics_stacks_of_its_files(tmp_path, matrix_file):
    """cell.versions() in each sidecar: the summary carries the set of (numpy, numba, Python) stacks, two
    after an upgrade between its files, none for a file without a readable sidecar."""
    import json

    from banditrepro.aggregate import sidecar_stack, summarize
    from banditrepro.cell import versions

    cells = _cells(tmp_path, matrix_file)
    here = versions()
    one = f"numpy {here['numpy']}, numba {here['numba']}, python {here['python']}"
    assert sidecar_stack(cells[0]) == one and summarize(cells)["stacks"].tolist() == [one]
    side = json.loads(cells[1].with_suffix(".json").read_text())
    side["versions"]["numpy"] = "0.0.1"
    cells[1].with_suffix(".json").write_text(json.dumps(side))
    cells[2].with_suffix(".json").unlink()
    stacks = summarize(cells)["stacks"].tolist()
    assert stacks == sorted([one, one.replace(f"numpy {here['numpy']}", "numpy 0.0.1")])
    assert sidecar_stack(cells[2]) is None


# ------------------------------------------------------------------ the project folder
ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _cli_env(*args, cwd, project_env=None):
    import os

    env = {k: v for k, v in os.environ.items() if k != "BANDITREPRO_PROJECT"}
    if project_env is not None:
        env["BANDITREPRO_PROJECT"] = str(project_env)
    return subprocess.run([sys.executable, "-m", "banditrepro", *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


def test_find_project_order_option_then_variable_then_nearest_parent(tmp_path):
    from banditrepro import ReproError
    from banditrepro.project import find_project

    outer, inner = tmp_path / "a", tmp_path / "b"
    for p in (outer, inner):
        (p / "config").mkdir(parents=True)
        (p / "config" / "datasets.yaml").write_text("datasets: {}\n")
    deep = outer / "results" / "figures"
    deep.mkdir(parents=True)
    found = find_project(environ={}, cwd=deep)
    assert found.root == outer.resolve() and "nearest parent" in found.how
    assert find_project(environ={}, cwd=outer).how == "the current directory"
    assert find_project(environ={"BANDITREPRO_PROJECT": str(inner)}, cwd=deep).root == inner.resolve()
    assert find_project(str(outer), environ={"BANDITREPRO_PROJECT": str(inner)}, cwd=deep).root == outer.resolve()
    with pytest.raises(ReproError, match="'.*nowhere' \\(from --project\\) is not a folder"):
        find_project(str(tmp_path / "nowhere"), environ={}, cwd=deep)
    lost = tmp_path / "elsewhere"
    lost.mkdir()
    none = find_project(environ={}, cwd=lost)
    if none.root is None:  # (a config/datasets.yaml above tmp_path would make this a project)
        assert str(lost) in none.hint() and "--project DIR" in none.hint() and "BANDITREPRO_PROJECT" in none.hint()


def test_outside_the_project_errors_say_where_they_looked_and_the_fix_works(tmp_path):
    from banditrepro.project import find_project

    if find_project(environ={}, cwd=tmp_path).root is not None:
        pytest.skip("the temporary folder lies inside a project")
    r = _cli_env("datasets", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "dataset catalog not found" in r.stderr and str(tmp_path.resolve()) in r.stderr
    assert "--project DIR" in r.stderr and "BANDITREPRO_PROJECT" in r.stderr
    sim = ["simulate", "--algorithm", "rucb", "--dataset", "nosuch", "--horizon", "5", "--out", str(tmp_path / "c.npz")]
    r = _cli_env(*sim, cwd=tmp_path)
    assert r.returncode == 2 and "unknown dataset 'nosuch'" in r.stderr and "no project found" in r.stderr
    # pointed at the project, the catalog is found (the dataset is then unknown to it, not "no catalog")
    for r in (_cli_env(*sim, "--project", str(ROOT), cwd=tmp_path), _cli_env(*sim, cwd=tmp_path, project_env=ROOT)):
        assert r.returncode == 2 and "unknown dataset 'nosuch' (known: six-rankers" in r.stderr
    r = _cli_env("datasets", "--project", str(ROOT), "--prepared-dir", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 0 and any(ln.startswith("sushi16 ") for ln in r.stdout.splitlines())


def test_project_defaults_are_filled_only_where_no_path_was_given(tmp_path, monkeypatch):
    from banditrepro.cli import _apply_project, build_parser

    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["figure", "c2b/fig1", "--project", str(ROOT), "--png", "a.png", "--pdf",
                                      "a.pdf", "--table", "a.csv", "--status-dir", "here/status"])
    _apply_project(args)
    assert args.manifest == str(ROOT / "config" / "figures") and args.results_dir == str(ROOT / "results")
    assert args.status_dir == "here/status"  # given on the command line: relative to the current directory
    monkeypatch.chdir(ROOT / "src")  # inside the project: the nearest parent holding config/datasets.yaml
    args = build_parser().parse_args(["fetch", "x/y"])
    _apply_project(args)
    assert args.catalog == str(ROOT / "config" / "datasets.yaml") and args.mirror == [str(ROOT / "../shared/data")]
    monkeypatch.chdir(ROOT)  # in the project folder itself the defaults stay short relative paths
    args = build_parser().parse_args(["fetch", "x/y"])
    _apply_project(args)
    assert args.catalog == "config/datasets.yaml" and args.raw_dir == "data/raw"


def test_every_subcommand_takes_project():
    from banditrepro.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert all(any("--project" in a.option_strings for a in sp._actions) for sp in sub.choices.values())


def test_table_columns_fit_their_widest_cell():
    from banditrepro.cli_data import _table

    text = _table(["name", "origin", "label"], [["a", "plugin some-long-distribution 0.1.0", "A"],
                                                ["bb", "built in", "B (reconstructed)"]])
    lines = text.splitlines()
    col = lines[0].index("label")
    assert [ln[col:] for ln in lines] == ["label", "A", "B (reconstructed)"]
    assert all(ln[col - 1] == " " for ln in lines)


def test_algorithms_listing_keeps_the_label_column_aligned():
    r = cli("algorithms")
    lines = r.stdout.splitlines()
    col = lines[0].index("label")
    assert r.returncode == 0 and len(lines) > 2
    assert all(ln[col - 1] == " " and ln[col] != " " for ln in lines), r.stdout


@pytest.mark.parametrize("challengers, message", [
    (["nope"], "--challengers: unknown algorithm 'nope'"),
    (["rucb", "rucb+alpha=0.7"], "--challengers: 'rucb' is listed twice"),
    (["thompson-duels+nope=1"], "--challengers: thompson-duels: unknown parameter 'nope'"),
])
def test_bad_challengers_by_hand_are_one_line_and_write_nothing(tmp_path, challengers, message):
    r = cli("claims", "--project", str(ROOT), "--papers", "c2b", "--challengers", *challengers,
            "--out", str(tmp_path / "claims.csv"))
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "claims.csv").exists()


def test_challengers_by_hand_join_the_figures_as_the_config_key_does(tmp_path):
    """`--challengers ID ...` (the CLI) and the config's mapping name -> parameters give the same figures."""
    from banditrepro import challengers
    from banditrepro.manifest import load_manifest

    manifest = ROOT / "config/figures"
    figs = load_manifest(manifest, papers=["c2b"])
    by_hand = challengers.join(figs, challengers.from_ids(["thompson-duels", "rucb+alpha=0.7"]), manifest, ["c2b"])
    config = challengers.join(figs, {"thompson-duels": None, "rucb": {"alpha": 0.7}}, manifest, ["c2b"])
    assert by_hand == config and by_hand != figs
    assert challengers.from_ids(None) == {} and challengers.join(figs, challengers.from_ids([]), manifest) == figs
