"""What each job's bytes derive from, as short hashes in its params: an edit reruns exactly the jobs it affects.

Code is covered by import closures computed from the sources (``banditrepro.closure``, the naming library at the
bottom of the package), not by hand-written file lists (CCB, IF, QSA and SCB import ``randint`` from another
module, which a list had missed). What a job runs but the static walk cannot see — the registry's lazy
``importlib`` of a kernel module, a figure kind's drawer, the claim tests — is named by its entry module, which
this module looks up in the registries that own them (the algorithms, the figure kinds, the claim tests):

    cell         closure(kernel module of the algorithm) | closure(banditrepro.cell)
    figure       closure(modules of the kind's table maker and drawer) | closure(banditrepro.figures)
    claims       closure of every claim test module (and banditrepro.claims)
    leaderboard  closure(banditrepro.leaderboard)
    summary, runtime table: closure(banditrepro.aggregate); report: closure(banditrepro.report)

each without the modules of ``NO_NUMBERS`` (registry, plugin loader, download and derivation code, the
package's ``__init__``), which a job imports but which cannot change a number it writes. Code outside the
package (a plugin's kernel) is covered by its file (``closure.file_digest``). The digests never import the
modules they cover except to find an entry module's name.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from banditrepro import closure

CELL = "banditrepro.cell"
FIGURES = "banditrepro.figures"
CLAIMS = "banditrepro.claims"
SUMMARY = "banditrepro.aggregate"
REPORT = "banditrepro.report"
LEADERBOARD = "banditrepro.leaderboard"

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


def source_digest(modules, root: Path = closure.ROOT) -> str:
    """Hash of ``closure(modules)`` without ``NO_NUMBERS``: names relative to the package, then each syntax tree."""
    return closure.shape_digest(modules, root, skip=NO_NUMBERS)


# --- entry modules of the jobs (the one place that asks the registries where drawers and claim tests live) ---


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
def cell_code(algo: str, root: Path = closure.ROOT) -> str:
    """Digest of the code one cell runs: its kernel module's closure and cell.py's (the registry imports
    kernels lazily, so cell.py's closure alone misses them)."""
    from banditrepro import algorithms

    own, outside = closure.object_code(algorithms.get(algo.split("+")[0]).run, root)
    return digest([source_digest([CELL, *own], root), outside])


def figure_code(kind: str, root: Path = closure.ROOT) -> str:
    """Digest of a figure kind's code: the engine's closure and that of its table maker's and drawer's modules
    (a paper's study kinds call helpers of the paper's other figure module: those are covered too)."""
    from banditrepro import papers
    from banditrepro.figures.registry import DRAWERS

    papers.load()
    if kind not in DRAWERS:
        return source_digest([FIGURES], root)
    own, outside = [], []
    for fn in DRAWERS[kind]:
        mods, files = closure.object_code(fn, root)
        own += mods
        outside += files
    return digest([source_digest([FIGURES, *sorted(set(own))], root), sorted(set(outside))])


def claims_code(root: Path = closure.ROOT) -> str:
    return source_digest(claim_modules(), root)


def summary_code(root: Path = closure.ROOT) -> str:
    return source_digest([SUMMARY], root)


def report_code(root: Path = closure.ROOT) -> str:
    return source_digest([REPORT], root)


def figure_spec(fig) -> dict:
    """The manifest entry a figure draws from: everything but its claims (claims have their own job)."""
    from dataclasses import asdict

    d = asdict(fig)
    d.pop("claims")
    return d


def figure_digest(fig, root: Path = closure.ROOT) -> str:
    return digest([figure_spec(fig), figure_code(fig.kind, root)])


def claims_digest(figures, root: Path = closure.ROOT) -> str:
    return digest([[f.stem, list(f.claims)] for f in figures if f.claims] + [claims_code(root)])


def leaderboard_digest(arena_figures, root: Path = closure.ROOT) -> str:
    """What a paper's leaderboard derives from: the manifest entries of the figures a challenger joined
    (``challengers.arena_figures``) and the leaderboard's code."""
    return digest([figure_spec(f) for f in arena_figures] + [source_digest([LEADERBOARD], root)])
