"""Figure kinds: ``kind -> (make_table, draw)``.

``make_table(fig, layout) -> DataFrame`` tabulates the numbers behind a figure; ``draw(fig, png, pdf, layout)``
draws it. The generic kinds register themselves from ``banditrepro.figures.curves``; a paper package
registers its own kinds with ``register`` when ``banditrepro.papers.load()`` imports it.
"""

from __future__ import annotations

from collections.abc import Callable

from banditrepro import ReproError

DRAWERS: dict[str, tuple[Callable, Callable]] = {}


def register(kind: str, make_table: Callable, draw: Callable) -> None:
    """Add a figure kind; a kind already registered by another module is an error, never an override."""
    old = DRAWERS.get(kind)
    if old is not None and old != (make_table, draw):
        raise ReproError(f"figure kind {kind!r} is registered twice ({old[1].__module__}, {draw.__module__})")
    DRAWERS[kind] = (make_table, draw)


def kind(name: str) -> tuple[Callable, Callable]:
    """(make_table, draw) of a figure kind; one line naming the known kinds otherwise."""
    if name not in DRAWERS:
        raise ReproError(f"figure kind {name!r} is not implemented (known: {', '.join(sorted(DRAWERS))}; "
                         "paper packages register theirs when banditrepro.papers.load() runs)")
    return DRAWERS[name]


def drawer(name: str) -> Callable:
    """The draw function of a figure kind (its module is what the figure's digest covers)."""
    return kind(name)[1]
