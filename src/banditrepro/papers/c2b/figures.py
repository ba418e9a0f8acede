"""Figure kinds of the C2B paper beyond ``curves`` (registered into banditrepro.figures.DRAWERS).

- ``c2b-rounds``: "how many rounds suffice?" (the paper's question (ii), §4). Per panel, the mean final regret
  of C2B-KL (95 % t-interval over runs) against its number of batches B, the B of each line resolved from its
  parameters at the panel's horizon (``c2b.resolve_batches``); reference algorithms as horizontal bands
  (mean line, 95 % interval shaded); labelled variants of our reading as extra markers at their own B.
  Options: ``series`` (keys of the B sweep, any order), ``bands`` (keys drawn as bands), ``variants`` (keys
  drawn as separate markers). Every key of the panel must be in exactly one of the three.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.aggregate import load_summary
from banditrepro.figures.panels import final_columns, instance_note, panel_status
from banditrepro.figures.registry import register
from banditrepro.layout import Layout
from banditrepro.manifest import AlgoRef, Figure

ROLES = ("series", "variants", "bands")


def line_batches(ref: AlgoRef, T: int) -> int | None:
    """The number of batches B a C2B-family line runs with at horizon T (None for sequential algorithms)."""
    from banditrepro.algorithms.c2b import resolve_batches

    p = ref.params
    if "B_offset" not in p:
        return None
    return resolve_batches(T, p.get("B"), p.get("B_offset", 0), p.get("B_log", "e"))


def roles(fig: Figure) -> dict[str, str]:
    """key -> role (series / variants / bands), checked against every panel's lines."""
    out = {}
    for role in ROLES:
        for key in fig.extra.get(role, []):
            if key in out:
                raise ReproError(f"{fig.stem}: key {key!r} listed under both {out[key]} and {role}")
            out[key] = role
    if not any(r == "series" for r in out.values()):
        raise ReproError(f"{fig.stem}: options.series lists no key")
    for panel in fig.panels:
        for ref in panel.algorithms:
            if ref.key not in out:
                raise ReproError(f"{fig.stem}: line {ref.key!r} is in none of options.series/variants/bands")
            if out[ref.key] != "bands" and line_batches(ref, panel.horizon) is None:
                raise ReproError(f"{fig.stem}: {ref.key!r} has no number of batches; list it under bands")
    return out


def rounds_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    role = roles(fig)
    rows = []
    for panel in fig.panels:
        ok, reason = panel_status(panel.dataset, layout)
        for ref in panel.algorithms:
            B = line_batches(ref, panel.horizon)
            row = {"paper": fig.paper, "figure": fig.id, "panel": panel.title, "dataset": panel.dataset,
                   "horizon": panel.horizon, "algorithm": ref.key, "label": ref.label, "algorithm_id": ref.id,
                   "role": role[ref.key], "B": B if B is not None else "",
                   "note": instance_note(panel.dataset, layout)}
            if not ok:
                row.update(status="not-run", note=reason)
                rows.append(row)
                continue
            row.update(final_columns(load_summary(layout.summary(panel.dataset, panel.horizon, ref.id)),
                                     fig.metric))
            rows.append(row)
    return pd.DataFrame(rows)


_VARIANT_MARKERS = ["s", "D", "^", "v", "P"]


def draw_rounds(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    df = rounds_table(fig, layout)
    rows, cols = fig.extra.get("layout") or (1, len(fig.panels))
    if rows * cols < len(fig.panels):
        raise ReproError(f"{fig.stem}: layout {rows}x{cols} too small for {len(fig.panels)} panels")
    mpl_fig, axes = plotting.subplots(rows, cols, width=4.4, height=3.4)
    axes_flat = axes.ravel()
    legend = {}
    for ax, panel in zip(axes_flat, fig.panels):
        d = df[(df.dataset == panel.dataset) & (df.horizon == panel.horizon) & (df.panel == panel.title)]
        title = panel.title + (f"\n[{d.note.iloc[0]}]" if d.status.iloc[0] == "ok" and d.note.iloc[0] else "")
        if (d.status != "ok").any():
            plotting.unavailable(ax, title, f"{panel.dataset} could not be obtained (no mirror holds it)")
            continue
        ser = d[d.role == "series"].assign(B=lambda x: x.B.astype(int)).sort_values("B")
        err = np.vstack([ser.mean_final_regret - ser.ci95_low, ser.ci95_high - ser.mean_final_regret])
        h = ax.errorbar(ser.B, ser.mean_final_regret, yerr=err, color=plotting.color_for("c2b-kl"), marker="o",
                        ms=4, lw=1.4, capsize=3, label="C2B-KL (B swept)", zorder=4)
        legend.setdefault("C2B-KL (B swept)", h)
        for k, r in enumerate(d[d.role == "variants"].itertuples()):
            e = [[r.mean_final_regret - r.ci95_low], [r.ci95_high - r.mean_final_regret]]
            h = ax.errorbar([int(r.B)], [r.mean_final_regret], yerr=e, color="black", ls="none",
                            marker=_VARIANT_MARKERS[k % len(_VARIANT_MARKERS)], ms=6, mfc="white", capsize=3,
                            label=r.label, zorder=5)
            legend.setdefault(r.label, h)
        for r in d[d.role == "bands"].itertuples():
            ref = next(a for a in panel.algorithms if a.key == r.algorithm)
            c = plotting.color_for(ref.name)
            ax.axhspan(r.ci95_low, r.ci95_high, color=c, alpha=0.2, lw=0)
            h = ax.axhline(r.mean_final_regret, color=c, lw=1.2, ls="--", label=f"{r.label} (mean, 95 % CI)")
            legend.setdefault(h.get_label(), h)
        ax.set_xscale("log")
        ax.set_title(title)
        ax.set_xlabel(fig.axes.get("x", "number of batches B"))
        ax.set_ylabel(fig.axes.get("y", "final regret R(T)"))
        ax.set_yscale(fig.axes.get("yscale", "linear"))
    for ax in axes_flat[len(fig.panels):]:
        ax.set_visible(False)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save_with_legend(mpl_fig, legend, png, pdf, max_cols=3)


register("c2b-rounds", rounds_table, draw_rounds)
