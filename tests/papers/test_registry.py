"""The paper registry: built-in papers and a user's paper package registered through the entry-point group."""

from __future__ import annotations

import sys
import types
from importlib import metadata

import pandas as pd
import pytest

from banditrepro import ReproError, claims, figures, papers
from banditrepro.verdicts import REPRODUCED, Outcome


@pytest.fixture
def fresh(monkeypatch):
    """A registry that loads again, with the engines' tables restored afterwards."""
    monkeypatch.setattr(papers, "_loaded", None)
    monkeypatch.setattr(figures.registry, "DRAWERS", dict(figures.registry.DRAWERS))
    monkeypatch.setattr(claims.registry, "TESTS", dict(claims.registry.TESTS))
    monkeypatch.setattr(claims.registry, "META", dict(claims.registry.META))


def _fake_paper(monkeypatch, name="my-paper", module="my_fake_paper"):
    mod = types.ModuleType(module)

    def register():
        figures.registry.register("my-kind", lambda fig, layout: pd.DataFrame({"x": [1]}), lambda *a: None)

        @claims.registry.test("my-claim")
        def _mine(ctx, level: float = 1.0):
            return Outcome("mine", "measured", REPRODUCED, level, level)

    mod.register = register
    monkeypatch.setitem(sys.modules, module, mod)
    ep = metadata.EntryPoint(name, module, papers.GROUP)
    monkeypatch.setattr(papers, "entry_points", lambda: [ep])
    return mod


def test_builtin_papers_register_their_kinds_and_tests(fresh):
    loaded = papers.load()
    assert {"c2b", "winner-stays", "dp-ts-ucb"} <= set(loaded)
    assert {"c2b-rounds", "ws-curves", "dp-frontier"} <= set(figures.registry.DRAWERS)
    assert {"c2b_rounds_needed", "ws_beta_advice", "dp_frontier_dominated"} <= set(claims.registry.TESTS)
    assert figures.drawer("ws-beta").__module__ == "banditrepro.papers.winner_stays.figures"


def test_a_paper_package_from_an_entry_point_adds_kinds_and_claim_tests(fresh, monkeypatch):
    mod = _fake_paper(monkeypatch)
    # the module registers at import: simulate that by running its register() when imported
    real = papers.importlib.import_module

    def import_module(name, *a):
        if name == "my_fake_paper":
            mod.register()
            return mod
        return real(name, *a)

    monkeypatch.setattr(papers.importlib, "import_module", import_module)
    assert papers.load()["my-paper"] == ("my_fake_paper",)
    assert figures.kind("my-kind")[0](None, None).x.tolist() == [1]
    assert "my-claim" in claims.registry.TESTS


def test_a_paper_plugin_may_not_take_a_builtin_name(fresh, monkeypatch):
    _fake_paper(monkeypatch, name="c2b")
    with pytest.raises(ReproError, match="name of a registered paper"):
        papers.load()


def test_a_kind_registered_twice_is_an_error_not_an_override(fresh):
    figures.registry.register("twice", len, len)
    with pytest.raises(ReproError, match="registered twice"):
        figures.registry.register("twice", len, sorted)


def test_an_unknown_kind_names_the_known_ones(fresh):
    with pytest.raises(ReproError, match="not implemented .*known: .*curves"):
        figures.kind("no-such-kind")
