"""Digests computed from import closures (banditrepro.workflow.digests): an edit changes the digests of exactly
the jobs whose code imports the edited module, however indirectly."""

import shutil
import textwrap
from pathlib import Path

import pytest

from banditrepro import algorithms
from banditrepro.workflow import digests
from tests.workflow.common import edit_function


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / "banditrepro" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root / "banditrepro"


def test_closure_follows_every_import_form(tmp_path):
    root = _write(tmp_path, {
        "__init__.py": "",
        "entry.py": """
            import banditrepro.pkg.deep
            from banditrepro.pkg import sub
            from . import rel_sibling
            from .pkg.sub import NAME

            def later():
                from .lazy import f
                import json
        """,
        "pkg/__init__.py": "",
        "pkg/deep.py": "from ..shared import helper\n",
        "pkg/sub.py": "NAME = 1\n",
        "rel_sibling.py": "",
        "lazy.py": "from banditrepro.pkg.sub import NAME\n",
        "shared.py": "def helper():\n    return 1\n",
        "unrelated.py": "",
    })
    got = digests.closure(["banditrepro.entry"], root)
    assert got == sorted(["banditrepro", "banditrepro.entry", "banditrepro.pkg", "banditrepro.pkg.deep",
                          "banditrepro.pkg.sub", "banditrepro.rel_sibling", "banditrepro.lazy",
                          "banditrepro.shared"])
    before = digests.source_digest(["banditrepro.entry"], root)
    (root / "unrelated.py").write_text("x = 2\n")
    assert digests.source_digest(["banditrepro.entry"], root) == before
    (root / "shared.py").write_text("def helper():\n    return 2\n")
    assert digests.source_digest(["banditrepro.entry"], root) != before


@pytest.fixture
def package_copy(tmp_path):
    src = tmp_path / "banditrepro"
    shutil.copytree(digests.ROOT, src, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def test_editing_the_shared_randint_reruns_the_cells_that_import_it(package_copy):
    """CCB, IF, QSA and SCB import `randint` from another module: their cells' digests must change."""
    import banditrepro.algorithms.ccb

    helper = banditrepro.algorithms.ccb.randint.__module__  # wherever the shared RNG helpers live
    names = algorithms.names()
    before = {n: digests.cell_code(n) for n in names}
    edit_function(digests.module_file(helper, package_copy), "randint")
    after = {n: digests.cell_code(n, package_copy) for n in names}
    changed = {n for n in names if after[n] != before[n]}
    assert {"ccb", "if", "qsa", "scb"} <= changed
    # exactly the algorithms whose kernel module's closure holds the helper
    users = {n for n in names
             if helper in digests.closure([algorithms.get(n).run.__module__, digests.CELL], package_copy)}
    assert changed == users and "c2b" not in changed


def test_cell_digest_of_an_unedited_copy_is_the_same(package_copy):
    assert digests.cell_code("rucb", package_copy) == digests.cell_code("rucb")


def test_a_drawer_edit_changes_its_kinds_figures_only(package_copy):
    from banditrepro.figures import DRAWERS

    kinds = sorted(DRAWERS)
    before = {k: digests.figure_code(k) for k in kinds}
    module = digests.drawer_module(kinds[-1])
    drawer = DRAWERS[kinds[-1]][1]
    edit_function(digests.module_file(module, package_copy), drawer.__name__)
    changed = {k for k in kinds if digests.figure_code(k, package_copy) != before[k]}
    assert kinds[-1] in changed
    assert changed == {k for k in kinds if module in digests.closure(
        [digests.FIGURES, *(f.__module__ for f in DRAWERS[k])], package_copy)}
    assert len(changed) < len(kinds)


def test_a_study_kind_covers_the_paper_helpers_it_calls(package_copy):
    """DP-TS-UCB's study kinds (papers/dp_ts_ucb/studies.py) tabulate with `lines_table` of the paper's other
    figure module: editing that helper reruns them."""
    from banditrepro.figures import DRAWERS

    make_table = DRAWERS["dp-delta-epsilon"][0]
    helper = make_table.__globals__["lines_table"]
    assert helper.__module__ != make_table.__module__
    before = {k: digests.figure_code(k) for k in ("dp-delta-epsilon", "dp-frontier")}
    edit_function(digests.module_file(helper.__module__, package_copy), helper.__name__)
    assert all(digests.figure_code(k, package_copy) != v for k, v in before.items())


def test_claims_digest_covers_every_claim_module(package_copy):
    before = digests.claims_code()
    for module in digests.claim_modules():
        assert digests.module_file(module, package_copy)
    path = digests.module_file(digests.claim_modules()[-1], package_copy)
    path.write_text(path.read_text() + "\n# edited\n")
    assert digests.claims_code(package_copy) != before


def test_plugin_code_is_hashed_by_file(tmp_path):
    mod = tmp_path / "myplugin.py"
    mod.write_text("def run():\n    pass\n")
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("myplugin", mod)
    m = importlib.util.module_from_spec(spec)
    sys.modules["myplugin"] = m
    spec.loader.exec_module(m)
    try:
        own, outside = digests.object_code(m.run)
        assert own == [] and outside == [digests.bytes_digest(mod)]
    finally:
        del sys.modules["myplugin"]
