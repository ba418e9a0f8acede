"""The figure engine (it names no paper): draw one manifest figure and write the table of the numbers behind it.

- ``registry``: figure kinds, ``kind -> (make_table(fig, layout), draw(fig, png, pdf, layout))``; ``drawer(kind)``
  gives a kind's draw function.
- ``panels``: per-panel facts every kind reads (dataset ran?, substitute note, final-regret columns, metric).
- ``curves``: the generic kind ``curves`` (regret curves, a metric per panel).
- ``tables``: the table as Markdown and LaTeX.

Paper-specific kinds live in ``banditrepro.papers.<paper>.figures`` and are registered by
``banditrepro.papers.load()``, which callers run before looking up a paper's kind.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from banditrepro.atomic import write_text
from banditrepro.figures import curves  # noqa: F401  (registers the generic kinds)
from banditrepro.figures.panels import final_columns, instance_note, panel_metrics, panel_status
from banditrepro.figures.registry import DRAWERS, drawer, kind, register
from banditrepro.figures.tables import table_latex, table_markdown
from banditrepro.layout import Layout
from banditrepro.manifest import Figure

__all__ = ["DRAWERS", "build_figure", "drawer", "final_columns", "instance_note", "kind", "panel_metrics",
           "panel_status", "register", "table_latex", "table_markdown", "write_table"]


def build_figure(fig: Figure, layout: Layout, png, pdf, table) -> pd.DataFrame:
    """Write the figure (PNG, PDF) and the table behind it as CSV plus Markdown and LaTeX beside it."""
    df = write_table(fig, layout, table)
    kind(fig.kind)[1](fig, png, pdf, layout)
    return df


def write_table(fig: Figure, layout: Layout, table) -> pd.DataFrame:
    """The table behind a figure as CSV (``table``) plus Markdown and LaTeX beside it, without drawing (what
    ``banditrepro verify`` re-derives)."""
    df = kind(fig.kind)[0](fig, layout)
    write_text(table, df.to_csv(index=False, float_format="%.6g"))
    write_text(Path(table).with_suffix(".md"), table_markdown(df))
    write_text(Path(table).with_suffix(".tex"), table_latex(df, fig.title))
    return df
