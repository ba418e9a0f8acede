"""Digests computed from import closures (banditrepro.workflow.digests): an edit changes the digests of exactly
the jobs whose code imports the edited module, however indirectly, and so (banditrepro/workflow/names.py) the
names of exactly their results: plan.names.shards differs only for the cells whose code was edited."""

import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from banditrepro import algorithms, closure
from banditrepro.workflow import digests
from banditrepro.workflow.plan import build_plan, kernel_of
from tests.workflow.common import ROOT, TEST_CONFIG, edit_function


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
    got = closure.closure(["banditrepro.entry"], root)
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
    shutil.copytree(closure.ROOT, src, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def _cell_names(code_root=None) -> dict:
    """The test config's cell keys (cell -> key), with the cells' code read from ``code_root`` (an edited copy
    of the package) instead of the checkout's."""
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    cfg.update(yaml.safe_load((ROOT / TEST_CONFIG).read_text()))
    if code_root is None:
        return build_plan(cfg, ROOT, scan=False).names.shards
    real = digests.cell_code
    with pytest.MonkeyPatch.context() as m:
        m.setattr(digests, "cell_code", lambda algo, root=closure.ROOT: real(algo, code_root))
        return build_plan(cfg, ROOT, scan=False).names.shards


def _renamed(before: dict, after: dict) -> set:
    assert before.keys() == after.keys()
    return {c for c in before if before[c] != after[c]}


def test_editing_the_shared_randint_renames_the_cells_that_import_it(package_copy, tmp_path, monkeypatch):
    """CCB, IF, QSA, SCB and Winner Stays import `randint` from another module: their cells' digests change."""
    import banditrepro.algorithms.ccb

    helper = banditrepro.algorithms.ccb.randint.__module__  # wherever the shared RNG helpers live
    names = algorithms.names()
    before = {n: digests.cell_code(n) for n in names}
    edit_function(closure.module_file(helper, package_copy), "randint")
    after = {n: digests.cell_code(n, package_copy) for n in names}
    changed = {n for n in names if after[n] != before[n]}
    assert {"ccb", "if", "qsa", "scb"} <= changed
    # exactly the algorithms whose kernel module's closure holds the helper
    # Winner Stays draws its tie-breaks and first pair with randint too (algorithms/winner_stays.py)
    assert changed == {"ccb", "if", "qsa", "scb", "ws-w", "ws-s"}
    # in the plan: exactly the keys of those algorithms' cells (any parameters, horizon, dataset) change
    monkeypatch.chdir(tmp_path)
    before = _cell_names()
    renamed = _renamed(before, _cell_names(package_copy))
    assert renamed == {c for c in before if kernel_of(c) in changed}
    assert {kernel_of(c) for c in renamed} == changed  # the test config runs each of them


def test_cell_digest_of_an_unedited_copy_is_the_same(package_copy):
    assert digests.cell_code("rucb", package_copy) == digests.cell_code("rucb")


def test_a_drawer_edit_changes_its_kinds_figures_only(package_copy):
    from banditrepro.figures import DRAWERS

    kinds = sorted(DRAWERS)
    before = {k: digests.figure_code(k) for k in kinds}
    module = digests.drawer_module(kinds[-1])
    drawer = DRAWERS[kinds[-1]][1]
    edit_function(closure.module_file(module, package_copy), drawer.__name__)
    changed = {k for k in kinds if digests.figure_code(k, package_copy) != before[k]}
    assert kinds[-1] in changed
    assert changed == {k for k in kinds if module in closure.closure(
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
    edit_function(closure.module_file(helper.__module__, package_copy), helper.__name__)
    assert all(digests.figure_code(k, package_copy) != v for k, v in before.items())


def test_claims_digest_covers_every_claim_module(package_copy):
    before = digests.claims_code()
    for module in digests.claim_modules():
        assert closure.module_file(module, package_copy)
    path = closure.module_file(digests.claim_modules()[-1], package_copy)
    path.write_text(path.read_text() + "\n# a comment\n")
    assert digests.claims_code(package_copy) == before  # comments never rerun anything
    path.write_text(path.read_text() + "\nEDITED = 1\n")
    assert digests.claims_code(package_copy) != before


def test_plugin_code_is_hashed_by_file(tmp_path):
    mod = tmp_path / "myplugin.py"
    mod.write_text("def run():\n    pass\n")
    before = closure.file_digest(mod)
    mod.write_text('def run():\n    """Docs."""\n    # a comment\n\n    pass\n')
    assert closure.file_digest(mod) == before
    mod.write_text("def run():\n    return 1\n")
    assert closure.file_digest(mod) != before
    mod.write_text("def run():\n    pass\n")
    (tmp_path / "data.txt").write_text("x")
    assert closure.file_digest(tmp_path / "data.txt") == closure.bytes_digest(tmp_path / "data.txt")
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("myplugin", mod)
    m = importlib.util.module_from_spec(spec)
    sys.modules["myplugin"] = m
    spec.loader.exec_module(m)
    try:
        own, outside = closure.object_code(m.run)
        assert own == [] and outside == [closure.file_digest(mod)]
    finally:
        del sys.modules["myplugin"]


# --- what counts: the syntax tree, without docstrings ----------------------------------------------------------

SOURCE = '''"""Module docs."""
import math


class K:
    """Class docs."""

    def f(self, x):
        """Method docs."""
        return math.sqrt(x)  # a comment


async def g():
    "Docs."
    return 1
'''


@pytest.mark.parametrize("edited", [
    SOURCE + "\n# a comment at the end\n",
    SOURCE.replace('"""Module docs."""', '"""Other module docs,\n\non two paragraphs."""'),
    SOURCE.replace('"""Method docs."""', "'''Other method docs.'''"),
    SOURCE.replace('"""Class docs."""\n', ""),
    SOURCE.replace("return math.sqrt(x)", "return (\n            math.sqrt( x )\n        )"),
    SOURCE.replace("import math\n", "import math  # why\n\n\n"),
])
def test_comments_docstrings_and_formatting_do_not_count(edited):
    assert closure.code_shape(edited) == closure.code_shape(SOURCE)


@pytest.mark.parametrize("edited", [
    SOURCE.replace("math.sqrt(x)", "math.sqrt(x + 0)"),
    SOURCE.replace("return 1", "return 1.0"),
    SOURCE.replace("return 1", "return True"),
    SOURCE.replace("    return 1", '    "Docs."\n    return 1'),  # a second string statement is code
    SOURCE.replace("def f(self, x)", "def f(self, y)"),
    SOURCE + "\nX = 1\n",
])
def test_every_code_edit_counts(edited):
    assert closure.code_shape(edited) != closure.code_shape(SOURCE)


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_registry_data_cli_and_version_edits_change_no_cells_code_digest(package_copy):
    """Adding an algorithm, editing the download, preparation or catalog code, the CLI, the figures, the claims
    or the package version changes no cell's code digest (docs/decisions.md#code-digests). The preparation
    code names the prepared data instead (names.PREPARE_CODE, tests/workflow/test_names.py), and through the
    data key every cell drawn from it."""
    names = algorithms.names()
    before = {n: digests.cell_code(n) for n in names}
    builtin = package_copy / "algorithms" / "builtin.py"
    builtin.write_text(builtin.read_text().replace('"rucb": "rucb",', '"rucb": "rucb",\n    "new-algo": "new_algo",'))
    init = package_copy / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9.'))
    for rel in ("datasets/fetch.py", "datasets/derive.py", "datasets/catalog.py", "cli.py", "figures/panels.py",
                "claims/parts.py", "aggregate.py", "report.py", "plugins.py"):
        _append(package_copy / rel, "\n\ndef added_by_a_test():\n    return 1\n")
    assert {n: digests.cell_code(n, package_copy) for n in names} == before


def test_a_docstring_edit_renames_nothing_a_kernel_edit_only_its_algorithms_cells(package_copy, tmp_path,
                                                                                  monkeypatch):
    names = algorithms.names()
    before = {n: digests.cell_code(n) for n in names}
    rucb = package_copy / "algorithms" / "rucb.py"
    rucb.write_text(rucb.read_text().replace('"""', '"""A docstring edit. ', 1) + "\n# a comment\n")
    assert {n: digests.cell_code(n, package_copy) for n in names} == before
    monkeypatch.chdir(tmp_path)
    keys = _cell_names()
    assert _cell_names(package_copy) == keys  # no cell renamed
    edit_function(rucb, "run")
    digests.cell_code.cache_clear()  # the same root, edited: forget the digests computed before the edit
    assert {n for n in names if digests.cell_code(n, package_copy) != before[n]} == {"rucb"}
    renamed = _renamed(keys, _cell_names(package_copy))
    assert renamed == {c for c in keys if kernel_of(c) == "rucb"} and len({c.split("/")[0] for c in renamed}) > 1


def test_the_cell_closure_holds_what_runs_and_no_registry_or_io_module():
    mods = closure.closure([digests.CELL, algorithms.get("rucb").run.__module__], skip=digests.NO_NUMBERS)
    assert {"banditrepro.cell", "banditrepro.algorithms.rucb", "banditrepro.recorder", "banditrepro.seeds",
            "banditrepro.datasets.prepared", "banditrepro.atomic", "banditrepro.regret"} <= set(mods)
    assert not set(mods) & {*digests.NO_NUMBERS, "banditrepro.datasets.catalog", "banditrepro.cli"}


def test_a_new_function_in_the_data_code_or_a_new_algorithm_changes_no_summary_figure_claim_or_report_code(
        package_copy):
    kinds = ["curves", "dp-delta-epsilon", "ws-matrices"]
    before = [digests.summary_code(), digests.report_code(), digests.claims_code(),
              *(digests.figure_code(k) for k in kinds)]
    for rel in ("datasets/fetch.py", "datasets/derive.py", "algorithms/builtin.py"):
        _append(package_copy / rel, "\n\ndef added_by_a_test():\n    return 1\n")
    init = package_copy / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9.'))
    assert [digests.summary_code(package_copy), digests.report_code(package_copy), digests.claims_code(package_copy),
            *(digests.figure_code(k, package_copy) for k in kinds)] == before
