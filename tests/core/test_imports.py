"""The package's modules import one another without a cycle and never up a floor (docs/architecture.md, "The
floors"), checked statically: nothing is imported.

Edges: ``import a.b`` -> a.b; ``from a.b import c`` -> a.b, and a.b.c when that is a module;
``importlib.import_module("a.b")`` and ``__import__("a.b")`` with a literal name -> a.b (an import by name is an
import all the same; only a name computed at run time, a registry's lookup, is out of reach). Imports inside
functions count too (a lazy import still ties the two modules together; it only moves the cost). A parent
package's own ``__init__`` running first is not counted as an edge: ``banditrepro.figures/__init__`` importing
its submodules is the package re-exporting them, not the submodules depending on one another; submodules
therefore import siblings by their full module path, never through the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import banditrepro

SRC = Path(banditrepro.__file__).parent
ARCHITECTURE = SRC.parents[1] / "docs" / "architecture.md"


def modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def by_name(node) -> str | None:
    """The literal module name of ``importlib.import_module("a.b")``, ``import_module("a.b")`` or
    ``__import__("a.b")``; None for any other node (a name computed at run time is not an edge)."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    f = node.func
    called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return node.args[0].value if called in ("import_module", "__import__") else None


def edges_of(tree: ast.AST, package: str, mods) -> set[str]:
    """The package modules ``tree`` (of a module in ``package``) imports, statically or by literal name."""
    edges = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            edges |= {a.name for a in node.names if a.name in mods}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            edges |= {m for m in [base, *(f"{base}.{a.name}" for a in node.names)] if m in mods}
        elif (named := by_name(node)) in mods:
            edges.add(named)
    return edges


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = edges_of(ast.parse(path.read_text(), str(path)), package, mods) - {name}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path [a, b, …, a], or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state and (found := visit(w)):
                return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state and (found := visit(v)):
            return found
    return None


def test_the_checker_finds_a_cycle_and_reads_lazy_imports():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
    graph = import_graph()
    assert "banditrepro.plugins" in graph["banditrepro.algorithms"]  # a function-level import is an edge
    assert "banditrepro.algorithms.rng" in graph["banditrepro.algorithms.ccb"]
    mods = {"p.a", "p.b", "p.c", "p.d"}
    source = """
import importlib
from importlib import import_module

def later(name):
    importlib.import_module("p.a")
    import_module("p.b")
    __import__("p.c")
    importlib.import_module(f"p.{name}")  # computed at run time: not an edge
    importlib.import_module("json")  # not a module of the package
"""
    assert edges_of(ast.parse(source), "p", mods) == {"p.a", "p.b", "p.c"}


def test_no_import_cycle_among_the_package_modules():
    found = cycle(import_graph())
    assert found is None, " -> ".join(found)


# --- floors: a module imports only its own floor and those below (docs/architecture.md, "The floors") ----------

# bottom to top; a module stands on the floor of its longest listed prefix (the package root only by its own name)
FLOORS = (
    ("naming library", ("banditrepro.closure", "banditrepro.filehash", "banditrepro.parse_cache")),
    ("core and data", ("banditrepro", "banditrepro.algorithms", "banditrepro.arguments", "banditrepro.atomic",
                       "banditrepro.cell", "banditrepro.datasets", "banditrepro.grid", "banditrepro.instances",
                       "banditrepro.jobsize", "banditrepro.kernel_cache", "banditrepro.layout", "banditrepro.limits",
                       "banditrepro.plugins", "banditrepro.probes", "banditrepro.project", "banditrepro.recorder",
                       "banditrepro.records", "banditrepro.regret", "banditrepro.seeds", "banditrepro.shardformat",
                       "banditrepro.yamlfile")),
    ("statistics", ("banditrepro.aggregate", "banditrepro.confseq", "banditrepro.settle_sim",
                    "banditrepro.settle_statistic", "banditrepro.verdicts")),
    ("engines", ("banditrepro.challengers", "banditrepro.claims", "banditrepro.figures", "banditrepro.manifest",
                 "banditrepro.plotting", "banditrepro.standings")),
    ("papers", ("banditrepro.papers",)),
    ("presentation", ("banditrepro.deviations", "banditrepro.leaderboard", "banditrepro.report")),
    ("workflow", ("banditrepro.workflow", "banditrepro.settle_claims", "banditrepro.settle_report",
                  "banditrepro.settle_run")),
    ("sharing", ("banditrepro.sharing",)),
    ("command line", ("banditrepro.cli", "banditrepro.cli_data", "banditrepro.__main__")),
)

# (importer, imported) -> why it may climb, in one line; at most three, each argued in docs/architecture.md.
# None today: kernel_cache's compile lock is handed the workflow's stop.wait, the leaderboard's key is computed
# in workflow/digests.py, and the import closure lives in banditrepro/closure.py, under everything.
CLIMBS: dict[tuple[str, str], str] = {}

# rooms of the workflow floor: the naming room computes every key and imports nothing else of the workflow;
# the jobs room holds every job body and is imported by no module (the rules call it)
NAMING_ROOM = ("banditrepro.workflow.names", "banditrepro.workflow.digests", "banditrepro.workflow.cells",
               "banditrepro.workflow.software")
JOBS_ROOM = "banditrepro.workflow.jobs"


def floor_of(module: str) -> int | None:
    """The index in FLOORS of ``module``'s floor, None if no floor lists it."""
    parts = module.split(".")
    for cut in range(len(parts), 0 if module == "banditrepro" else 1, -1):
        prefix = ".".join(parts[:cut])
        for i, (_, listed) in enumerate(FLOORS):
            if prefix in listed:
                return i
    return None


def climbs(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import of a module on a higher floor than the importer's, sorted."""
    return sorted((a, b) for a, edges in graph.items() for b in edges if floor_of(b) > floor_of(a))


def test_every_module_stands_on_one_floor():
    assert floor_of("banditrepro.workflow.names") == floor_of("banditrepro.workflow")
    assert floor_of("banditrepro.closure") == 0 and floor_of("banditrepro.cli") == len(FLOORS) - 1
    assert floor_of("banditrepro.other") is None  # the root's floor is not its submodules'
    listed = [m for _, mods in FLOORS for m in mods]
    assert len(listed) == len(set(listed))
    assert not [m for m in modules() if floor_of(m) is None]
    assert climbs({"banditrepro.cell": {"banditrepro.report", "banditrepro.seeds"}}) == [
        ("banditrepro.cell", "banditrepro.report")]
    # the floors the docs draw, bottom to top, are these
    docs = ARCHITECTURE.read_text()
    at = [docs.find(f"- **{name.capitalize()}") for name, _ in FLOORS]
    assert -1 not in at and at == sorted(at), dict(zip([n for n, _ in FLOORS], at))


def test_the_naming_library_imports_nothing_of_the_project():
    """The import closure and code shape every name is computed from: kernel_cache, digests and names build on
    it, so it must not reach up into what they name (the registries are looked up by workflow/digests.py). Its
    on-disk cache of parse results is its only import."""
    graph = import_graph()
    assert graph["banditrepro.closure"] == {"banditrepro.parse_cache"}
    assert graph["banditrepro.parse_cache"] == set() and graph["banditrepro.filehash"] == set()


def test_the_naming_room_stands_below_the_rest_of_the_workflow_and_nothing_imports_the_jobs():
    graph = import_graph()
    for name in NAMING_ROOM:
        above = {e for e in graph[name] if e.startswith("banditrepro.workflow.") and e not in NAMING_ROOM}
        assert not above, f"{name} imports {sorted(above)}"
    assert not [name for name, edges in graph.items() if JOBS_ROOM in edges]


def test_at_most_three_imports_climb_a_floor_each_argued():
    found = climbs(import_graph())
    print("imports that climb a floor:", *(f"{a} -> {b}" for a, b in found), sep="\n  ")
    assert len(CLIMBS) <= 3
    assert set(found) == set(CLIMBS), f"not argued: {sorted(set(found) - set(CLIMBS))}, " \
        f"no longer found: {sorted(set(CLIMBS) - set(found))}"
    docs = ARCHITECTURE.read_text()
    for a, b in CLIMBS:  # argued where the floors are drawn
        assert f"`{a.removeprefix('banditrepro.')}` → `{b.removeprefix('banditrepro.')}`" in docs, (a, b)


# the layers that may load paper packages: the papers themselves, and what drives a run or shows its results
MAY_IMPORT_PAPERS = ("banditrepro.papers", "banditrepro.workflow", "banditrepro.cli", "banditrepro.report")


def test_engines_and_core_name_no_paper():
    """The figure and claim engines, the algorithms (a cell's code closure), data, statistics: no paper.
    A kernel that imported a paper's maths would rerun its cells whenever that paper's tables changed."""
    for name, edges in import_graph().items():
        if not name.startswith(MAY_IMPORT_PAPERS):
            assert not {e for e in edges if e.startswith("banditrepro.papers")}, name


def test_papers_do_not_reach_into_each_other():
    for name, edges in import_graph().items():
        if name.startswith("banditrepro.papers."):
            own = ".".join(name.split(".")[:3])
            other = {e for e in edges if e.startswith("banditrepro.papers.") and not e.startswith(own)}
            assert not other, f"{name} imports {sorted(other)}"


def test_no_module_over_500_lines():
    long = {n: len(p.read_text().splitlines()) for n, p in modules().items()}
    assert not {n: k for n, k in long.items() if k > 500}
