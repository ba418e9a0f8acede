"""Challengers (config key `challengers`): which figures they join, their lines, captions, claim rows and runs,
and the one-line errors for bad input (banditrepro/challengers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from banditrepro import ReproError, challengers
from banditrepro.manifest import cell_runs, load_manifest
from banditrepro.workflow.plan import build_plan

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "config" / "figures"
PAPERS = ["c2b", "dp-ts-ucb", "winner-stays"]


@pytest.fixture(scope="module")
def figures():
    return load_manifest(MANIFEST, papers=PAPERS)


def joined(figures, value, papers=PAPERS):
    return challengers.join(figures, value, MANIFEST, papers)


def test_no_challengers_leaves_the_figures_as_they_are(figures):
    assert joined(figures, []) is figures
    assert joined(figures, {}) is figures


def test_a_builtin_dueling_challenger_joins_every_dueling_panel_of_c2b_and_winner_stays(figures):
    out = joined(figures, ["rmed2"])
    arenas = {f.stem for f in challengers.arena_figures(out)}
    assert arenas == {"c2b/fig1", "c2b/fig2", "c2b/all-algorithms", "winner-stays/fig2-weak-regret",
                      "winner-stays/fig3-strong-regret"}
    for fig in out:
        lines = [r for p in fig.panels for r in p.algorithms if r.challenger]
        if fig.stem in arenas:
            assert all(any(r.key == "challenger-rmed2" for r in p.algorithms) for p in fig.panels)
            assert {r.label for r in lines} == {"RMED2 (challenger)"} and {r.id for r in lines} == {"rmed2"}
            assert "challenger" in fig.caption
            ids = [c["id"] for c in fig.claims if challengers.is_challenger_claim(c)]
            assert ids == [f"challenger-rmed2-vs-paper-{fig.id}", f"challenger-rmed2-vs-strongest-{fig.id}"]
        else:  # every other figure is the manifest's, unchanged
            assert fig == next(f for f in figures if f.stem == fig.stem) and not lines
    # the papers' own lines and claims are untouched: the challenger only appends
    old = {f.stem: f for f in figures}
    for fig in challengers.arena_figures(out):
        assert fig.claims[:len(old[fig.stem].claims)] == old[fig.stem].claims
        for p, q in zip(fig.panels, old[fig.stem].panels):
            assert p.algorithms[:-1] == q.algorithms


def test_only_a_private_challenger_joins_the_privacy_figures(figures):
    out = joined(figures, ["dp-se"])
    assert {f.stem for f in challengers.arena_figures(out)} == {
        "dp-ts-ucb/equal-privacy-alpha0", "dp-ts-ucb/equal-privacy-alpha1", "dp-ts-ucb/eps-dp-alpha0",
        "dp-ts-ucb/eps-dp-alpha1"}
    with pytest.raises(ReproError, match=r"^challenger 'rmed2' \(duel, not private\) fits no figure of the "
                                         r"selected papers \(dp-ts-ucb\)"):
        joined([f for f in figures if f.paper == "dp-ts-ucb"], ["rmed2"], ["dp-ts-ucb"])


def test_weak_regret_caption_says_when_a_challenger_was_not_built_for_it(figures):
    out = {f.stem: f for f in joined(figures, ["uniform-pairs", "ws-w"])}
    weak = out["winner-stays/fig2-weak-regret"].caption
    assert "Uniform pairs (plugin) (challenger) was not built for weak regret" in weak
    assert "WS-W (challenger) was not built" not in weak
    assert "not built for" not in out["winner-stays/fig3-strong-regret"].caption
    # each challenger its own index (its colour), in the config's order
    refs = challengers.challenger_refs(out["c2b/fig1"])
    assert [(r.name, r.challenger) for r in refs] == [("uniform-pairs", 1), ("ws-w", 2)]


def test_parameters_and_bad_input_are_named_on_one_line(figures):
    out = joined(figures, {"rucb": {"alpha": 0.6}})
    ref = challengers.challenger_refs(next(f for f in out if f.stem == "c2b/fig1"))[0]
    assert (ref.id, ref.key) == ("rucb+alpha=0.6", "challenger-rucb+alpha=0.6")
    assert ref.label == "RUCB, alpha=0.6 (challenger)"
    cases = [(["no-such-algo"], r"^challenger 'no-such-algo': unknown algorithm 'no-such-algo'"),
             ({"rmed2": {"bogus": 1}}, r"^challenger 'rmed2': rmed2: unknown parameter 'bogus'"),
             ({"rmed2": {"alpha": -1}}, r"^challenger 'rmed2': rmed2: parameter alpha must be"),
             ({"rmed2": 3}, r"^challenger 'rmed2': parameters must be a mapping")]
    for value, pattern in cases:
        with pytest.raises(ReproError, match=pattern) as exc:
            joined(figures, value)
        assert "\n" not in str(exc.value)


def test_a_challenger_never_changes_the_runs_of_a_paper_cell(figures):
    before = cell_runs(figures, 20)
    out = joined(figures, ["rmed2", "uniform-pairs"])
    after = cell_runs(out, 20)
    assert {k: after[k] for k in before} == before  # rmed2 on sushi16 (Fig. 3, 20 runs) keeps its 20
    new = {k: n for k, n in after.items() if k not in before}
    assert new and {k[2] for k in new} == {"rmed2", "uniform-pairs"}
    assert new[("utility10", 100000, "uniform-pairs")] == 200  # the weak-regret figure asks 200 runs
    assert ("sushi16", 100000, "rmed2") in before and ("sushi16", 100000, "rmed2") not in new


def _config(**kw):
    return {"max_horizon": 2000, "runs": 2, "results_dir": "results/test-challengers", "base_seed": 7, **kw}


def test_build_plan_stops_with_one_line_naming_the_challenger():
    with pytest.raises(ReproError) as exc:
        build_plan(_config(challengers=["nope"]), ROOT, scan=False)
    assert str(exc.value).startswith("configuration error: challenger 'nope': unknown algorithm")
    with pytest.raises(ReproError, match=r"^configuration error: challenger 'rmed2' .* fits no figure"):
        build_plan(_config(challengers=["rmed2"], papers=["dp-ts-ucb"]), ROOT, scan=False)
    with pytest.raises(ReproError, match=r"^config error: challengers = 5: a list of algorithm names"):
        build_plan(_config(challengers=5), ROOT, scan=False)


def test_build_plan_with_and_without_challengers_plans_the_same_paper_cells():
    plain = build_plan(_config(), ROOT, scan=False)
    more = build_plan(_config(challengers={"uniform-pairs": None}), ROOT, scan=False)
    assert {k: more.cell_runs[k] for k in plain.cell_runs} == plain.cell_runs
    assert {k: more.names.shards[k] for k in plain.names.shards} == plain.names.shards
    assert {k.split("/")[2] for k in set(more.cell_runs) - set(plain.cell_runs)} == {"uniform-pairs"}
