"""The challengers' claim rows, the leaderboard and the report's section, on hand-made summaries whose
verdicts are known (banditrepro/claims/challenger.py, standings.py, leaderboard.py, report.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from banditrepro import challengers, claims, leaderboard, report
from banditrepro import verdicts as vd
from banditrepro.manifest import load_manifest
from tests.claim_data import noisy, write_runs
from tests.helpers import layout_at

MANIFEST = """
toy:
  title: a toy paper
  challengers:
    f: {paper_algorithm: paper, baselines: [b1, b2]}
  figures:
    f:
      title: toy figure
      caption: Toy.
      kind: curves
      algorithms:
        - {name: rucb, key: paper}
        - {name: rmed1, key: b1}
        - {name: btm, key: b2}
      panels:
        - {dataset: ds-a, horizon: 1000}
        - {dataset: ds-b, horizon: 1000}
      claims:
        - {id: b1-beats-paper, text: "b1 beats the paper", test: {kind: beats, a: b1, b: paper}}
"""
# mean final regret per (dataset, algorithm id); the noise is the same per run index (paired runs)
MEANS = {("ds-a", "rucb"): 100, ("ds-a", "rmed1"): 80, ("ds-a", "btm"): 150, ("ds-a", "rmed2"): 50,
         ("ds-a", "ccb"): 100.5,
         ("ds-b", "rucb"): 100, ("ds-b", "rmed1"): 90, ("ds-b", "btm"): 60, ("ds-b", "rmed2"): 120,
         ("ds-b", "ccb"): 99.5}


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy.yaml"
    path.write_text(MANIFEST)
    figs = challengers.join(load_manifest(path), ["rmed2", "ccb"], path)
    lay = layout_at(tmp_path)
    for (ds, algo), m in MEANS.items():
        # ccb's runs have their own noise: close to the paper's algorithm but not a copy of it
        write_runs(tmp_path / "summaries", ds, 1000, algo, noisy(m, n=30, rel_sd=0.05, seed=int(algo == "ccb")))
    table = lay.table("toy", "f")
    (tmp_path / "tables/toy").mkdir(parents=True)
    pd.DataFrame({"algorithm": ["paper"]}).to_csv(table, index=False)
    return figs, lay


def rows(df, cid):
    return df[df.claim_id == cid].iloc[0]


def test_challenger_rows_follow_the_papers_rows_and_decide_per_panel(toy):
    figs, lay = toy
    df = claims.check_all(figs, lay)
    assert list(df.claim_id) == ["b1-beats-paper", "challenger-rmed2-vs-paper-f", "challenger-rmed2-vs-strongest-f",
                                 "challenger-ccb-vs-paper-f", "challenger-ccb-vs-strongest-f"]
    # the paper's row is what it is without challengers
    plain = claims.check_all(load_manifest(lay.results_dir + "/toy.yaml"), lay)
    assert df.iloc[:1].equals(plain)
    r = rows(df, "challenger-rmed2-vs-paper-f")  # beats on ds-a (0.5), loses on ds-b (1.2)
    assert r.verdict == vd.NOT_REPRODUCED and "RMED2 (challenger)" in r.claim
    assert "ds-a 0.5" in r.measured and "(beats)" in r.measured and "(loses)" in r.measured
    assert "beats on 1, loses on 1, inconclusive on 0 of 2 panels" in r.measured
    assert r.ci_low > 1  # the interval shown is the contradicting panel's
    # strongest baseline: b1 (ranks 1st on ds-a and 2nd on ds-b among b1, b2: average 1.5 vs btm's 1.5; the
    # tie goes to the lower geometric-mean ratio to the paper's algorithm: 0.849 < 0.949)
    s = rows(df, "challenger-rmed2-vs-strongest-f")
    assert "strongest baseline: RMED1 (average rank 1.5 among 2 baselines" in s.measured
    c = rows(df, "challenger-ccb-vs-paper-f")  # within 0.5 % of the paper's algorithm: open on both panels
    assert c.verdict == vd.INCONCLUSIVE and "(inconclusive, ≈" in c.measured and "runs would settle it" in c.measured


def test_the_leaderboard_ranks_every_line_and_agrees_with_the_claim_rows(toy, tmp_path):
    figs, lay = toy
    out = [lay.leaderboard("toy", s) for s in ("csv", "md", "png", "pdf")]
    assert leaderboard.targets(figs, lay) == out
    assert leaderboard.inputs(figs, lay, "toy") == [lay.table("toy", "f")]
    assert leaderboard.tables(figs, lay) == [out[0]]
    df = leaderboard.build(figs, lay, "toy", *out)
    assert all(Path(p).stat().st_size > 0 for p in out)
    first = df.drop_duplicates("algorithm").set_index("algorithm")
    # average ranks over the two panels: b1 (2, 2) 2; rmed2 (1, 5) 3; b2 (5, 1) 3; the ranking follows them
    assert first.loc["b1", "rank"] == 1 and first.loc["b1", "average_rank"] == 2
    assert first.loc["challenger-rmed2", "average_rank"] == 3 and first.loc["b2", "average_rank"] == 3
    assert list(first.sort_values("rank").average_rank) == sorted(first.average_rank)
    paper_rows = df[(df.algorithm == "paper") & (df.role == leaderboard.PAPER)]
    assert set(paper_rows.verdict) == {leaderboard.REFERENCE} and set(paper_rows.ratio) == {1.0}
    assert set(df[df.role == leaderboard.STRONGEST].algorithm) == {"challenger-rmed2", "challenger-ccb"}
    # the same interval as the claim row (same bootstrap seed)
    claim = claims.check_all(figs, lay)
    mine = df[(df.algorithm == "challenger-rmed2") & (df.role == leaderboard.PAPER) & (df.dataset == "ds-b")].iloc[0]
    assert f"ds-b {claims.fmt_iv(vd.Interval(mine.ratio, mine.ci_low, mine.ci_high))} (loses)" in rows(
        claim, "challenger-rmed2-vs-paper-f").measured
    md = (tmp_path / "leaderboards/toy.md").read_text()
    assert "| **RMED2 (challenger)** |" in md and "1 (reference)" in md


def test_the_report_says_where_each_challenger_stands(toy):
    figs, lay = toy
    leaderboard.build(figs, lay, "toy", *lay.leaderboard_outputs("toy"))
    text = "\n".join(report.challenger_section(figs, lay))
    # rmed2 and b2 share the average rank 3: the lower geometric-mean ratio (0.77 < 0.95) puts rmed2 second
    assert "RMED2 (challenger) ranks 2nd of 5 lines (average rank 3 over 2 panels)" in text
    assert "Against RUCB, the paper's algorithm, it beats it on 1 panel (ds-a) and loses on 1 panel (ds-b)" in text
    assert "Against the strongest baseline, RMED1, it" in text
    assert report.challenger_section([f for f in load_manifest(lay.results_dir + "/toy.yaml")], lay) == []


def test_leaderboards_of_papers_no_challenger_joins_any_more_are_removed(toy):
    """A challenger removed from the config: the report job removes its paper's leaderboard (a fresh run has
    none), keeps those still planned and every file a leaderboard does not write."""
    figs, lay = toy
    out = lay.leaderboard_outputs("toy")
    leaderboard.build(figs, lay, "toy", *out)
    gone = [lay.leaderboard("old-paper", s) for s in ("csv", "md", "png", "pdf")]
    for p in gone:
        Path(p).write_text("from an earlier run with a challenger")
    note = Path(lay.leaderboard("notes", "txt"))
    note.write_text("mine")
    # a file publishing did not write (``ours`` says no: edited by hand) stays
    assert challengers.remove_stale_leaderboards(figs, lay, lambda p: p != gone[0]) == sorted(gone[1:])
    assert Path(gone[0]).exists()
    assert challengers.remove_stale_leaderboards(figs, lay, lambda p: True) == [gone[0]]
    assert all(Path(p).exists() for p in out) and note.exists() and not any(Path(p).exists() for p in gone)
    without = load_manifest(lay.results_dir + "/toy.yaml")  # the same figures, no challenger
    assert challengers.remove_stale_leaderboards(without, lay, lambda p: True) == sorted(out)
    assert note.exists() and challengers.remove_stale_leaderboards(without, lay, lambda p: True) == []
