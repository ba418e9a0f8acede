"""What a package module's code is, read from the sources and never imported: the modules that importing it
executes (its import closure) and what of each can change what it does (its code shape).

The naming library at the bottom of the package: it imports nothing of the project (standard library only), so
the names of stored results (``workflow/digests.py``, ``workflow/names.py``) and the numba cache's folders
(``kernel_cache.py``) both build on it without reaching up into the engine. What a job's entry modules are (the
algorithm registry's kernel module, a figure kind's drawer, the claim tests) is not its business: the layer
that owns those registries looks them up and passes the module names in (docs/architecture.md).

The walk is static (``ast``): ``import a.b``, ``from a import b`` (b a submodule or a name), relative imports and
imports inside functions, plus the ``__init__`` of every package on the way. An ``importlib.import_module`` is
not followed: the registry's lazy import of a kernel module is named by its entry module instead, and
``banditrepro.plugins`` imports the numba cache by name to keep it out of every kernel's closure.

A module counts by its syntax tree without docstrings (``code_shape``), never by its text: comments, docstrings
and formatting change no digest (docs/decisions.md#code-digests). The numba cache counts bytes instead
(``closure_files``; kernel_cache.py says why).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import sys
from pathlib import Path

import banditrepro.parse_cache as parse_cache

PACKAGE = "banditrepro"
ROOT = Path(__file__).resolve().parent  # src/banditrepro of the checkout this module was imported from


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


def package_root(module: str, path: Path) -> Path | None:
    """The ``banditrepro`` folder ``path`` belongs to if it is the file of package module ``module``, else None."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    up = len(parts) - (1 if path.name == "__init__.py" else 2)
    if up < 0 or up >= len(path.parents):
        return None
    root = path.parents[up]
    return root if module_file(module, root) == path else None


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
    for level, base, names in _statements(path):
        if base is None:  # `import a, b`
            found.update(names)
            continue
        if level:  # relative: from the module's package, one level up per extra dot
            anchor = package.split(".")[: len(package.split(".")) - level + 1]
            base = ".".join(anchor + ([base] if base else []))
        found.add(base)
        # `from a import b`: b is a submodule if it has a source file, else a name defined in a
        found.update(f"{base}.{n}" for n in names if module_file(f"{base}.{n}", root))
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
    return list(_closure_paths(modules, root, skip))


def _closure_paths(modules, root: Path, skip) -> dict[str, Path]:
    """``closure``'s modules with their source files, in its order (each file looked up once per walk)."""
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
    return {m: p for m in sorted(out) if (p := module_file(m, root))}


@functools.cache
def closure_files(modules: tuple[str, ...], root: Path) -> tuple[tuple[str, Path], ...]:
    """(dotted name, file) of every package module that importing ``modules`` executes, from ``root``.

    Walked once per process, as the import graph is: an import added meanwhile counts from the next process on
    (a caller that hashes the files' bytes stamps them itself)."""
    return tuple((m, module_file(m, root)) for m in closure(list(modules), root))


def package_imports(path: Path) -> set[str]:
    """Names of ``banditrepro`` modules a file outside the package (a plugin's) imports, as written."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            # `from banditrepro.x import y`: y may be a submodule; closure() drops the names that are not
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in found if m.split(".")[0] == PACKAGE}


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


def _import_statements(tree: ast.Module) -> list[list]:
    """Every import of a tree as written, wherever it stands: ``[0, None, names]`` for ``import a, b`` and
    ``[level, module or "", names]`` for ``from ... import``. Depends on the text alone (what the names are in
    the package is resolved by ``imports``), so it can be kept by the file's content."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.append([0, None, [a.name for a in node.names]])
        elif isinstance(node, ast.ImportFrom):
            out.append([node.level, node.module or "", [a.name for a in node.names]])
    return out


@functools.lru_cache(maxsize=1024)
def _facts(path: Path, mtime_ns: int, size: int) -> dict:
    """A source file's import statements and code shape: from the on-disk cache by its bytes
    (``parse_cache``), else parsed once and filed there."""
    data = path.read_bytes()
    k = parse_cache.key(data)
    entry = parse_cache.load(k)
    if entry is None:
        tree = ast.parse(data, filename=str(path))
        entry = {"imports": _import_statements(tree), "shape": _shape(tree)}
        parse_cache.store(k, entry)
    return entry


def _source_facts(path: Path) -> dict:
    """What the import walk and the digests read of a source file, once per process per version of the file
    (read-only: neither changes it)."""
    st = path.stat()
    return _facts(path, st.st_mtime_ns, st.st_size)


def _statements(path: Path) -> list[list]:
    return _source_facts(path)["imports"]


def file_shape(path: Path) -> str:
    return _source_facts(path)["shape"]


# --- digests of code ----------------------------------------------------------------------------------------


def shape_digest(modules, root: Path = ROOT, skip=()) -> str:
    """Hash of ``closure(modules, root, skip)``: names relative to the package, then each syntax tree."""
    h = hashlib.sha256()
    for path in _closure_paths(modules, root, skip).values():
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(file_shape(path).encode() + b"\0")
    return h.hexdigest()[:16]


def bytes_digest(path) -> str:
    """Short hash of a file's bytes; "absent" if it does not exist."""
    p = Path(path)
    return hashlib.sha256(p.read_bytes()).hexdigest()[:16] if p.is_file() else "absent"


def file_digest(path) -> str:
    """A file outside the package (a plugin's module): its syntax tree's hash if it is Python, else its bytes'."""
    p = Path(path)
    if p.suffix == ".py" and p.is_file():
        try:
            return hashlib.sha256(file_shape(p).encode()).hexdigest()[:16]
        except SyntaxError:
            pass
    return bytes_digest(p)


def object_code(obj, root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(package modules, outside files' digests) of the function ``obj``: its module if it is in the package,
    else the file it was loaded from (a plugin), hashed by ``file_digest``."""
    name = getattr(obj, "__module__", "") or ""
    if name.split(".")[0] == PACKAGE and module_file(name, root):
        return [name], []
    path = getattr(sys.modules.get(name), "__file__", None)
    return [], [file_digest(path)] if path else []
