"""The package's modules import one another without a cycle (checked statically: nothing is imported).

Edges: ``import a.b`` -> a.b; ``from a.b import c`` -> a.b, and a.b.c when that is a module. Imports inside
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


def modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if a.name in mods}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                edges |= {m for m in [base, *(f"{base}.{a.name}" for a in node.names)] if m in mods}
        graph[name] = edges - {name}
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


def test_no_import_cycle_among_the_package_modules():
    found = cycle(import_graph())
    assert found is None, " -> ".join(found)


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
