"""Bring your own algorithm and data: entry-point plugins, config datasets, user manifests.

The example plugin (examples/plugin) must be installed: CI runs
``pip install -e ".[workflow,dev]" ./examples/plugin``. Without it the tests that need it fail with
that command, they do not skip.
"""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from banditrepro import ReproError, algorithms, plugins
from banditrepro.grid import regret_grid
from banditrepro.instances import PreferenceMatrix
from banditrepro.recorder import new_recorder, record
from banditrepro.regret import regret_table
from tests.conftest import SIX_RANKERS
from tests.helpers import played_pairs

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT.parent / "shared" / "data"
CATALOG = ROOT / "config" / "datasets.yaml"
EXAMPLE = ROOT / "examples" / "plugin"
Z = 4.0  # tolerance in standard deviations (see test_simulate_uniform_pairs_matches_the_uniform_policy)


def cli(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "banditrepro", *args], capture_output=True, text=True,
                          cwd=cwd, env=env)


@pytest.fixture(scope="module")
def example_installed():
    names = [ep.name for ep in metadata.entry_points(group=plugins.GROUP)]
    if "uniform-pairs" not in names:
        pytest.fail('the example plugin is not installed; run: pip install -e ".[workflow,dev]" ./examples/plugin',
                    pytrace=False)


@pytest.fixture
def fresh_plugins(monkeypatch):
    """Forget scanned/loaded plugins during a test that adds fake distributions to sys.path."""
    for attr, empty in (("_found", None), ("_loaded", {}), ("_warned", set())):
        monkeypatch.setattr(plugins, attr, empty)


def fake_plugin(where: Path, dist: str, module: str, code: str, entry_points: dict[str, str]) -> Path:
    """A minimal installed distribution (dist-info with entry points) plus its module, under ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    info = where / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{plugins.GROUP}]\n{lines}")
    (where / f"{module}.py").write_text(textwrap.dedent(code))
    return where


SPEC_CODE = """
from banditrepro.algorithms import AlgorithmSpec, Param
from banditrepro.plugins import Recorder

def run(instance, T, tab, grid, rng, *, eta):
    rec = Recorder(tab, grid)
    rec.play(0, 0, T)
    return rec.result()

SPEC = AlgorithmSpec(name="{name}", label="fake", problem="duel", citation="test", run=run,
                     params=(Param("eta", "float", 0.5, "a rate", low=0.0, high=1.0),))
"""


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """data/prepared with six-rankers and sushi16 (from the mirror; six-rankers inline without it)."""
    work = tmp_path_factory.mktemp("prepared")
    raw = MIRROR
    if not MIRROR.is_dir():
        raw = work / "raw"
        (raw / "six-rankers").mkdir(parents=True)
        np.savetxt(raw / "six-rankers" / "pref_arxiv.txt", SIX_RANKERS, fmt="%.2f")
    r = cli("prepare", "six-rankers", "--catalog", str(CATALOG), "--raw-dir", str(raw),
            "--prepared-dir", str(work / "prep"), cwd=work)
    assert r.returncode == 0, r.stderr
    return work / "prep"


# ------------------------------------------------------------------------------------------ algorithm
def test_simulate_uniform_pairs_matches_the_uniform_policy(example_installed, prepared, tmp_path):
    """Two arms drawn independently and uniformly: the per-step regret (Δ_i + Δ_j)/2 has mean mean(Δ)
    and variance Var(Δ)/2, so R_T has mean T·mean(Δ) and sd sqrt(T Var(Δ)/2) (CLT, 1,000 iid steps).

    Tolerance Z = 4 sd: a correct policy fails with probability < 1e-4 per metric. On six-rankers
    (mean Δ = 0.06, sd 0.88 at T = 1,000) it flips when the mean per-step regret is off by 0.0035
    (6 %); the weak binary regret (neither arm is the winner: q = (5/6)² per step) flips at ±0.058.
    """
    T = 1000
    out = tmp_path / "x.npz"
    r = cli("simulate", "--algorithm", "uniform-pairs", "--dataset", "six-rankers", "--horizon", str(T),
            "--seed", "0", "--out", str(out), "--prepared-dir", str(prepared))
    assert r.returncode == 0, r.stderr
    # a plain-Python kernel says so, on one line
    assert [ln for ln in r.stderr.splitlines() if "plain-Python" in ln] == [r.stderr.strip()]
    sidecar = json.loads(out.with_suffix(".json").read_text())
    assert sidecar["plugin"] == f"banditrepro-uniform-pairs {metadata.version('banditrepro-uniform-pairs')}"
    rec = json.loads((prepared / "six-rankers.json").read_text())
    P = np.array(rec["matrix"])
    gaps = P[rec["condorcet_winner"]] - 0.5
    with np.load(out) as cell:
        regret, weak = float(cell["final_regret"]), float(cell["final_weak_regret_binary"])
        assert str(cell["algorithm"]) == "uniform-pairs" and int(cell["horizon"]) == T
    mean, sd = T * gaps.mean(), np.sqrt(T * gaps.var() / 2)
    assert abs(regret - mean) <= Z * sd, (regret, mean, sd)
    q = (1 - 1 / len(P)) ** 2
    assert abs(weak - T * q) <= Z * np.sqrt(T * q * (1 - q)), (weak, T * q)


def test_uniform_pairs_plays_every_ordered_pair_equally_often(example_installed):
    """36 ordered pairs of six-rankers over 36,000 steps: chi-square against uniform at p = 0.001
    (critical value 66.6 at 35 degrees of freedom); without self-duels the diagonal is never played."""
    spec = algorithms.get("uniform-pairs")

    def kernel(P, T, tab, grid, rng, self_duels):
        return spec.run(PreferenceMatrix(P), T, tab, grid, rng, self_duels=self_duels)

    pairs = played_pairs(kernel, SIX_RANKERS, 36_000, 3, True)
    counts = np.bincount(pairs[:, 0] * 6 + pairs[:, 1], minlength=36)
    assert ((counts - 1000) ** 2 / 1000).sum() < stats.chi2.ppf(0.999, 35)
    distinct = played_pairs(kernel, SIX_RANKERS, 3_000, 3, False)
    assert (distinct[:, 0] != distinct[:, 1]).all()


def test_python_recorder_gives_the_compiled_recorders_numbers(six_rankers):
    metrics, tab = regret_table(six_rankers)
    rng = np.random.default_rng(1)
    plays = [(int(rng.integers(6)), int(rng.integers(6)), int(rng.integers(1, 40))) for _ in range(400)]
    T = sum(n for *_, n in plays)
    grid = regret_grid(T)
    cum, out, pos = new_recorder(tab, grid)
    py = plugins.Recorder(tab, grid)
    for i, j, n in plays:
        record(tab, grid, cum, out, pos, i, j, n)
        py.play(i, j, n)
    got, _, steps = py.result()
    assert steps == pos[0] == T and np.array_equal(got, out) and out[0, -1] > 0


def test_plugin_parameters_are_validated_and_named_in_ids(example_installed):
    spec = algorithms.get("uniform-pairs")
    assert spec.defaults == {"self_duels": True}
    assert algorithms.algorithm_id("uniform-pairs", {"self_duels": "false"}) == "uniform-pairs+self_duels=False"
    with pytest.raises(ReproError, match="unknown parameter 'eta'"):
        spec.resolve({"eta": 1})
    with pytest.raises(ReproError, match="self_duels='maybe' is not a bool"):
        spec.resolve({"self_duels": "maybe"})
    assert "uniform-pairs" in algorithms.names(plugins=True) and "uniform-pairs" not in algorithms.names()


def test_entry_points_are_not_scanned_for_built_in_names_or_the_papers_manifest(fresh_plugins):
    """The workflow's parse time (the papers' manifest, built-in algorithms) never scans or imports plugins."""
    from banditrepro.manifest import load_manifest

    figures = load_manifest(ROOT / "config" / "figures")
    assert len(figures) > 10 and algorithms.get("rmed1").name == "rmed1"
    assert plugins._found is None and plugins._loaded == {}


def test_name_of_a_builtin_is_an_error_not_an_override(tmp_path, fresh_plugins, monkeypatch):
    where = fake_plugin(tmp_path / "site", "clash", "clash_mod", SPEC_CODE.format(name="rucb"),
                        {"rucb": "clash_mod:SPEC"})
    monkeypatch.syspath_prepend(str(where))
    with pytest.raises(ReproError, match="'rucb' .*clash 0.1.*has the name of a built-in algorithm"):
        algorithms.get("some-plugin")
    with pytest.raises(ReproError, match="name of a built-in"):
        algorithms.names(plugins=True)
    assert algorithms.get("rucb").label == "RUCB"  # a built-in name never looks at plugins
    # the CLI: one line, exit status 2
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(where), str(ROOT / "src")])}
    r = cli("algorithms", env=env)
    assert r.returncode == 2 and "name of a built-in algorithm" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("code, eps, message", [
    (SPEC_CODE.format(name="other"), {"fake-a": "m:SPEC"}, "named 'other'; the entry point must carry the same"),
    ("SPEC = 3\n", {"fake-a": "m:SPEC"}, "is a int, expected an AlgorithmSpec"),
    ("raise RuntimeError('boom')\n", {"fake-a": "m:SPEC"}, "failed to load: RuntimeError: boom"),
    (SPEC_CODE.format(name="Fake_A"), {"Fake_A": "m:SPEC"}, "lower-case letters"),
    (SPEC_CODE.format(name="fake-a").replace("0.5, \"a rate\"", "2.0, \"a rate\""), {"fake-a": "m:SPEC"},
     "eta must be <= 1"),
])
def test_broken_plugins_are_one_line_errors(tmp_path, fresh_plugins, monkeypatch, code, eps, message):
    monkeypatch.syspath_prepend(str(fake_plugin(tmp_path / "site", "broken", "m", code, eps)))
    monkeypatch.delitem(sys.modules, "m", raising=False)
    with pytest.raises(ReproError, match=message):
        algorithms.get("fake-a")


def test_kernel_output_is_checked(tmp_path, fresh_plugins, monkeypatch, six_rankers):
    code = SPEC_CODE.format(name="fake-b").replace("return rec.result()", "return rec.out[:1], 0, T")
    monkeypatch.syspath_prepend(str(fake_plugin(tmp_path / "site", "short", "m2", code, {"fake-b": "m2:SPEC"})))
    from banditrepro.cell import run_cell

    with pytest.raises(ReproError, match=r"out of shape \(1, 1\), expected \(5, 1\)"):
        run_cell("fake-b", {}, six_rankers, 100, 0, 1)


def test_numba_plugin_is_cached_under_a_key_of_its_sources(tmp_path):
    """A compiled plugin: no speed warning; its kernel cached in its own folder, keyed on its package."""
    pkg = tmp_path / "site" / "nbplug"
    pkg.mkdir(parents=True)
    (pkg / "helpers.py").write_text("from numba import njit\n\n@njit(cache=True, inline='always')\n"
                                    "def pick(rng, K):\n    return rng.integers(0, K)\n")
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        from numba import njit
        from banditrepro.algorithms import AlgorithmSpec
        from banditrepro.recorder import new_recorder, record
        from nbplug.helpers import pick

        @njit(cache=True, nogil=True)
        def kernel(P, T, tab, grid, rng):
            cum, out, pos = new_recorder(tab, grid)
            for t in range(T):
                record(tab, grid, cum, out, pos, pick(rng, P.shape[0]), pick(rng, P.shape[0]), 1)
            return out, 0, pos[0]

        def run(instance, T, tab, grid, rng):
            return kernel(instance.P, T, tab, grid, rng)

        SPEC = AlgorithmSpec(name="nb-uniform", label="nb", problem="duel", citation="test", run=run)
        """))
    info = tmp_path / "site" / "nbplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nbplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{plugins.GROUP}]\nnb-uniform = nbplug:SPEC\n")
    matrix = tmp_path / "six.txt"
    np.savetxt(matrix, SIX_RANKERS)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(ROOT / "src")]))

    def simulate(out):
        r = cli("simulate", "--algorithm", "nb-uniform", "--matrix", str(matrix), "--horizon", "2000",
                "--out", str(tmp_path / out), env=env)
        assert r.returncode == 0 and "plain-Python" not in r.stderr, r.stderr
        return sorted((tmp_path / "cache" / "banditrepro").glob("plugin-nb-uniform-*"))

    first = simulate("a.npz")
    assert len(first) == 1 and list(first[0].rglob("*.nbi")), "the plugin's kernel was not cached in its folder"
    assert simulate("b.npz") == first  # same sources: same folder, loaded from it
    (pkg / "helpers.py").write_text((pkg / "helpers.py").read_text() + "# edited\n")
    assert len(simulate("c.npz")) == 2  # an edited (inlined) helper gets a new cache, never a stale kernel
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "c.npz") as c:
        assert np.array_equal(a["regret"], c["regret"])


# ------------------------------------------------------------------------------------------- datasets
@pytest.fixture
def project(tmp_path):
    """A working folder whose config/config.yaml declares a matrix (.npy) and Bernoulli means."""
    np.save(tmp_path / "six.npy", SIX_RANKERS)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(textwrap.dedent("""
        datasets:
          my-matrix: {path: six.npy, description: six rankers as .npy, expect_condorcet_label: item 0}
          my-arms: {means: [0.9, 0.5, 0.1]}
        """))
    return tmp_path


def test_datasets_lists_a_matrix_declared_only_in_config(project):
    r = cli("datasets", "--catalog", str(CATALOG), cwd=project)
    assert r.returncode == 0, r.stderr
    rows = {ln.split()[0]: ln for ln in r.stdout.splitlines()}
    assert "file six.npy (config)" in rows["my-matrix"] and "six rankers as .npy" in rows["my-matrix"]
    assert "(config)" in rows["my-arms"] and "(config)" not in rows["six-rankers"]


def test_config_datasets_are_prepared_with_their_checksum(project):
    for name in ("my-matrix", "my-arms"):
        r = cli("prepare", name, "--catalog", str(CATALOG), cwd=project)
        assert r.returncode == 0, r.stderr
    rec = json.loads((project / "data/prepared/my-matrix.json").read_text())
    assert rec["sha256"] == hashlib.sha256((project / "six.npy").read_bytes()).hexdigest()
    assert np.array_equal(rec["matrix"], SIX_RANKERS) and rec["condorcet_winner"] == 0
    arms = json.loads((project / "data/prepared/my-arms.json").read_text())
    assert arms["kind"] == "mab" and arms["means"] == [0.9, 0.5, 0.1]


@pytest.mark.parametrize("content, extra, message", [
    ("0.5 0.6 0.2\n0.4 0.5 0.7\n", "", "must be square"),
    ("0.5 0.6\n0.3 0.5\n", "", "P + Pᵀ must equal 1"),
    ("0.5 1.2\n-0.2 0.5\n", "", "entries must be probabilities in [0, 1]"),
    ("0.5 0.6 0.4\n0.4 0.5 0.6\n0.6 0.4 0.5\n", "", "no Condorcet winner"),
    ("0.5 x\n0.5 0.5\n", "", "cannot read a matrix"),
    ("0.5 0.6\n0.4 0.5\n", ", sha256: " + "0" * 64, "the declaration pins"),
])
def test_bad_user_matrices_are_refused_on_one_line(tmp_path, content, extra, message):
    (tmp_path / "m.txt").write_text(content)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"datasets:\n  mine: {{path: m.txt{extra}}}\n")
    r = cli("prepare", "mine", "--catalog", str(CATALOG), "--config", str(cfg), cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "data/prepared/mine.json").exists()


def test_config_dataset_may_not_shadow_the_catalog(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("datasets:\n  sushi16: {means: [0.5, 0.4]}\n")
    r = cli("datasets", "--catalog", str(CATALOG), "--config", str(cfg), cwd=tmp_path)
    assert r.returncode == 2 and "'sushi16' is declared in the config and in the catalog" in r.stderr


def test_simulate_reads_an_npy_matrix(tmp_path):
    np.save(tmp_path / "six.npy", SIX_RANKERS)
    r = cli("simulate", "--algorithm", "rucb", "--matrix", str(tmp_path / "six.npy"), "--horizon", "100",
            "--out", str(tmp_path / "c.npz"))
    assert r.returncode == 0 and "rucb on six, T=100" in r.stdout, r.stderr


def test_yelp_is_a_matrix_file_dataset(tmp_path):
    """The yelp special case: a matrix_file entry, given a path (here through --entry, as the workflow does)."""
    np.savetxt(tmp_path / "yelp.txt", SIX_RANKERS)
    entry = {"derivation": "matrix_file", "path": str(tmp_path / "yelp.txt"), "fallback": "sushi16"}
    r = cli("prepare", "yelp", "--catalog", str(CATALOG), "--entry", json.dumps(entry),
            "--prepared-dir", str(tmp_path / "prep"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads((tmp_path / "prep/yelp.json").read_text())
    assert rec["substitute"] is False
    assert rec["sha256"] == hashlib.sha256((tmp_path / "yelp.txt").read_bytes()).hexdigest()


# ------------------------------------------------------------------------------------------- workflow
def snakemake(*args, timeout=1200):
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.workflow
def test_example_manifest_runs_end_to_end(example_installed, tmp_path):
    """The example exactly as the README runs it (its config, its manifest), at T = 1,000 and 2 runs
    (data from the offline mirror, else upstream)."""
    small = tmp_path / "small.yaml"
    small.write_text("runs: 2\nmax_horizon: 1000\n")
    work = tmp_path / "work"
    r = snakemake("--cores", "2", "--directory", str(work), "--workflow-profile", str(ROOT / "profiles/default"),
                  "--configfile", str(EXAMPLE / "config.yaml"), str(small))
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    for ext in ("png", "pdf"):
        assert (work / f"results/figures/uniform-pairs/vs-baselines.{ext}").stat().st_size > 1000
    table = pd.read_csv(work / "results/tables/uniform-pairs/vs-baselines.csv")
    assert set(table.algorithm_id) == {"uniform-pairs", "rucb", "rmed1"}
    assert set(table.dataset) == {"six-rankers", "sushi16"} and (table.runs == 2).all()
    assert (table.horizon == 1000).all()
    claims = pd.read_csv(work / "results/claims.csv")
    assert set(claims.claim_id) == {"rucb-beats-uniform", "rmed-beats-uniform"}


@pytest.mark.workflow
def test_workflow_prepares_a_config_dataset(tmp_path):
    """A dataset declared only in the config goes through the prepare job (a path that needs quoting)."""
    folder = tmp_path / "my data"
    folder.mkdir()
    np.save(folder / "six's.npy", SIX_RANKERS)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"datasets:\n  my-matrix: {{path: \"{folder / (chr(39).join(['six', 's.npy']))}\"}}\n")
    work = tmp_path / "work"
    # its prepared file is named by what it derives from: the declaration and the file's bytes among them
    import yaml

    from banditrepro.datasets.catalog import load_catalog
    from banditrepro.workflow.names import data_key

    declared = yaml.safe_load(cfg.read_text())["datasets"]
    key = data_key(load_catalog(CATALOG, declared, ROOT), "my-matrix")
    target = f"data/prepared/my-matrix/{key}.json"
    r = snakemake(target, "--cores", "1", "--directory", str(work), "--configfile", str(cfg))
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    rec = json.loads((work / target).read_text())
    assert rec["sha256"] == hashlib.sha256((folder / "six's.npy").read_bytes()).hexdigest()
    assert np.array_equal(rec["matrix"], SIX_RANKERS)
