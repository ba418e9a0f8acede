"""Challengers end to end on the test config (both challengers of the example plugin, through to the
leaderboards): adding them computes only their own cells and summaries and appends claim rows; removing
them restores every paper output byte for byte. In a copy of the session's finished test-config run."""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest

from tests.workflow.common import MIRROR, TEST_CONFIG, TEST_RESULTS, clone, job_counts, smk, tree_digest

pytestmark = pytest.mark.workflow

CHALLENGERS = 'challengers=["uniform-pairs", "thompson-duels"]'
ARENAS = {"c2b/fig1", "c2b/fig2", "c2b/all-algorithms", "winner-stays/fig2-weak-regret",
          "winner-stays/fig3-strong-regret"}


def config(*extra):
    return ["--configfile", TEST_CONFIG, "--config", f"data_mirrors=['{MIRROR}']", *extra]


def test_challengers_run_only_their_own_work_and_leave_the_papers_outputs_as_they_were(test_run, tmp_path):
    copy = clone(test_run[0], tmp_path / "copy")
    results = copy / TEST_RESULTS
    papers = tree_digest(results)  # the papers' outputs as the session built them (mtime, sha256)

    # a dry run lists only the challengers' cells and summaries, the figures they join, and what reads them
    r = smk("-n", "--quiet", "host", *config(CHALLENGERS), cwd=copy)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert re.search(r"wildcards: batch=", out)  # batches of shards to compute (which ones: the log below)
    summaries = set(re.findall(r"wildcards: dataset=[^,]+, horizon=\d+, algo=([^,\s]+)", out))
    assert summaries == {"uniform-pairs", "thompson-duels"}
    figures = set(re.findall(r"wildcards: paper=([a-z0-9-]+), figure=([a-z0-9-]+)", out))
    assert {f"{p}/{f}" for p, f in figures} == ARENAS
    counts = job_counts(out)
    assert counts["leaderboard"] == 2 and counts["claims"] == 1 and counts["report_md"] == 1, counts

    log = results / "logs" / "shards-computed.log"
    before = log.read_text().splitlines() if log.exists() else []
    r = smk("--cores", "2", *config(CHALLENGERS), cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    computed = log.read_text().splitlines()[len(before):]  # "<dataset>/T<h>/<algo>/<code>/runs<a>-<b>.npz ..."
    assert computed and {line.split()[0].split("/")[2] for line in computed} == {"uniform-pairs", "thompson-duels"}
    after = tree_digest(results)
    # no cell or summary of the papers was rewritten (same mtime, same bytes)
    kept = {k: v for k, v in papers.items() if k.startswith(("cells/", "summaries/"))}
    assert {k: after[k] for k in kept} == kept
    # claims: the papers' rows first, unchanged; then the challengers' rows, which name them
    old = (test_run[0] / TEST_RESULTS / "claims.csv").read_text().splitlines()
    new = (results / "claims.csv").read_text().splitlines()
    assert new[:len(old)] == old
    added = pd.read_csv(results / "claims.csv").iloc[len(old) - 1:]
    assert len(added) == 2 * 2 * len(ARENAS) and added.claim_id.str.startswith("challenger-").all()
    assert added.claim.str.contains(r"\(challenger\)").all()
    # a leaderboard per paper with a challenger, ranking them; the report says where they stand
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

    # removing the challengers restores every paper output byte for byte, and recomputes no cell
    r = smk("--cores", "2", *config(), cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    final = tree_digest(results)
    for name, (_, digest) in papers.items():
        if not name.startswith("logs/"):  # logs record what ran (shards-computed.log gained the challengers')
            assert final[name][1] == digest, name
    assert {k: final[k] for k in kept} == kept
    # a fresh run has no leaderboard: none stays behind
    assert not (results / "leaderboards").exists() or not list((results / "leaderboards").iterdir())
    r = smk("-n", *config(), cwd=copy)
    assert "Nothing to be done" in r.stdout + r.stderr


def _by_hand_equals_the_workflow(project, cwd):
    """`banditrepro figure|claims|report --challengers ...` write what the workflow wrote with the challengers."""
    cwd.mkdir()
    results = project / TEST_RESULTS
    cli = [sys.executable, "-m", "banditrepro"]
    common = ["--papers", "c2b", "dp-ts-ucb", "winner-stays", "--max-horizon", "2000", "--challengers",
              "uniform-pairs", "thompson-duels", "--manifest", str(project / "config/figures"), "--status-dir",
              str(project / "data/status"), "--results-dir", str(results)]
    prepared = ["--prepared-dir", str(project / "data/prepared")]
    out = {k: cwd / f"fig1.{k}" for k in ("png", "pdf", "csv")}
    runs = [[*cli, "figure", "c2b/fig1", *common, *prepared, "--png", str(out["png"]), "--pdf", str(out["pdf"]),
             "--table", str(out["csv"])],
            [*cli, "claims", *common, *prepared, "--out", str(cwd / "claims.csv")],
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


def test_a_challenger_whose_kernel_raises_fails_only_its_own_jobs(test_run, tmp_path):
    """Its shards fail with one line naming the algorithm; with --keep-going every output that does not
    need its runs is still built (here a deleted paper figure no challenger joins)."""
    from tests.interface.test_plugin import fake_plugin

    site = fake_plugin(tmp_path / "site", "broken-duels", "broken_duels", BROKEN,
                       {"broken-duels": "broken_duels:SPEC"})
    copy = clone(test_run[0], tmp_path / "copy")
    other = copy / TEST_RESULTS / "figures/c2b/rounds-needed.png"
    other.unlink()
    r = smk("--cores", "2", "--keep-going", *config('challengers=["broken-duels"]'), cwd=copy,
            env={"PYTHONPATH": f"{copy / 'src'}:{site}"})
    out = r.stdout + r.stderr
    assert r.returncode != 0
    named = [ln for ln in out.splitlines() if ln.startswith("algorithm 'broken-duels' failed on ")]
    assert named and all(ln.endswith("RuntimeError: boom") for ln in named), out[-3000:]
    assert other.exists()
    assert not (copy / TEST_RESULTS / "leaderboards/c2b.csv").exists()
