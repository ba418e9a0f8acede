"""Challengers end to end on the test config (both challengers of the example plugin, through to the
leaderboards), in copies of the session's finished test-config run: adding them computes only their own
cells' shards and makes only their summaries, the figures they join and what reads those (claims, report,
run-time table, a leaderboard per paper), appending claim rows; removing them publishes the papers' own
store entries again (byte for byte, nothing recomputed) and removes the leaderboards from the published
files (workflow/publish.py); adding them back computes nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from tests.workflow.common import (
    MIRROR,
    TEST_CONFIG,
    TEST_RESULTS,
    clone,
    computed,
    job_counts,
    only_all,
    plan_of,
    scheduled_cells,
    smk,
    tree_digest,
)

pytestmark = pytest.mark.workflow

IDS = ["uniform-pairs", "thompson-duels"]
CHALLENGERS = f"challengers={json.dumps(IDS)}"
ARENAS = {"c2b/fig1", "c2b/fig2", "c2b/all-algorithms", "winner-stays/fig2-weak-regret",
          "winner-stays/fig3-strong-regret"}


def config(*extra):
    return ["--configfile", TEST_CONFIG, "--config", f"data_mirrors=['{MIRROR}']", *extra]


def _online(plan: dict, cells) -> set[str]:
    """The cells a run here computes: not those of an optional dataset not obtainable offline."""
    return {c for c in cells if c.split("/")[0] not in plan["optional"]}


def test_challengers_run_only_their_own_work_and_leave_the_papers_outputs_as_they_were(test_run, tmp_path):
    copy = clone(test_run[0], tmp_path / "copy")
    results = copy / TEST_RESULTS
    papers = tree_digest(results)  # the papers' outputs as the session built them (mtime, sha256)
    plan = plan_of(copy, TEST_CONFIG, challengers=IDS)
    theirs = _online(plan, [c for c in plan["cells"] if c.split("/")[2] in IDS])
    assert theirs and {c.split("/")[2] for c in theirs} == set(IDS)
    # every other cell keeps its name (its shards exist): only the challengers' shards are missing
    assert {c for c in _online(plan, plan["cells"]) if plan["cells"][c]["missing"]} == theirs

    # a dry run lists only the challengers' batches and summaries, the figures they join, and what reads them
    r = smk("-n", "--quiet", "host", *config(CHALLENGERS), cwd=copy)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert scheduled_cells(out, plan) == theirs
    summaries = set(re.findall(r"wildcards: dataset=[^,]+, horizon=\d+, algo=([^,\s]+)", out))
    assert summaries == set(IDS)
    figures = set(re.findall(r"wildcards: paper=([a-z0-9-]+), figure=([a-z0-9-]+)", out))
    assert {f"{p}/{f}" for p, f in figures} == ARENAS
    counts = job_counts(out)
    assert {k: v for k, v in counts.items() if k not in ("simulate", "total")} == {
        "summarize_cell": len(theirs), "figure": len(ARENAS), "leaderboard": 2, "claims": 1, "report_md": 1,
        "runtime_table": 1, "all": 1}, counts

    before = computed(copy)
    r = smk("--cores", "2", *config(CHALLENGERS), cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    added = computed(copy)[len(before):]  # "cells/<dataset>/T<h>/<algo>/<key>/runs<a>-<b>.npz"
    prefix = len(TEST_RESULTS) + 1
    assert sorted(added) == sorted(s[prefix:] for c in theirs for s in plan["cells"][c]["shards"])
    after = tree_digest(results)
    # no cell or summary of the papers was rewritten (same mtime, same bytes)
    kept = {k: v for k, v in papers.items() if k.startswith(("cells/", "summaries/"))}
    assert {k: after[k] for k in kept} == kept
    # claims: the papers' rows first, unchanged; then the challengers' rows, which name them
    old = (test_run[0] / TEST_RESULTS / "claims.csv").read_text().splitlines()
    new = (results / "claims.csv").read_text().splitlines()
    assert new[:len(old)] == old
    rows = pd.read_csv(results / "claims.csv").iloc[len(old) - 1:]
    assert len(rows) == 2 * 2 * len(ARENAS) and rows.claim_id.str.startswith("challenger-").all()
    assert rows.claim.str.contains(r"\(challenger\)").all()
    # a leaderboard per paper with a challenger, ranking them, published; the report says where they stand
    for paper in ("c2b", "winner-stays"):
        board = pd.read_csv(results / f"leaderboards/{paper}.csv")
        assert {"challenger-uniform-pairs", "challenger-thompson-duels"} <= set(board.algorithm)
        assert (results / f"leaderboards/{paper}.png").stat().st_size > 0
    assert not (results / "leaderboards/dp-ts-ucb.csv").exists()  # no private challenger
    assert "Thompson duels (plugin) (challenger) ranks" in (results / "report.md").read_text()
    fig1 = pd.read_csv(results / "tables/c2b/fig1.csv")
    assert "Thompson duels (plugin) (challenger)" in set(fig1.label)
    _by_hand_equals_the_workflow(copy, tmp_path / "cli")
    # the HTML report shows each leaderboard (figure and table) under a category of its own
    r = smk(*config(CHALLENGERS), "--report", str(tmp_path / "report.html"), cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    html = (tmp_path / "report.html").read_text()
    assert "Leaderboards" in html and html.count("Leaderboard of c2b") >= 1, html[:500]

    # removing the challengers: the papers' store entries are there, so only `all` runs; it publishes them
    # again byte for byte and removes the leaderboards it had published
    r = smk("--cores", "2", *config(), cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert only_all(r.stdout + r.stderr), job_counts(r.stdout + r.stderr)
    final = tree_digest(results)
    for name, (_, digest) in papers.items():
        if not name.startswith("logs/"):  # logs record what ran (shards-computed.log gained the challengers')
            assert final[name][1] == digest, name
    assert {k: final[k] for k in kept} == kept
    # a fresh run has no leaderboard: none stays behind, and published.json lists none
    assert not (results / "leaderboards").exists() or not list((results / "leaderboards").iterdir())
    assert not [p for p in json.loads((results / "published.json").read_text())["files"] if "leaderboard" in p]
    # and adding them back computes nothing: their store entries are there too
    r = smk("-n", *config(CHALLENGERS), cwd=copy)
    assert only_all(r.stdout + r.stderr), job_counts(r.stdout + r.stderr)


def _by_hand_equals_the_workflow(project, cwd):
    """`banditrepro figure|claims|report`, given the run's config (so they read its results under their names),
    write what the workflow wrote with the challengers."""
    cwd.mkdir()
    results = project / TEST_RESULTS
    cli = [sys.executable, "-m", "banditrepro"]
    common = ["--project", str(project), "--configfile", str(project / TEST_CONFIG), "--set", CHALLENGERS]
    out = {k: cwd / f"fig1.{k}" for k in ("png", "pdf", "csv")}
    runs = [[*cli, "figure", "c2b/fig1", *common, "--png", str(out["png"]), "--pdf", str(out["pdf"]),
             "--table", str(out["csv"])],
            [*cli, "claims", *common, "--out", str(cwd / "claims.csv")],
            [*cli, "report", *common, "--claims", str(results / "claims.csv"), "--runtime",
             str(results / "tables/runtime.csv"), "--out", str(cwd / "report.md")]]
    for command in runs:
        r = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert out["csv"].read_bytes() == (results / "tables/c2b/fig1.csv").read_bytes()
    assert out["png"].read_bytes() == (results / "figures/c2b/fig1.png").read_bytes()
    assert (cwd / "claims.csv").read_bytes() == (results / "claims.csv").read_bytes()
    assert (cwd / "report.md").read_bytes() == (results / "report.md").read_bytes()


BROKEN = """
from banditrepro.algorithms import AlgorithmSpec

def run(instance, T, tab, grid, rng):
    raise RuntimeError("boom")

SPEC = AlgorithmSpec(name="broken-duels", label="Broken", problem="duel", citation="test", run=run)
"""


def test_a_challenger_whose_kernel_raises_fails_only_its_own_cells(test_run, tmp_path):
    """Beside a working challenger: its shards fail with one line naming the algorithm; with --keep-going
    every output that does not need its runs is still built (the other challenger's shards and summaries,
    and a paper figure no challenger joins, its store entry deleted here), and nothing is published: the
    fixed paths keep the last complete run's files (rule all did not run)."""
    from tests.interface.test_plugin import fake_plugin

    site = fake_plugin(tmp_path / "site", "broken-duels", "broken_duels", BROKEN,
                       {"broken-duels": "broken_duels:SPEC"})
    copy = clone(test_run[0], tmp_path / "copy")
    results = copy / TEST_RESULTS
    record = json.loads((results / "published.json").read_text())["files"]
    other = results / record["figures/c2b/rounds-needed.png"]["from"]
    other.unlink()
    published = {p: v for p, v in tree_digest(results).items() if p in record}
    both = ["broken-duels", "uniform-pairs"]
    env = {"PYTHONPATH": f"{copy / 'src'}:{site}"}
    plan = plan_of(copy, TEST_CONFIG, challengers=both, env=env)
    r = smk("--cores", "2", "--keep-going", *config(f"challengers={json.dumps(both)}"), cwd=copy, env=env)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    named = [ln for ln in out.splitlines() if ln.startswith("algorithm 'broken-duels' failed on ")]
    assert named and all(ln.endswith("RuntimeError: boom") for ln in named), out[-3000:]
    assert not [ln for ln in out.splitlines() if " failed on " in ln and "broken-duels" not in ln], out[-3000:]
    assert other.exists()
    by_algo = {a: _online(plan, [c for c in plan["cells"] if c.split("/")[2] == a]) for a in both}
    assert all(by_algo.values())
    for cell in by_algo["uniform-pairs"]:
        assert all((copy / s).exists() for s in plan["cells"][cell]["shards"]), cell
        assert (copy / plan["cells"][cell]["summary"]).exists(), cell
    for cell in by_algo["broken-duels"]:
        assert not any((copy / s).exists() for s in plan["cells"][cell]["shards"]), cell
        assert not (copy / plan["cells"][cell]["summary"]).exists(), cell
    assert not (results / "leaderboards/c2b.csv").exists()
    assert {p: v for p, v in tree_digest(results).items() if p in published} == published
