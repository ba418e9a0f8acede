"""config/deviations.yaml: effects must name figures and lines that exist (checked when the workflow parses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from banditrepro import ReproError
from banditrepro.deviations import load_deviations, validate
from banditrepro.manifest import load_manifest

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
    g:
      title: g
      algorithms:
        - {name: rmed1, key: other}
      panels:
        - {dataset: sushi16, horizon: 1000}
"""


@pytest.fixture
def figs(tmp_path):
    (tmp_path / "m.yaml").write_text(MANIFEST)
    return load_manifest(tmp_path / "m.yaml")


def dev(**effect):
    return [{"id": "d", "paper": "t", "what": "w", "ours": "o", "effect": effect}]


def test_effects_naming_existing_lines_pass(figs):
    validate(dev(figure="t/f", ours="ours", variant="variant"), figs)
    validate(dev(figure="t/f", ours="ours", variant="other", variant_figure="t/g"), figs)
    validate([{"id": "d", "paper": "t", "what": "w", "ours": "o"}], figs)  # no effect: nothing to check


@pytest.mark.parametrize("effect, message", [
    ({"figure": "t/h", "ours": "ours", "variant": "variant"}, "effect figure 't/h' is not a figure .*known: t/f, t/g"),
    ({"figure": "t/f", "ours": "mine", "variant": "variant"}, "effect ours 'mine' is not a line of t/f"),
    ({"figure": "t/f", "ours": "ours", "variant": "other"}, "effect variant 'other' is not a line of t/f"),
    ({"figure": "t/f", "ours": "ours", "variant": "variant", "variant_figure": "t/x"}, "variant_figure 't/x'"),
    ({"figure": "t/f", "ours": "ours", "variant": "ours", "variant_figure": "t/g"}, "'ours' is not a line of t/g"),
])
def test_a_missing_figure_or_line_is_one_line_naming_the_deviation(figs, effect, message):
    with pytest.raises(ReproError, match=f"deviation d: .*{message}") as exc:
        validate(dev(**effect), figs)
    assert "\n" not in str(exc.value)


def test_effects_of_papers_not_built_are_skipped(figs):
    validate(dev(figure="other-paper/f", ours="a", variant="b"), figs)


def test_shipped_deviations_match_the_shipped_manifest():
    validate(load_deviations(ROOT / "config" / "deviations.yaml"), load_manifest(ROOT / "config" / "figures"))


def test_report_still_exports_load_deviations():
    from banditrepro import report

    assert report.load_deviations is load_deviations
