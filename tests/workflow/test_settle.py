"""``banditrepro settle`` (issue 45, points 1, 5, 6): rounds extending only undecided claims' cells, decided or
stopped at max runs, resumed after a stop between rounds, and a settle continued from runs pooled from two
machines ending as one machine's. On the test config narrowed to Winner Stays at T = 500 (about 10 s per
20 runs of every cell on 2 cores); first round 20, max runs 40 (the asymptotic sequence reads from 20 runs on).
The config key ``cell_runs`` it drives: absent, the plan is the same; listed, only the listed cells change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from banditrepro import verdicts as vd
from banditrepro.layout import shard_runs
from banditrepro.settle_claims import SETTLED_COLUMNS
from banditrepro.settle_run import next_targets
from banditrepro.workflow.plan import raise_cell_runs
from tests.workflow.common import (
    MIRROR,
    ROOT,
    TEST_CONFIG,
    TEST_RESULTS,
    computed,
    copy_project,
    error_lines,
    plan_of,
    smk,
)

NARROW = [f"data_mirrors=['{MIRROR}']", "papers=[winner-stays]", "max_horizon=500"]
SETTLE = ["--first-round", "20", "--max-runs", "40"]
STOPS = ("every claim decided", "max runs reached by every undecided claim's cells")


def settle(proj: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(proj / "src")}
    return subprocess.run([sys.executable, "-m", "banditrepro", "settle", "--project", str(proj), "--configfile",
                           TEST_CONFIG, "--config", *NARROW, *SETTLE, *extra], cwd=proj, capture_output=True,
                          text=True, env=env, timeout=900)


def settle_here(proj: Path, *extra: str) -> int:
    """``settle`` through the CLI's ``main`` in this process (only for calls that stop before a round)."""
    from banditrepro import cli

    return cli.main(["settle", "--project", str(proj), "--configfile", str(proj / TEST_CONFIG), "--config", *NARROW,
                     *SETTLE, *extra])


def state_of(proj: Path) -> dict:
    return json.loads((proj / TEST_RESULTS / "settle/state.json").read_text())


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """One machine's settle, stopped after round 1 (``--rounds 1``, as a kill between rounds leaves it) and
    resumed to the end: (project, state after round 1, final state, the resumed settle's output)."""
    proj = copy_project(tmp_path_factory.mktemp("settle") / "single")
    r = settle(proj, "--rounds", "1")
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    first = state_of(proj)
    r = settle(proj)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return proj, first, state_of(proj), r.stdout


def test_settle_decides_or_stops_at_max_runs(single):
    proj, _, state, _ = single
    assert state["stopped"] in STOPS
    df = pd.read_csv(proj / TEST_RESULTS / "claims-settled.csv", keep_default_na=False)
    assert list(df.columns) == SETTLED_COLUMNS
    settled = df[df.method == "asymptotic"]
    assert len(settled) >= 4 and set(df.method) <= {"asymptotic", "fixed"}
    last = state["rounds"][-1]["cell_runs"]
    for row in settled.itertuples():
        key = f"{row.paper}/{row.figure}/{row.claim_id}"
        if row.verdict == vd.INCONCLUSIVE:  # undecided only when every cell behind it is at max runs
            assert all(last[c] == 40 for c in state["claims"][key]["cells"]), key
        else:
            assert int(row.decided_at_runs) in (20, 40), key
    assert (df.verdict != vd.INCONCLUSIVE).any()
    report = (proj / TEST_RESULTS / "settle/settle.md").read_text()
    assert "## Settled verdicts" in report and "sequences.png" in report
    for name in ("sequences.png", "sequences.pdf"):
        assert (proj / TEST_RESULTS / "settle" / name).stat().st_size > 1000
    # the folder is an ordinary results folder: the workflow's own report and claims are there too
    assert (proj / TEST_RESULTS / "claims.csv").exists() and (proj / TEST_RESULTS / "report.md").exists()


def test_settle_extends_only_the_cells_of_undecided_claims(single):
    _, _, state, _ = single
    rounds = state["rounds"]
    assert len(rounds) >= 2, "the narrowed config must leave a claim undecided at 20 runs"
    for before, after in zip(rounds, rounds[1:]):
        behind = {c for k in before["undecided"] for c in state["claims"][k]["cells"]}
        grown = {c for c, n in after["cell_runs"].items() if n != before["cell_runs"][c]}
        assert grown and grown <= behind
        assert all(after["cell_runs"][c] == n for c, n in before["cell_runs"].items() if c not in behind)


def test_next_round_lists_only_cells_of_undecided_claims():
    claim = SimpleNamespace
    traced = [claim(key="open", runs=20, cells={"a", "shared"}), claim(key="done", runs=20, cells={"b", "shared"}),
              claim(key="fixed", runs=0, cells={"c"}), claim(key="capped", runs=40, cells={"d"})]
    decisions = {"open": claim(verdict=vd.INCONCLUSIVE), "done": claim(verdict=vd.REPRODUCED),
                 "capped": claim(verdict=vd.INCONCLUSIVE)}
    grid = (20, 40)
    now = {"a": 20, "b": 20, "c": 20, "d": 40, "shared": 40}
    assert next_targets(traced, decisions, grid, now) == {"a": 40}  # shared is at 40 already; d is capped


def test_settle_resumes_from_its_last_round(single, capsys):
    proj, first, state, out = single
    assert len(first["rounds"]) == 1 and first["stopped"] is None
    assert state["rounds"][0] == first["rounds"][0]  # the finished round is kept, not redone
    assert "round 2:" in out and "round 1:" not in out
    # a finished settle says so and changes nothing (in this process: it stops before any round)
    assert settle_here(proj) == 0 and "already finished" in capsys.readouterr().out
    assert state_of(proj) == state


def test_settle_continues_from_runs_merged_from_two_machines(single, tmp_path):
    """Machine A ran runs 0..9 (a whole run), machine B runs 10..19 (first_run=10: shards only); merged into A, a
    settle there computes no run either machine made and ends with the same verdicts, decision points and
    per-cell runs as one machine's. (Each machine's prepared data is a copy of the one machine's: preparing
    is not what this test is about.)"""
    one, _, state, _ = single
    a, b = copy_project(tmp_path / "a"), copy_project(tmp_path / "b")
    for proj, extra in ((a, ["runs=10", "max_runs=10"]), (b, ["first_run=10", "runs=20", "max_runs=20"])):
        subprocess.run(["cp", "-a", str(one / "data"), str(proj)], check=True)
        r = smk("--configfile", TEST_CONFIG, "--cores", "2", "--config", *NARROW, *extra, cwd=proj)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    env = {**os.environ, "PYTHONPATH": str(a / "src")}
    r = subprocess.run([sys.executable, "-m", "banditrepro", "merge", str(b / TEST_RESULTS), "--into", TEST_RESULTS,
                        "--configfile", TEST_CONFIG, "--config", *NARROW, "runs=20", "max_runs=20", "--project",
                        str(a)], cwd=a, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    before = len(computed(a))
    r = settle(a)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    ranges = {shard_runs(Path(s).name) for s in computed(a)[before:]}
    assert ranges and None not in ranges and all(first >= 20 for first, _ in ranges), ranges  # none A or B made
    split = state_of(a)
    assert split["claims"] == state["claims"] and split["stopped"] == state["stopped"]
    assert [x["cell_runs"] for x in split["rounds"]] == [x["cell_runs"] for x in state["rounds"]]
    cols = ["claim_id", "verdict", "decided_at_runs", "verdict_finite_sample", "ci_low", "ci_high"]
    read = [pd.read_csv(p / TEST_RESULTS / "claims-settled.csv", keep_default_na=False)[cols] for p in (one, a)]
    pd.testing.assert_frame_equal(*read)


def test_cell_runs_absent_or_empty_plans_the_same_and_raises_only_listed_cells(tmp_path):
    """Absent or empty, ``cell_runs`` plans what no key plans; listed, only the listed cell changes; on the
    command line (`--config 'cell_runs={"<cell>": 45}'`: Snakemake hands the values as strings) it plans what the
    same mapping in a config file plans; a value or key that is not one is a one-line config error
    (docs/settle.md#cell_runs)."""
    proj = copy_project(tmp_path / "p")
    assert "cell_runs" not in (ROOT / "config/config.yaml").read_text()  # the default config has none
    narrow = {"papers": ["winner-stays"], "max_horizon": 500, "data_mirrors": [str(MIRROR)], "max_runs": 50}
    base = plan_of(proj, TEST_CONFIG, **narrow)
    assert plan_of(proj, TEST_CONFIG, cell_runs={}, **narrow) == base
    cell = sorted(base["cells"])[0]
    # in a config file, as settle writes it (`--config` gives a mapping's values to the schema as strings)
    (proj / "raise.yaml").write_text(json.dumps({"cell_runs": {cell: 45}}))  # beyond the settle's runs 0-39
    raised = plan_of(proj, TEST_CONFIG, "raise.yaml", **narrow)
    assert raised["cells"][cell]["shards"] != base["cells"][cell]["shards"]
    assert {c: v for c, v in raised["cells"].items() if c != cell} == \
        {c: v for c, v in base["cells"].items() if c != cell}
    assert plan_of(proj, TEST_CONFIG, cell_runs={cell: 45}, **narrow) == raised
    for bad, words in ((f"cell_runs={cell}:45", "config error: cell_runs = "),
                       (f"cell_runs={{{cell}: 0}}", f"config error: cell_runs.{cell} = 0: runs of a cell"),
                       ("cell_runs={sushi16: 3}", "a cell key is <dataset>/T<horizon>/<algorithm id>")):
        r = smk("-n", "--configfile", TEST_CONFIG, "--config", *NARROW, bad, cwd=proj)
        lines = error_lines(r)
        assert r.returncode != 0 and len(lines) == 1 and words in lines[0], lines


def test_raise_cell_runs_never_lowers_caps_and_rejects_unknown_cells():
    runs = {"d/T10/x": 20, "d/T10/y": 200}
    raise_cell_runs(runs, {"d/T10/x": 80, "d/T10/y": 40}, 50)
    assert runs == {"d/T10/x": 50, "d/T10/y": 200}
    raise_cell_runs(runs, None, None)
    assert runs == {"d/T10/x": 50, "d/T10/y": 200}
    with pytest.raises(Exception, match="cell_runs.d/T10/z: no such cell"):
        raise_cell_runs(runs, {"d/T10/z": 3}, None)


def test_cell_runs_schema_rejects_a_bad_key_or_count():
    from banditrepro.workflow.config import ConfigError, check_config

    for bad in ({"sushi16/T500": 3}, {"sushi16/T500/rucb": 0}):
        with pytest.raises(ConfigError, match="config error: cell_runs"):
            check_config({"cell_runs": bad}, ROOT / "workflow/schemas/config.schema.yaml")


@pytest.mark.parametrize("args, words", [
    (["--first-round", "0"], "--first-round must be >= 1"),
    (["--first-round", "50", "--max-runs", "40"], "below the first round"),
    (["--max-runs", "40", "--cpu-hours", "0"], "--cpu-hours must be > 0"),
    (["--config", "cell_runs={a/T1/b: 3}"], "settle sets cell_runs itself"),
])
def test_settle_bad_input_is_one_line_exit_2(args, words, capsys):
    """Through the CLI's ``main`` in this process: each is refused before any round (``python -m banditrepro``
    is ``main``, run as a process by the fixture's settles)."""
    from banditrepro import cli

    assert cli.main(["settle", "--project", str(ROOT), "--configfile", str(ROOT / TEST_CONFIG), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_settle_stops_when_the_cpu_budget_is_spent(single, tmp_path):
    """A clone of the finished settle started afresh (its shards on disk) with a budget one round overspends."""
    proj = tmp_path / "budget"
    subprocess.run(["cp", "-a", str(single[0]), str(proj)], check=True)
    (proj / TEST_RESULTS / "settle/state.json").unlink()
    r = settle(proj, "--cpu-hours", "1e-6")
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    state = state_of(proj)
    assert len(state["rounds"]) == 1 and state["stopped"] == "CPU budget spent"
    assert "stopped: CPU budget spent" in r.stdout


def test_settle_passes_the_workflow_profile_to_snakemake(monkeypatch, tmp_path):
    """The SLURM profile reaches snakemake unchanged (the round is otherwise the same command)."""
    from banditrepro import settle_run

    seen = []
    monkeypatch.setattr(settle_run.subprocess, "run", lambda cmd, **kw: seen.append(cmd) or SimpleNamespace(
        returncode=0))
    profile = ROOT / "profiles/slurm"
    assert settle_run.snakemake(ROOT, [], ["runs=20"], tmp_path / "r.yaml", profile, "2") == 0
    cmd = seen[0]
    assert cmd[cmd.index("--workflow-profile") + 1] == str(profile)
    assert cmd[1:3] == ["-m", "snakemake"] and str(tmp_path / "r.yaml") in cmd


def cli(proj: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}, "PYTHONPATH": str(proj / "src")}
    return subprocess.run([sys.executable, "-m", "banditrepro", *args, "--project", str(proj)], cwd=cwd or proj,
                          capture_output=True, text=True, env=env, timeout=600)


SETTLE_FILES = ("claims-settled.csv", "settle/state.json", "settle/settle.md", "settle/sequences.png",
                "settle/sequences.pdf")


@pytest.fixture(scope="module")
def settled_bundle(single, tmp_path_factory):
    out = tmp_path_factory.mktemp("settled-bundle") / "settled.tar.gz"
    r = cli(single[0], "bundle", TEST_RESULTS, "-o", str(out))
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return out


def test_a_settled_folder_bundles_and_verifies_as_any_other(single, settled_bundle):
    """The bundle carries claims-settled.csv and settle/ (each listed in checksums.sha256); verify re-derives
    claims-settled.csv from the shards, equal byte for byte, and names the rest of settle/ as not checked."""
    import tarfile

    with tarfile.open(settled_bundle) as tar:
        names = set(tar.getnames())
        sums = tar.extractfile("checksums.sha256").read().decode()
        carried = tar.extractfile("results/claims-settled.csv").read()
    assert {f"results/{f}" for f in SETTLE_FILES} <= names and "results/settle/cell_runs.yaml" not in names
    assert all(f"  results/{f}\n" in sums for f in SETTLE_FILES)
    assert carried == (single[0] / TEST_RESULTS / "claims-settled.csv").read_bytes()
    r = cli(single[0], "verify", str(settled_bundle), "--sample", "2")
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "no mismatch in what was checked" in r.stdout
    n = len(pd.read_csv(single[0] / TEST_RESULTS / "claims-settled.csv"))
    assert f"claims-settled.csv: {n} claims' settled verdicts re-derived equal" in r.stdout
    for name in SETTLE_FILES[1:]:
        assert f"not checked: {name} (" in r.stdout, r.stdout[-3000:]
    assert "not checked: claims-settled.csv" not in r.stdout


def test_a_flipped_settled_verdict_in_a_bundle_fails_verify_naming_it(single, settled_bundle, tmp_path):
    from tests.sharing.test_verify import rebundle

    df = pd.read_csv(single[0] / TEST_RESULTS / "claims-settled.csv", keep_default_na=False)
    decided = (vd.REPRODUCED, vd.NOT_REPRODUCED)
    row = next(i for i, (v, m) in enumerate(zip(df.verdict, df.method)) if v in decided and m == "asymptotic")
    was = df.verdict[row]
    other = decided[was == vd.REPRODUCED]

    def flip(data: bytes) -> bytes:  # the row's verdict cell only (settle writes one line per row)
        lines = data.decode().split("\n")
        cells = lines[row + 1].split(",")
        at = next(i for i, c in enumerate(cells) if c == was)
        lines[row + 1] = ",".join([*cells[:at], other, *cells[at + 1:]])
        return "\n".join(lines).encode()

    out = rebundle(settled_bundle, tmp_path / "flipped.tar.gz", {"results/claims-settled.csv": flip})
    r = cli(single[0], "verify", str(out), "--sample", "1")
    assert r.returncode == 1, (r.stdout + r.stderr)[-3000:]
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("MISMATCH ")]
    assert len(lines) == 1 and lines[0].startswith(f"MISMATCH claims-settled.csv: row {row + 1}"), lines
    assert "verdict" in lines[0] and other in lines[0], lines


def test_a_settled_bundle_merges_as_any_other(single, settled_bundle, tmp_path):
    """merge pools a settled bundle's shards (settle's own files are not shards: nothing of them is moved)."""
    proj = copy_project(tmp_path / "into")
    r = cli(proj, "merge", str(settled_bundle), "--into", TEST_RESULTS, "--configfile", TEST_CONFIG, "--config",
            *NARROW, "runs=40", "max_runs=40")
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    merged = sorted(p.relative_to(proj / TEST_RESULTS) for p in (proj / TEST_RESULTS / "cells").rglob("*.npz"))
    theirs = sorted(p.relative_to(single[0] / TEST_RESULTS) for p in (single[0] / TEST_RESULTS / "cells").rglob(
        "*.npz"))
    assert merged == theirs
    assert not (proj / TEST_RESULTS / "claims-settled.csv").exists() and not (proj / TEST_RESULTS / "settle").exists()


def test_a_settled_folder_whose_runs_changed_after_settle_is_not_bundled(single, tmp_path):
    """A snakemake run after settle publishes other runs: its settled verdicts are stale, so bundle refuses the
    folder (one line) rather than carry them; a settle folder that is a link is refused by the reader."""
    proj = tmp_path / "stale"
    subprocess.run(["cp", "-a", str(single[0]), str(proj)], check=True)
    state_path = proj / TEST_RESULTS / "settle/state.json"
    state = json.loads(state_path.read_text())
    cell = sorted(state["rounds"][-1]["cell_runs"])[0]
    state["rounds"][-1]["cell_runs"][cell] += 1
    state_path.write_text(json.dumps(state))
    r = cli(proj, "bundle", TEST_RESULTS, "-o", str(tmp_path / "stale.tar.gz"))
    assert r.returncode == 2 and "last round ran other runs than published.json records" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "stale.tar.gz").exists()
    folder = proj / TEST_RESULTS / "settle"
    folder.rename(tmp_path / "elsewhere")
    folder.symlink_to(tmp_path / "elsewhere")
    r = cli(proj, "verify", TEST_RESULTS, "--sample", "0")
    assert r.returncode == 2 and "settle is not a folder (a link or a file)" in r.stderr, r.stderr
