"""results/reproduction.md: every claim id with its location and verdict, every deviation with its measured
effect (ratio variant/ours with a 95 % interval, or "not measured in this run" when the figure is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.claims import check_all
from banditrepro.manifest import load_manifest
from banditrepro.report import build_reproduction, load_deviations
from tests.claim_data import noisy, write_runs
from tests.helpers import layout_at

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = """
t:
  title: t
  figures:
    f:
      title: f
      algorithms:
        - {name: rucb, key: ours, params: {alpha: 0.51}}
        - {name: rucb, key: variant, params: {alpha: 0.6}}
      panels:
        - {dataset: sushi16, horizon: 1000}
        - {dataset: mslr5, horizon: 1000}
      claims:
        - id: ours-wins
          text: "Ours beats the variant"
          where: "§4, Fig. 1 paragraph"
          why_not: "a reconstruction"
          test: {kind: beats, a: ours, b: variant}
        - id: variant-wins
          text: "The variant beats ours"
          where: "§4, Fig. 1 paragraph"
          why_not: "the paper's own formulas contradict it"
          test: {kind: beats, a: variant, b: ours}
"""
DEVIATIONS = """
deviations:
  - {id: dev-measured, paper: t, what: "literal reading", ours: "our reading",
     effect: {figure: t/f, ours: ours, variant: variant}}
  - {id: dev-absent, paper: t, what: "log2", ours: "ln", effect: {figure: t/absent, ours: a, variant: b}}
  - {id: dev-recon, paper: t, what: "unknown algorithm", ours: "a reconstruction"}
"""


@pytest.fixture
def run(tmp_path):
    (tmp_path / "m.yaml").write_text(MANIFEST)
    (tmp_path / "dev.yaml").write_text(DEVIATIONS)
    figs = load_manifest(tmp_path / "m.yaml")
    root = tmp_path / "summaries"
    for k, ds in enumerate(("sushi16", "mslr5")):
        write_runs(root, ds, 1000, "rucb", noisy(100.0, seed=k))
        write_runs(root, ds, 1000, "rucb+alpha=0.6", noisy(100.0, seed=k) * 1.3)
    (tmp_path / "tables" / "t").mkdir(parents=True)
    (tmp_path / "tables" / "t" / "f.csv").write_text("x\n1\n")
    check_all(figs, layout_at(tmp_path)).to_csv(tmp_path / "claims.csv", index=False)
    return tmp_path, figs, root


def test_reproduction_names_every_claim_and_deviation(run):
    tmp, figs, root = run
    out = tmp / "out" / "reproduction.md"
    text = build_reproduction(figs, layout_at(tmp), tmp / "claims.csv", tmp / "dev.yaml", out)
    assert (tmp / "out" / "reproduction.md").read_text() == text
    for cid in ("ours-wins", "variant-wins"):
        assert f"`{cid}`" in text
    assert "`ours-wins` — **reproduced**" in text and "`variant-wins` — **not reproduced**" in text
    assert "§4, Fig. 1 paragraph" in text
    # the why-not line is shown for the claim that does not reproduce only
    assert "the paper's own formulas contradict it" in text and "a reconstruction\n" not in text
    assert "2 claims: 1 reproduced, 1 not reproduced, 0 inconclusive, 0 vacuous, 0 not run." in text
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| dev-")}
    assert set(rows) == {"dev-measured", "dev-absent", "dev-recon"}
    # variant = ours × 1.3 on every run: the ratio is 1.3 on both panels
    assert "sushi16 1.3 [1.3, 1.3]" in rows["dev-measured"] and "mslr5 1.3 [" in rows["dev-measured"]
    assert "not measured in this run" in rows["dev-absent"] and "no variant run" in rows["dev-recon"]


def test_deviations_file_is_checked(tmp_path):
    (tmp_path / "d.yaml").write_text("deviations:\n  - {id: x, paper: c2b, what: w}\n")
    with pytest.raises(ReproError, match="deviation x: missing ours"):
        load_deviations(tmp_path / "d.yaml")
    (tmp_path / "d.yaml").write_text("deviations:\n  - {id: x, paper: c2b, what: w, ours: o, effect: {figure: f}}\n")
    with pytest.raises(ReproError, match="effect needs figure, ours and variant"):
        load_deviations(tmp_path / "d.yaml")


def test_shipped_deviations_cover_the_known_departures():
    devs = {d["id"]: d for d in load_deviations(ROOT / "config" / "deviations.yaml")}
    for required in ("c2b-pairs-once", "c2b-natural-log", "c2b-scomp2-b6", "scomp2-pcomp-reconstructed",
                     "ws-qsa-reconstructed", "ws-scb-reconstructed", "dp-anytime-lazy-ucb-reconstructed",
                     "ws-yelp-substitute", "c2b-derived-subsets", "dp-mts-gaussian-form"):
        assert required in devs
    assert devs["c2b-pairs-once"]["effect"] == {"figure": "c2b/rounds-needed", "ours": "c2b-B0",
                                                "variant": "c2b-literal"}
    assert devs["c2b-natural-log"]["effect"]["variant"] == "c2b-log2"
    papers = {f.paper for f in load_manifest(ROOT / "config" / "figures")}
    assert {d["paper"] for d in devs.values()} <= papers


def test_verdict_names_in_the_report_are_the_five(run):
    tmp, figs, root = run
    claims = pd.read_csv(tmp / "claims.csv")
    assert set(claims.verdict) <= set(vd.VERDICTS)


OUTSIDE = [(r"\bSPEC\b", "the research specification (not in the repository)"), (r"\.\./", "a path above the project"),
           (r"(?:^|[\s(\"'`=])/[A-Za-z]", "an absolute path")]


def outside_references(text: str) -> list[str]:
    """Every reference in ``text`` that points outside the repository (a reader could not follow it)."""
    import re

    return [f"{why}: {m.group(0)!r} in …{text[max(0, m.start() - 40):m.end() + 20]!r}…"
            for pattern, why in OUTSIDE for m in re.finditer(pattern, text, flags=re.M)]


def test_reproduction_report_stands_on_its_own(run):
    """Built from test data with the shipped deviations: no reference to a file outside the repository, and
    every word the claim rows use (per-panel words, the five verdicts, the interval shown) defined once."""
    tmp, figs, root = run
    text = build_reproduction(figs, layout_at(tmp), tmp / "claims.csv", ROOT / "config" / "deviations.yaml",
                              tmp / "out" / "reproduction.md")
    assert outside_references(text) == []
    assert str(tmp) not in text
    legend = text.split("\n## t\n")[0]
    for word in ("*holds*", "*contradicted*", "*open*", "ci_low", "ci_high", "on most panels", *map("*{}*".format,
                                                                                           vd.VERDICTS)):
        assert word in legend, word
    assert "docs/decisions.md#scb" in text and "docs/decisions.md#qsa" in text
    # the QSA and SCB rows describe the code as it is now
    qsa = next(ln for ln in text.splitlines() if ln.startswith("| ws-qsa-reconstructed"))
    scb = next(ln for ln in text.splitlines() if ln.startswith("| ws-scb-reconstructed"))
    assert "15 duels" not in qsa and "Hoeffding" in qsa and "tie margin" in qsa
    assert "2^(2^r)" in scb and "65,812" in scb and "γ = 0" in scb


def test_manifest_and_deviation_texts_stay_inside_the_repository():
    for path in [*sorted((ROOT / "config" / "figures").glob("*.yaml")), ROOT / "config" / "deviations.yaml"]:
        assert outside_references(path.read_text()) == [], path.name


def test_reproduction_names_the_figures_whose_shards_came_from_more_than_one_stack(tmp_path):
    """report.stacks_section reads the summaries' sidecars' `stacks`: a figure with two stacks among its cells is
    named with both; a figure of one stack, or with a summary or its sidecar missing, is not."""
    from types import SimpleNamespace as NS

    import numpy as np

    from banditrepro.layout import Layout
    from banditrepro.report import stacks_section

    lay = Layout(str(tmp_path / "results"))
    old, new = "numpy 1.0, numba 0.1, python 3.11.7", "numpy 2.0, numba 0.1, python 3.11.7"

    def summary(algo, stacks):
        path = Path(lay.summary("d", 100, algo))
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, n_runs=1)
        if stacks is not None:
            path.with_suffix(".json").write_text(json.dumps({"wall_seconds": [1.0], "stacks": stacks}))

    summary("a", [old])
    summary("b", [new])
    summary("c", [new])
    summary("e", None)  # its sidecar lost
    panel = lambda *algos: NS(dataset="d", horizon=100, algorithms=[NS(id=a) for a in algos])  # noqa: E731
    mixed = NS(id="fig-mixed", paper="p", panels=[panel("a"), panel("b", "missing")])
    same = NS(id="fig-same", paper="p", panels=[panel("b", "c", "e")])
    lines = stacks_section([mixed, same], lay)
    named = [ln for ln in lines if ln.startswith("- figure")]
    assert named == [f"- figure `fig-mixed` (p): its shards came from 2 stacks: {old}; {new}"]
    assert any("clean --shards" in ln for ln in lines)
    assert stacks_section([same], lay) == []


def test_the_provenance_section_names_a_merged_bundle_by_its_sha256(tmp_path):
    """A folder that came from a bundle (banditrepro merge writes received.json) says so in report.md's
    "Software and provenance", with the bundle's sha256; a folder merged in is named as a folder; nothing
    recorded, no section. Only sources recorded for this report's store entries are shown
    (banditrepro/records.py): a source merged for another config's runs, or recorded without saying which, is not."""
    from dataclasses import replace

    from banditrepro.layout import Names
    from banditrepro.records import describes
    from banditrepro.report import provenance_section

    names = Names(summary={("d", 10, "a"): "1" * 16}, claims="2" * 16)
    layout = replace(layout_at(tmp_path), names=names)
    assert provenance_section(layout) == []
    sha, mine, other = "ab" * 32, describes(names, claims=False), describes(Names(summary={("d", 10, "a"): "3" * 16}))
    Path(layout.received_json).write_text(json.dumps({"sources": [
        {"source": "/x/lab-b.tar.gz", "bundle_sha256": sha, "shards": 12, "describes": mine},
        {"source": "/x/lab-c/results", "bundle_sha256": None, "shards": 3, "describes": mine},
        {"source": "/x/lab-d/results", "bundle_sha256": None, "shards": 4, "describes": other},
        {"source": "/x/lab-e/results", "bundle_sha256": None, "shards": 5}]}))
    lines = provenance_section(layout)
    assert lines[0] == "## Software and provenance"
    assert f"- Merged in: bundle `/x/lab-b.tar.gz` (sha256 {sha}): 12 shards" in lines
    assert "- Merged in: folder `/x/lab-c/results`: 3 shards" in lines
    assert not any("lab-d" in ln or "lab-e" in ln for ln in lines)
    assert provenance_section(layout_at(tmp_path)) == []  # a folder made by hand: nothing can be told


def test_the_provenance_section_shows_a_verification_only_beside_the_numbers_it_checked(tmp_path):
    """verify --record, then a run with another base seed: that report shows no verification of the old numbers;
    the checked config's report does."""
    from dataclasses import replace

    from banditrepro.layout import Names
    from banditrepro.records import describes
    from banditrepro.report import provenance_section

    checked, later = (Names(summary={("d", 10, "a"): k * 16}, claims="2" * 16) for k in ("1", "4"))
    lay = layout_at(tmp_path)
    Path(lay.verification_json).write_text(json.dumps({"seed": 3, "summary": "verified: 2 of 2", "checked_at": "t",
                                                       "describes": describes(checked)}))
    assert "- Verified (t, seed 3, `banditrepro verify`): verified: 2 of 2" in provenance_section(
        replace(lay, names=checked))
    assert provenance_section(replace(lay, names=later)) == []