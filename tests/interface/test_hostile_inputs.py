"""Random and hostile inputs thrown at the command line and the matrix loader.

Whatever the input, ``banditrepro`` must either succeed (exit 0) or exit 2 with exactly one line on
stderr, no traceback, and no output file left behind (not even a ``.part``). ``main`` is called in
process (fast); a few subprocess checks pin the exact cases of the issue. Run time is bounded by small
horizons, a handful of kernels (rucb, dp-ts-ucb) and ``max_examples``.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from banditrepro import ReproError
from banditrepro.cli import main
from banditrepro.instances import load_matrix_text
from banditrepro.limits import MAX_HORIZON
from tests.conftest import SIX_RANKERS

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "config" / "datasets.yaml"
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run_main(argv: list[str]) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage errors and --help
            code = exc.code
    return code, err.getvalue()


def assert_clean_outcome(code, stderr: str, folder: Path, before: set[Path], outputs=()) -> None:
    """Exit 0, or exit 2 with one line and no traceback; never a partial file; no output on failure."""
    assert code in (0, 2), (code, stderr)
    event(f"exit {code}" + (f": {stderr.split(':')[2].strip()[:25]}" if code == 2 and stderr.count(":") > 2 else ""))
    after = set(folder.rglob("*"))
    assert not [p for p in after if p.name.endswith((".part", ".download"))], "partial file left behind"
    if code == 2:
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("banditrepro") and "error:" in lines[0], stderr
        assert "Traceback" not in stderr
        written = [p for p in after - before if p.is_file()]  # (an emptied download folder may stay)
        assert not written, f"files written by a failed command: {sorted(written)}"
    else:
        for out in outputs:
            assert Path(out).is_file()


# ----------------------------------------------------------------------- strategies for argument values
def _num_text(lo, hi):
    return st.integers(lo, hi).map(str)


# Any text a command line can carry: control characters, newlines, lone surrogates (what Python makes of
# bytes that are not UTF-8 in argv); never NUL, which argv cannot hold.
junk = st.text(st.characters(exclude_characters="\x00", exclude_categories=()), max_size=30)
horizons = st.one_of(_num_text(-5, 300), _num_text(MAX_HORIZON + 1, 10**30), st.just(str(2**63 - 1)),
                     st.sampled_from(["0", "1e3", "1.5", "", " 7", "0x10", "-0", "nan", "1_0"]), junk)
seeds = st.one_of(_num_text(-3, 50), _num_text(2**63 - 5, 2**63 + 5), _num_text(10**22, 10**24), junk)
# Only two kernels run (rucb: duel, dp-ts-ucb: mab), so a fresh numba cache costs two compilations.
bases = st.sampled_from(["rucb", "dp-ts-ucb"])
param_keys = st.sampled_from(["alpha", "epsilon", "beta", "B_offset", "", "x"]) | junk
param_values = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), _num_text(-10**25, 10**25),
                         st.sampled_from(["none", "null", "true", "", "1e400", "-0.0", "0.51"]), junk)
params = st.tuples(param_keys, param_values).map(lambda kv: f"{kv[0]}={kv[1]}") | junk
algorithms = st.one_of(bases, bases.flatmap(lambda b: params.map(lambda p: f"{b}+{p}")), junk)
means = st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=6).map(
        lambda xs: ",".join(repr(float(x)) for x in xs)),
    st.lists(st.floats(0, 1), min_size=2, max_size=5).map(lambda xs: ",".join(map(str, xs))),
    junk)


@pytest.fixture(scope="module")
def sandbox():
    """A folder with hostile files: a real matrix, a binary file, an existing folder, a corrupt cell."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        np.savetxt(root / "six.txt", SIX_RANKERS)
        (root / "binary.dat").write_bytes(bytes(range(256)) * 3)
        (root / "empty.txt").write_bytes(b"")
        (root / "a folder").mkdir()
        (root / "a file").write_text("not a folder\n")
        (root / "cell.npz").write_bytes(b"PK\x03\x04 truncated")
        (root / "prep").mkdir()
        (root / "prep" / "tiny.json").write_text('{"kind": "mab", "means": [0.9, 0.1], "labels": ["a", "b"], '
                                                 '"name": "tiny"}')
        yield root


def paths(root: Path):
    names = ["six.txt", "binary.dat", "empty.txt", "a folder", "a file", "a file/below.npz", "cell.npz",
             "missing.txt", "out.npz", "x.json", "", "prep"]
    return st.sampled_from([str(root / n) if n else "" for n in names]) | junk


# ------------------------------------------------------------------------------------- the CLI: simulate
@SETTINGS
@given(data=st.data())
def test_simulate_with_random_arguments(sandbox, data):
    """A valid command line with 0-2 of its values replaced by hostile ones (so every check is reached)."""
    with tempfile.TemporaryDirectory(dir=sandbox) as d:
        work = Path(d)
        source = data.draw(st.sampled_from(["--matrix", "--means", "--dataset"]), "source")
        good = {"--algorithm": "rucb" if source == "--matrix" else "dp-ts-ucb", "--horizon": "60",
                "--out": str(work / "cell.npz"), "--seed": "3", "--base-seed": "11", "--param": None,
                source: {"--matrix": str(sandbox / "six.txt"), "--means": "0.9,0.5,0.1", "--dataset": "tiny"}[source]}
        hostile = {
            "--algorithm": algorithms, "--horizon": horizons, "--seed": seeds, "--base-seed": seeds,
            "--param": params,
            "--out": st.sampled_from([str(work), str(sandbox / "a file" / "c.npz"), str(work / "cell.txt"),
                                      str(work / "sub" / "cell.npz"), ""]) | junk,
            "--matrix": paths(sandbox), "--means": means,
            "--dataset": st.sampled_from(["sushi16", "nosuch", "../prep/tiny", "tiny.json", ""]) | junk,
        }
        for key in data.draw(st.lists(st.sampled_from(sorted(good)), max_size=2, unique=True), "replaced"):
            good[key] = data.draw(hostile[key], key)
        argv = ["simulate", "--prepared-dir", str(sandbox / "prep"), "--catalog", str(CATALOG)]
        for key, value in good.items():
            if value is not None:
                argv += [key, value]
        out = good["--out"]
        before = set(sandbox.rglob("*"))
        code, err = run_main(argv)
        assert_clean_outcome(code, err, sandbox, before, [out] if code == 0 else [])
        if code == 0:
            assert Path(out).suffix == ".npz" and Path(out).with_suffix(".json").is_file()


@SETTINGS
@given(data=st.data())
def test_every_algorithm_parameter_is_a_value_or_a_one_line_error(data):
    """Parameters of all algorithms (not only the two that run above): coerced within bounds, or refused."""
    from banditrepro import algorithms

    name = data.draw(st.sampled_from(algorithms.names()), "algorithm")
    spec = algorithms.get(name)
    keys = [p.name for p in spec.params]
    given_params = data.draw(st.dictionaries(st.sampled_from(keys) | junk if keys else junk, param_values,
                                             max_size=3), "params")
    try:
        resolved = spec.resolve(given_params)
    except ReproError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(name)
        return
    for p in spec.params:
        v = resolved[p.name]
        if v is None or p.kind not in ("int", "float"):
            continue
        assert math.isfinite(v) and (p.kind == "float" or -(2**63) <= v < 2**63)
        assert p.low is None or v > p.low or (v == p.low and not p.low_open)
        assert p.high is None or v < p.high or (v == p.high and not p.high_open)


# ----------------------------------------------------------------------------- the CLI: every other command
OPTIONS = {
    "datasets": ["--catalog", "--raw-dir", "--prepared-dir", "--mirror", "--retries", "--timeout"],
    "fetch": ["--catalog", "--dest", "--mirror", "--retries", "--timeout", "--raw-dir"],
    "probe": ["--catalog", "--out", "--mirror", "--retries", "--timeout", "--raw-dir"],
    "prepare": ["--catalog", "--raw-dir", "--prepared-dir", "--out"],
    "summarize": ["--out"],
    "runtime-table": ["--out"],
    "figure": ["--manifest", "--papers", "--max-horizon", "--status-dir", "--prepared-dir", "--png", "--pdf",
               "--table"],
    "claims": ["--manifest", "--papers", "--max-horizon", "--status-dir", "--prepared-dir", "--out"],
    "report": ["--manifest", "--papers", "--max-horizon", "--claims", "--runtime", "--out"],
}
POSITIONAL = {"fetch": 1, "probe": 1, "prepare": 1, "summarize": 2, "runtime-table": 2, "figure": 1}


@pytest.fixture(scope="module")
def offline_catalog(sandbox):
    """The real catalog with every URL pointing nowhere, so no example can reach the network."""
    import yaml

    doc = yaml.safe_load(CATALOG.read_text())
    for src in doc["sources"].values():
        src["url"] = (sandbox / "no-upstream").as_uri()
    path = sandbox / "catalog.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_command_with_random_arguments(sandbox, offline_catalog, data):
    command = data.draw(st.sampled_from(sorted(OPTIONS)), "command")
    numbers = st.one_of(_num_text(-3, 5), _num_text(10**9, 10**25), st.sampled_from(["nan", "inf", "0.5"]))
    outputs = st.sampled_from([str(sandbox / "o" / f"out{ext}") for ext in (".csv", ".md", ".json", ".png", ".pdf")])
    names = st.sampled_from(["c2b/fig1", "six-rankers", "six-rankers/pref_arxiv.txt", "c2b", str(offline_catalog),
                             str(ROOT / "config/figures")])
    value = paths(sandbox) | numbers | outputs | names
    argv = [command] + [data.draw(value, "positional") for _ in range(POSITIONAL.get(command, 0))]
    options = data.draw(st.lists(st.sampled_from(OPTIONS[command]), unique=True), "options")
    if command in ("datasets", "fetch", "probe", "prepare") and "--catalog" not in options:
        argv += ["--catalog", str(offline_catalog)]  # never the network, never the real data/ folder
    for opt in options:
        argv += [opt, data.draw(value, opt)]
    if command in ("fetch", "probe", "datasets"):
        argv += ["--mirror", str(sandbox / "no-mirror"), "--retries", "1"]
    cwd = os.getcwd()
    os.chdir(sandbox)  # relative defaults (data/raw, data/prepared …) land in the sandbox
    try:
        before = set(sandbox.rglob("*"))
        code, err = run_main(argv)
    finally:
        os.chdir(cwd)
    assert_clean_outcome(code, err, sandbox, before)


# ------------------------------------------------------------------------------------- the matrix loader
def _matrix_text(rows, fmt) -> str:
    return "".join(" ".join(fmt(x) for x in row) + "\n" for row in rows)


entries = st.floats(allow_nan=True, allow_infinity=True) | st.floats(-0.5, 1.5) | st.sampled_from([0.5, 0, 1])


@st.composite
def valid_looking_matrices(draw):
    """Square, diagonal 1/2 and P + Pᵀ = 1 by construction, then maybe one hostile change."""
    K = draw(st.integers(1, 6))
    if draw(st.booleans()):  # a utility model: always has a Condorcet winner (unless utilities tie)
        u = np.array(draw(st.lists(st.floats(0, 1), min_size=K, max_size=K)))
        P = (1 + u[:, None] - u[None, :]) / 2
    else:  # any P with P + Pᵀ = 1: often no Condorcet winner
        upper = draw(st.lists(st.floats(0, 1), min_size=K * K, max_size=K * K))
        P = np.full((K, K), 0.5)
        for i in range(K):
            for j in range(i + 1, K):
                P[i, j] = upper[i * K + j]
                P[j, i] = 1 - P[i, j]
    change = draw(st.sampled_from(["none", "none", "none", "entry", "drop-row", "drop-col", "transpose-sum"]))
    if change == "entry" and K:
        P[draw(st.integers(0, K - 1)), draw(st.integers(0, K - 1))] = draw(entries)
    elif change == "drop-row":
        P = P[:-1]
    elif change == "drop-col":
        P = P[:, :-1]
    elif change == "transpose-sum" and K > 1:
        P[0, 1] = min(1.0, P[0, 1] + 0.01)  # P + Pᵀ ≠ 1 at [0, 1]
    return _matrix_text(P, lambda x: repr(float(x)))


matrix_contents = st.one_of(
    st.binary(max_size=200),
    valid_looking_matrices().map(str.encode),
    valid_looking_matrices().map(str.encode),
    st.lists(st.lists(entries, min_size=1, max_size=5), min_size=1, max_size=5).map(
        lambda rows: _matrix_text(rows, repr).encode()),
    st.text(alphabet="0123456789.-+eE \n\t#nafix", max_size=80).map(str.encode),
)


@SETTINGS
@given(content=matrix_contents)
def test_matrix_loader_accepts_only_valid_preference_matrices(content):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.txt"
        path.write_bytes(content)
        try:
            inst = load_matrix_text(path)
        except ReproError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("m: "), exc  # names the matrix
            return
    P = inst.P
    assert P.shape[0] == P.shape[1] >= 2 and np.all(np.isfinite(P)) and P.min() >= 0 and P.max() <= 1
    assert np.allclose(P + P.T, 1, atol=1e-9) and inst.condorcet_winner is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=matrix_contents)
def test_matrix_file_through_the_cli(sandbox, content):
    with tempfile.TemporaryDirectory(dir=sandbox) as d:
        path, out = Path(d) / "m.txt", Path(d) / "c.npz"
        path.write_bytes(content)
        before = set(sandbox.rglob("*"))
        code, err = run_main(["simulate", "--algorithm", "rucb", "--matrix", str(path), "--horizon", "50",
                              "--out", str(out)])
        assert_clean_outcome(code, err, sandbox, before, [out] if code == 0 else [])
        if code == 2:
            assert err.startswith("banditrepro: error: --matrix:")


# ------------------------------------------------------------------- exact cases of the issue, as a user runs them
def cli(*args, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "banditrepro", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=120)


@pytest.mark.parametrize("args, says", [
    (["--matrix", "BINARY", "--horizon", "10"], "--matrix: binary: "),
    (["--matrix", "MATRIX", "--horizon", "10", "--seed", "-1"],
     "argument --seed: must be an integer in [0, 2^63-1], got '-1'"),
    (["--matrix", "MATRIX", "--horizon", "10", "--seed", "100000000000000000000000"],
     "argument --seed: must be an integer in [0, 2^63-1], got '100000000000000000000000'"),
    (["--matrix", "MATRIX", "--horizon", "100000000000000000000"],
     "argument --horizon: must be an integer in [1, 10^9], got '100000000000000000000'"),
    (["--matrix", "MATRIX", "--horizon", "9223372036854775807"], "argument --horizon: must be an integer in [1, 10^9]"),
    (["--matrix", "MATRIX", "--horizon", "10", "--out", "FOLDER"],
     "argument --out: expected a file path, got the folder"),
    (["--dataset", "nosuch", "--horizon", "10"], "--dataset: unknown dataset 'nosuch'"),
])
def test_issue_cases_exit_2_with_one_line(tmp_path, args, says):
    (tmp_path / "binary.dat").write_bytes(bytes(range(256)))
    np.savetxt(tmp_path / "six.txt", SIX_RANKERS)
    (tmp_path / "folder").mkdir()
    subst = {"BINARY": str(tmp_path / "binary.dat"), "MATRIX": str(tmp_path / "six.txt"),
             "FOLDER": str(tmp_path / "folder")}
    args = [subst.get(a, a) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "c.npz")]
    r = cli("simulate", "--algorithm", "rucb", *args)  # cwd = the project: its catalog knows the datasets
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and says in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["binary.dat", "folder", "six.txt"]
    assert list((tmp_path / "folder").iterdir()) == []


def test_horizon_bound_is_documented():
    help_text = " ".join(cli("simulate", "--help").stdout.split())
    assert "1 <= T <= 10^9" in help_text
    assert "10^9" in (ROOT / "README.md").read_text()
    assert MAX_HORIZON == 10**9 and math.log10(MAX_HORIZON) == 9
