"""The papers this pipeline reproduces, each a package that registers its figure kinds and claim tests.

A paper package holds everything that names its paper: ``figures.py`` (figure kinds, registered with
``banditrepro.figures.registry.register(kind, make_table, draw)``) and ``claims.py`` (claim tests, registered
with ``@banditrepro.claims.registry.test(kind)``); the engines ``banditrepro.figures`` and
``banditrepro.claims`` name no paper and never import one. ``load()`` imports every paper module once:

* **Built in**: ``BUILTIN`` below, paper name -> its modules.
* **Your own paper** (the contract; like algorithm plugins, ``banditrepro.plugins``): in your package's
  ``pyproject.toml``::

      [project.entry-points."banditrepro.papers"]
      my-paper = "my_package.banditrepro_paper"

  ``load()`` imports the named module; importing it must register its figure kinds and claim tests (names
  must not collide with registered ones: a second registration of a kind is an error, never an override).
  ``make_table(fig, layout) -> pandas.DataFrame`` and ``draw(fig, png, pdf, layout)`` receive the manifest
  ``Figure`` and the ``banditrepro.layout.Layout`` of the run; a claim test ``fn(ctx, **args) -> Outcome``
  builds its row with ``banditrepro.claims.parts.outcome``. The figures of your paper go in a manifest
  ``config/figures/<paper>.yaml`` like ours, with ``kind:`` naming your kinds.

Callers that look kinds up (the CLI, the workflow, the report) call ``load()`` first; it is idempotent.
"""

from __future__ import annotations

import importlib
import threading
from importlib import metadata

from banditrepro import ReproError

GROUP = "banditrepro.papers"
BUILTIN = {
    "c2b": ("banditrepro.papers.c2b.figures", "banditrepro.papers.c2b.claims"),
    "winner-stays": ("banditrepro.papers.winner_stays.figures", "banditrepro.papers.winner_stays.claims"),
    "dp-ts-ucb": ("banditrepro.papers.dp_ts_ucb.figures", "banditrepro.papers.dp_ts_ucb.studies",
                  "banditrepro.papers.dp_ts_ucb.claims"),
}
_LOCK = threading.RLock()
_loaded: dict[str, tuple[str, ...]] | None = None


def entry_points() -> list[metadata.EntryPoint]:
    return sorted(metadata.entry_points(group=GROUP), key=lambda ep: ep.name)


def load() -> dict[str, tuple[str, ...]]:
    """Import every built-in paper module and every ``banditrepro.papers`` entry point (once per process);
    returns paper name -> the modules imported for it."""
    global _loaded
    with _LOCK:
        if _loaded is None:
            found = dict(BUILTIN)
            for ep in entry_points():
                if ep.name in found:
                    raise ReproError(f"paper plugin {ep.name!r} ({ep.value}) has the name of a registered paper")
                found[ep.name] = (ep.value,)
            for name, modules in found.items():
                for module in modules:
                    try:
                        importlib.import_module(module)
                    except ModuleNotFoundError as exc:
                        raise ReproError(f"paper {name!r}: module {module!r} not found ({exc.name})") from None
            _loaded = found
        return _loaded
