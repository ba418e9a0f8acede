"""What each job's bytes derive from, as short hashes in its params: an edit reruns exactly the jobs it affects.

Code is covered by import closures computed from the sources, not by hand-written file lists (CCB,
IF, QSA and SCB import ``randint`` from another module, which a list had missed). ``closure`` walks the
package's sources statically (``ast``): ``import a.b``, ``from a import b`` (b a submodule or a name),
relative imports and imports inside functions, plus the ``__init__`` of every package on the way. What a
job runs but the walk cannot see — the registry's lazy ``importlib`` of a kernel module, a figure kind's
drawer — is named by its entry module:

    cell     closure(kernel module of the algorithm) | closure(banditrepro.cell)
    figure   closure(modules of the kind's table maker and drawer) | closure(banditrepro.figures)
    claims   closure of every claim test module (and banditrepro.claims)
    summary, runtime table: closure(banditrepro.aggregate); report: closure(banditrepro.report)

each without the modules of ``NO_NUMBERS`` (registry, plugin loader, download and derivation code, the
package's ``__init__``), which a job imports but which cannot change a number it writes.

A module counts by its syntax tree without docstrings (``code_shape``), never by its text: comments,
docstrings and formatting rerun nothing (docs/decisions.md#code-digests). Code outside the package (a
plugin's kernel) is covered by its file the same way. The digests never import the modules they cover
except to find an entry module's name (the algorithm registry, the drawers).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import sys
from pathlib import Path

PACKAGE = "banditrepro"
ROOT = Path(__file__).resolve().parents[1]  # src/banditrepro of the checkout this module was imported from

CELL = "banditrepro.cell"
FIGURES = "banditrepro.figures"
CLAIMS = "banditrepro.claims"
SUMMARY = "banditrepro.aggregate"
REPORT = "banditrepro.report"

# Modules a job imports that cannot change a number it writes; no digest's walk enters them (an entry module
# is always covered). Why each: docs/decisions.md#code-digests.
NO_NUMBERS = {
    "banditrepro": "the package version, the error class, the numba cache folder (the sidecar records the version)",
    "banditrepro.algorithms.builtin": "name -> kernel module: the kernel module a cell runs is digested itself",
    "banditrepro.plugins": "finds and checks other packages' kernels; the kernel a cell runs is digested itself",
    "banditrepro.datasets.fetch": "download code: jobs read the prepared file, an input Snakemake tracks",
    "banditrepro.datasets.derive": "preparation code: same, through the prepared file",
}


def digest(obj) -> str:
    """Short hash of a JSON-able value (dict keys sorted)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def bytes_digest(path) -> str:
    """Short hash of a file's bytes; "absent" if it does not exist."""
    p = Path(path)
    return hashlib.sha256(p.read_bytes()).hexdigest()[:16] if p.is_file() else "absent"


# --- the static import graph of the package -------------------------------------------------------------


def module_file(module: str, root: Path = ROOT) -> Path | None:
    """Source file of a package module (``banditrepro.a.b`` -> a/b.py or a/b/__init__.py), or None."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = root.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py") if len(parts) > 1 else None, base / "__init__.py"):
        if cand is not None and cand.is_file():
            return cand
    return None


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imports(module: str, root: Path = ROOT) -> set[str]:
    """Package modules ``module``'s source imports anywhere in its body, with the packages they live in."""
    path = module_file(module, root)
    if path is None:
        return set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, one level up per extra dot
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            # `from a import b`: b is a submodule if it has a source file, else a name defined in a
            found.update(f"{base}.{a.name}" for a in node.names if module_file(f"{base}.{a.name}", root))
    found = {m for m in found if m == PACKAGE or m.startswith(PACKAGE + ".")}
    for m in list(found):
        found.update(_parents(m))
    return {m for m in found if module_file(m, root) and m != module}


@functools.cache
def _imports_cached(module: str, root: Path) -> frozenset[str]:
    return frozenset(imports(module, root))


def closure(modules, root: Path = ROOT, skip=()) -> list[str]:
    """Every package module that importing ``modules`` executes (transitively), sorted; the walk neither
    covers nor enters the modules of ``skip`` unless they are among ``modules``."""
    todo = [m for m in modules if module_file(m, root)]
    seen: set[str] = set(todo)
    out: set[str] = set()
    while todo:
        m = todo.pop()
        out.add(m)
        for n in (*_parents(m), *_imports_cached(m, root)):
            if n not in seen and n not in skip:
                seen.add(n)
                todo.append(n)
    return sorted(m for m in out if module_file(m, root))


# --- what of a module counts: its syntax tree ---------------------------------------------------------------

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _shape(node) -> str:
    """A canonical text of a syntax tree: node types, fields and constants, no positions. Fields that are
    None or empty are left out, so a Python release that adds an optional field keeps the digests."""
    if isinstance(node, ast.AST):
        body = getattr(node, "body", None)
        if isinstance(node, _DOCUMENTED) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
        fields = []
        for name, value in ast.iter_fields(node):
            value = body if name == "body" and body is not None else value
            if value is None or value == []:
                continue
            fields.append(f"{name}={_shape(value)}")
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return f"[{','.join(_shape(v) for v in node)}]"
    return f"{type(node).__name__}:{node!r}"  # a constant, an identifier, an operator's context


def code_shape(source: bytes | str, filename: str = "<source>") -> str:
    """What of a Python source can change what it does: its syntax tree without docstrings (comments and
    formatting are not in the tree)."""
    return _shape(ast.parse(source, filename=filename))


@functools.lru_cache(maxsize=512)
def _parsed(path: Path, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(path.read_bytes(), filename=str(path))


def _tree(path: Path) -> ast.Module:
    """The syntax tree of a source file, parsed once per process for the import walk and the digest (read-only:
    neither changes it)."""
    st = path.stat()
    return _parsed(path, st.st_mtime_ns, st.st_size)


@functools.cache
def _file_shape(path: Path, mtime_ns: int, size: int) -> str:
    return _shape(_parsed(path, mtime_ns, size))


def file_shape(path: Path) -> str:
    st = path.stat()
    return _file_shape(path, st.st_mtime_ns, st.st_size)


def source_digest(modules, root: Path = ROOT) -> str:
    """Hash of ``closure(modules)`` without ``NO_NUMBERS``: names relative to the package, then each syntax tree."""
    h = hashlib.sha256()
    for m in closure(modules, root, skip=NO_NUMBERS):
        path = module_file(m, root)
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(file_shape(path).encode() + b"\0")
    return h.hexdigest()[:16]


def outside_digest(path) -> str:
    """A file outside the package (a plugin's module): its syntax tree's hash if it is Python, else its bytes'."""
    p = Path(path)
    if p.suffix == ".py" and p.is_file():
        try:
            return hashlib.sha256(file_shape(p).encode()).hexdigest()[:16]
        except SyntaxError:
            pass
    return bytes_digest(p)


def object_code(obj, root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(package modules, outside files) of the function ``obj``: its module if it is in the package,
    else the file it was loaded from (a plugin), whose bytes are hashed."""
    name = getattr(obj, "__module__", "") or ""
    if name.split(".")[0] == PACKAGE and module_file(name, root):
        return [name], []
    path = getattr(sys.modules.get(name), "__file__", None)
    return [], [outside_digest(path)] if path else []


# --- entry modules of the jobs (the one place that knows where drawers and claim tests live) -------------


def drawer_module(kind: str) -> str:
    """Module of the function that draws figures of ``kind`` (registered by a paper package)."""
    from banditrepro.figures.registry import drawer

    return drawer(kind).__module__


def claim_modules() -> list[str]:
    """Modules of every registered claim test, and the claims engine."""
    from banditrepro import papers
    from banditrepro.claims.registry import TESTS

    papers.load()
    return sorted({CLAIMS, *(fn.__module__ for fn in TESTS.values())})


# --- the digests of the jobs ------------------------------------------------------------------------------


@functools.cache
def cell_code(algo: str, root: Path = ROOT) -> str:
    """Digest of the code one cell runs: its kernel module's closure and cell.py's (the registry imports
    kernels lazily, so cell.py's closure alone misses them)."""
    from banditrepro import algorithms

    own, outside = object_code(algorithms.get(algo.split("+")[0]).run, root)
    return digest([source_digest([CELL, *own], root), outside])


def figure_code(kind: str, root: Path = ROOT) -> str:
    """Digest of a figure kind's code: the engine's closure and that of its table maker's and drawer's modules
    (a paper's study kinds call helpers of the paper's other figure module: those are covered too)."""
    from banditrepro import papers
    from banditrepro.figures.registry import DRAWERS

    papers.load()
    if kind not in DRAWERS:
        return source_digest([FIGURES], root)
    own, outside = [], []
    for fn in DRAWERS[kind]:
        mods, files = object_code(fn, root)
        own += mods
        outside += files
    return digest([source_digest([FIGURES, *sorted(set(own))], root), sorted(set(outside))])


def claims_code(root: Path = ROOT) -> str:
    return source_digest(claim_modules(), root)


def summary_code(root: Path = ROOT) -> str:
    return source_digest([SUMMARY], root)


def report_code(root: Path = ROOT) -> str:
    return source_digest([REPORT], root)


def figure_spec(fig) -> dict:
    """The manifest entry a figure draws from: everything but its claims (claims have their own job)."""
    from dataclasses import asdict

    d = asdict(fig)
    d.pop("claims")
    return d


def figure_digest(fig, root: Path = ROOT) -> str:
    return digest([figure_spec(fig), figure_code(fig.kind, root)])


def claims_digest(figures, root: Path = ROOT) -> str:
    return digest([[f.stem, list(f.claims)] for f in figures if f.claims] + [claims_code(root)])
