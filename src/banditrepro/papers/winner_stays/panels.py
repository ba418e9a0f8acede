"""What the Winner Stays figures share: the metrics' axis labels, a figure's grid of panels and a panel's title
(figures.py: ws-curves, ws-beta; instance_figures.py: ws-matrices, ws-rounds)."""

from __future__ import annotations

from banditrepro import ReproError
from banditrepro.figures.panels import instance_note
from banditrepro.layout import Layout
from banditrepro.manifest import Figure

METRIC_LABELS = {
    "regret": "cumulative regret R(t)",
    "weak_regret_binary": "binary weak regret",
    "weak_regret_utility": "utility-based weak regret",
    "strong_regret_binary": "binary strong regret",
    "strong_regret_utility": "utility-based strong regret",
}


def panel_grid(fig: Figure) -> tuple[int, int]:
    rows, cols = fig.extra.get("layout") or (1, len(fig.panels))
    if rows * cols < len(fig.panels):
        raise ReproError(f"{fig.stem}: layout {rows}x{cols} too small for {len(fig.panels)} panels")
    return rows, cols


def panel_title(panel, layout: Layout) -> str:
    note = instance_note(panel.dataset, layout)
    return panel.title + (f"\n[{note}]" if note else "")
