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
from banditrepro.settle_claims import SETTLED_COLUMNS
from banditrepro.settle_run import next_targets
from banditrepro.workflow.plan import raise_cell_runs
from tests.workflow.common import MIRROR, ROOT, TEST_CONFIG, TEST_RESULTS, copy_project, plan_of, smk

NARROW = [f"data_mirrors=['{MIRROR}']", "papers=[winner-stays]", "max_horizon=500"]
SETTLE = ["--first-round", "20", "--max-runs", "40"]
STOPS = ("every claim decided", "max runs reached by every undecided claim's cells")


def settle(proj: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(proj / "src")}
    return subprocess.run([sys.executable, "-m", "banditrepro", "settle", "--project", str(proj), "--configfile",
                           TEST_CONFIG, "--config", *NARROW, *SETTLE, *extra], cwd=proj, capture_output=True,
                          text=True, env=env, timeout=900)


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


def test_settle_resumes_from_its_last_round(single):
    proj, first, state, out = single
    assert len(first["rounds"]) == 1 and first["stopped"] is None
    assert state["rounds"][0] == first["rounds"][0]  # the finished round is kept, not redone
    assert "round 2:" in out and "round 1:" not in out
    again = settle(proj)  # a finished settle says so and changes nothing
    assert again.returncode == 0 and "already finished" in again.stdout
    assert state_of(proj) == state


def test_settle_continues_from_runs_merged_from_two_machines(single, tmp_path):
    """Machine A ran runs 0..9 (a whole run), machine B runs 10..19 (first_run=10: shards only); merged into A, a
    settle there ends with the same verdicts, decision points and per-cell runs as one machine's."""
    one, _, state, _ = single
    a, b = copy_project(tmp_path / "a"), copy_project(tmp_path / "b")
    for proj, extra in ((a, ["runs=10", "max_runs=10"]), (b, ["first_run=10", "runs=20", "max_runs=20"])):
        r = smk("--configfile", TEST_CONFIG, "--cores", "2", "--config", *NARROW, *extra, cwd=proj)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    env = {**os.environ, "PYTHONPATH": str(a / "src")}
    r = subprocess.run([sys.executable, "-m", "banditrepro", "merge", str(b / TEST_RESULTS), "--into", TEST_RESULTS,
                        "--configfile", TEST_CONFIG, "--config", *NARROW, "runs=20", "max_runs=20", "--project",
                        str(a)], cwd=a, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    r = settle(a)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    split = state_of(a)
    assert split["claims"] == state["claims"] and split["stopped"] == state["stopped"]
    assert [x["cell_runs"] for x in split["rounds"]] == [x["cell_runs"] for x in state["rounds"]]
    cols = ["claim_id", "verdict", "decided_at_runs", "verdict_finite_sample", "ci_low", "ci_high"]
    read = [pd.read_csv(p / TEST_RESULTS / "claims-settled.csv", keep_default_na=False)[cols] for p in (one, a)]
    pd.testing.assert_frame_equal(*read)


def test_cell_runs_absent_or_empty_plans_the_same_and_raises_only_listed_cells(single):
    proj = single[0]
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
])
def test_settle_bad_input_is_one_line_exit_2(args, words, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run([sys.executable, "-m", "banditrepro", "settle", "--project", str(ROOT), "--configfile",
                        TEST_CONFIG, *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


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


def test_a_settled_folder_bundles_and_verifies_as_any_other(single, tmp_path):
    proj = single[0]
    env = {**{k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}, "PYTHONPATH": str(proj / "src")}
    cli = [sys.executable, "-m", "banditrepro"]
    out = tmp_path / "settled.tar.gz"
    for args in (["bundle", TEST_RESULTS, "-o", str(out)], ["verify", str(out), "--sample", "2"]):
        r = subprocess.run([*cli, *args, "--project", str(proj)], cwd=proj, capture_output=True, text=True, env=env,
                           timeout=600)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "no mismatch in what was checked" in r.stdout
