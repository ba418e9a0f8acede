"""The generic figure kind ``curves``: mean regret curves with 95 % bands, one panel per (dataset, horizon),
each panel with its own metric (``panels.panel_metrics``: the figure's metric unless a panel or
``options.panel_metrics`` names one)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.aggregate import load_summary
from banditrepro.figures.panels import final_columns, instance_note, panel_metrics, panel_status
from banditrepro.figures.registry import register
from banditrepro.layout import Layout
from banditrepro.manifest import Figure


def curves_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    rows = []
    for panel, metric in zip(fig.panels, panel_metrics(fig)):
        ok, reason = panel_status(panel.dataset, layout)
        for ref in panel.algorithms:
            row = {"paper": fig.paper, "figure": fig.id, "panel": panel.title, "dataset": panel.dataset,
                   "horizon": panel.horizon, "algorithm": ref.key, "label": ref.label, "algorithm_id": ref.id,
                   "metric": metric, "note": instance_note(panel.dataset, layout)}
            if not ok:
                row.update(status="not-run", note=reason)
                rows.append(row)
                continue
            s = load_summary(layout.summary(panel.dataset, panel.horizon, ref.id))
            row.update(final_columns(s, metric), batches_max=int(np.max(s["n_batches"])))
            rows.append(row)
    return pd.DataFrame(rows)


def draw_curves(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    rows, cols = fig.extra.get("layout") or (1, len(fig.panels))
    if rows * cols < len(fig.panels):
        raise ReproError(f"{fig.stem}: layout {rows}x{cols} too small for {len(fig.panels)} panels")
    mpl_fig, axes = plotting.subplots(rows, cols)
    axes_flat = axes.ravel()
    xscale = fig.axes.get("xscale", "linear")
    for ax, panel, metric in zip(axes_flat, fig.panels, panel_metrics(fig)):
        ok, reason = panel_status(panel.dataset, layout)
        title = panel.title
        note = instance_note(panel.dataset, layout)
        if note:
            title += f"\n[{note}]"
        if not ok:
            plotting.unavailable(ax, title, f"{panel.dataset} could not be obtained (no mirror holds it)")
            continue
        counts = Counter(r.name for r in panel.algorithms if not r.challenger)
        seen = Counter()
        for ref in panel.algorithms:
            s = load_summary(layout.summary(panel.dataset, panel.horizon, ref.id))
            style = plotting.challenger_style(ref)
            if style is None:
                style = {"color": plotting.color_for(ref.name, seen[ref.name], counts[ref.name]), "lw": 1.4}
                seen[ref.name] += 1
            color = style["color"]
            t = s["grid"]
            ax.plot(t, s[f"{metric}_mean"], label=ref.label, **style)
            ax.fill_between(t, s[f"{metric}_lo"], s[f"{metric}_hi"], color=color, alpha=0.2, lw=0)
        ax.set_title(title)
        ax.set_xscale(xscale)
        ax.set_xlabel(fig.axes.get("x", "t"))
        ax.set_ylabel(fig.axes.get("y", metric))
        ax.set_yscale(fig.axes.get("yscale", "linear"))
        ax.legend(loc="upper left", frameon=True)
    for ax in axes_flat[len(fig.panels):]:
        ax.set_visible(False)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save(mpl_fig, png, pdf)


register("curves", curves_table, draw_curves)
