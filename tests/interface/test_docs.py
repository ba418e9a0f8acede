"""What users and maintainers read: links into docs/decisions.md resolve, CITATION.cff is valid."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
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


# a path in backticks under a top-level folder of the project, e.g. `tests/workflow/test_slurm.py`
PATH_IN_TEXT = re.compile(r"`((?:src|tests|workflow|config|profiles|benchmarks|examples|envs|docs|ci)/[^`\s]*)`")


def stale_paths(text: str) -> list[str]:
    """Backticked project paths that exist neither from the project root nor inside src/banditrepro/
    (docs name package modules as `workflow/plan.py`); templates (`<dataset>`, `*`, `{png,pdf}`) are skipped."""
    stale = []
    for m in PATH_IN_TEXT.finditer(text):
        path = m.group(1).split("::")[0].rstrip("/")
        if any(c in path for c in "<*{") or (ROOT / path).exists() or (ROOT / "src/banditrepro" / path).exists():
            continue
        stale.append(path)
    return stale


def test_stale_paths_are_found():
    assert stale_paths("see `tests/test_workflow.py` and `tests/workflow/test_slurm.py`") == ["tests/test_workflow.py"]


def test_readme_and_docs_name_only_files_that_exist():
    for path in [ROOT / "README.md", *ROOT.glob("docs/*.md")]:
        assert stale_paths(path.read_text()) == [], path.name


def test_config_readme_documents_every_config_key():
    """The workflow catalog shows config/README.md: every key of the schema (nested ones as a.b) is in it."""
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())["properties"]
    keys = set(schema)
    for key, spec in schema.items():
        keys |= {f"{key}.{sub}" for sub in spec.get("properties", {})}
    text = (ROOT / "config/README.md").read_text()
    documented = set(re.findall(r"^\| `([\w.]+)` \|", text, flags=re.M))
    assert keys - {"download"} <= documented, sorted(keys - documented)
    assert documented <= keys, sorted(documented - keys)  # no key that does not exist
    assert ".test/config/config.yaml" in text


def test_workflow_catalog_file_states_usage_and_report():
    settings = yaml.safe_load((ROOT / ".snakemake-workflow-catalog.yml").read_text())
    usage = settings["usage"]
    assert usage["report"] is True
    assert usage["mandatory-flags"]["desc"] and usage["mandatory-flags"]["flags"]
    assert set(usage["software-stack-deployment"]) >= {"conda"}
