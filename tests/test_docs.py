"""What users and maintainers read: links into docs/decisions.md resolve, CITATION.cff is valid."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DECISIONS = ROOT / "docs" / "decisions.md"
LINK = re.compile(r"docs/decisions\.md#([\w-]+)")


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", markdown, flags=re.M)}


def test_slug_follows_github():
    assert slug("C2B figure 2") == "c2b-figure-2" and slug("SCOMP2 and PCOMP") == "scomp2-and-pcomp"
    assert slug("Fig. 2 (B + 6)") == "fig-2-b--6"


def linked_files() -> list[Path]:
    files = [ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("config/**/*.yaml"),
             *ROOT.glob("src/**/*.py"), *ROOT.glob("workflow/**/*.smk"), *ROOT.glob("workflow/report/*")]
    return [f for f in files if f.is_file()]


def test_every_link_into_decisions_resolves_to_a_heading():
    known = anchors(DECISIONS.read_text())
    used = {(f.relative_to(ROOT).as_posix(), a) for f in linked_files() for a in LINK.findall(f.read_text())}
    assert {a for _, a in used}, "no links found: the pattern is wrong"
    assert sorted((f, a) for f, a in used if a not in known) == []
    # and the page's own table of contents
    inner = re.findall(r"\]\(#([^)]+)\)", DECISIONS.read_text())
    assert inner and sorted(set(inner) - known) == []


def test_headings_of_decisions_are_unique():
    heads = re.findall(r"^#{1,6} (.+)$", DECISIONS.read_text(), flags=re.M)
    assert len({slug(h) for h in heads}) == len(heads)


def test_citation_file_parses_and_lists_the_three_papers():
    doc = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert doc["cff-version"] == "1.2.0" and doc["title"] and doc["message"] and doc["authors"]
    refs = doc["references"]
    assert len(refs) == 3
    for ref in refs:
        assert ref["title"] and ref["authors"] and ref["year"] and ref["type"]
        assert all(a.get("family-names") or a.get("name") for a in ref["authors"])
    titles = " ".join(r["title"] for r in refs)
    for word in ("Batched", "Weak Regret", "Thompson Sampling"):
        assert word in titles
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
