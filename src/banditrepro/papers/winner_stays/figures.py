"""Figure kinds of the Winner Stays paper (registered into banditrepro.figures.DRAWERS).

- ``ws-curves``: regret curves like ``curves``, but every panel has its own metric, given in panel order by
  ``options.panel_metrics`` (Fig. 3's 2×2 grid is {sushi16, mslr5} × {binary, utility} strong regret from
  the same cells). One legend for the whole figure; parameter variants of one algorithm get shades.
- ``ws-matrices``, ``ws-rounds``: drawn from a prepared instance, not from cells (instance_figures.py).
- ``ws-beta``: the β-sensitivity study: final regret of WS-S lines against β with 95 % intervals, and per panel
  the grid's minimiser with a bootstrap interval over runs (table columns ``minimiser_*``, ``argmin_share``).

The drawers import matplotlib (banditrepro.plotting: 1.0 s of import, python -X importtime) inside their bodies:
every plan loads this module (papers.load), only a figure job draws.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.aggregate import final_stats, load_summary
from banditrepro.figures.panels import instance_note, panel_metrics, panel_status
from banditrepro.figures.registry import register
from banditrepro.layout import Layout
from banditrepro.manifest import Figure
from banditrepro.papers.winner_stays.instance_figures import draw_matrices, draw_rounds, matrices_table, rounds_table
from banditrepro.papers.winner_stays.panels import METRIC_LABELS, panel_grid, panel_title
from banditrepro.verdicts import argmin_interval, seed_of

# ----------------------------------------------------------------------------------------------------
# ws-curves


def late_share(grid: np.ndarray, curve: np.ndarray) -> float:
    """Share of the final value R(T) accrued over t in (T/2, T]; 0 when R(T) = 0 (nothing accrued)."""
    total = float(curve[-1])
    if total <= 0:
        return 0.0
    k = int(np.searchsorted(grid, grid[-1] // 2, side="right")) - 1  # last grid point ≤ T/2
    half = float(curve[k]) if k >= 0 else 0.0
    return (total - half) / total


_OWN = ("ws-w", "ws-s")  # the paper's algorithms: solid, thick; benchmarks get dash patterns
_DASHES = ["--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 1)), (0, (6, 2, 1, 2)), (0, (2, 2))]


def _line_style(name: str, fig: Figure, variant: int = 0, n_variants: int = 1) -> dict:
    """Line style beside the shared colour: the paper's own algorithm solid and thick, each benchmark its
    own dash pattern; parameter variants of one algorithm (shades of its colour) get growing widths and
    dash patterns too, so that neighbouring shades stay distinguishable."""
    if n_variants > 1:
        return {"lw": 1.1 + 0.35 * variant, "ls": (["-"] + _DASHES)[variant % (len(_DASHES) + 1)], "zorder": 3}
    if name in _OWN:
        return {"lw": 2.0, "ls": "-", "zorder": 3}
    names = list(dict.fromkeys(r.name for p in fig.panels for r in p.algorithms
                               if r.name not in _OWN and not r.challenger))
    return {"lw": 1.3, "ls": _DASHES[names.index(name) % len(_DASHES)], "zorder": 2}


def ws_curves_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    rows = []
    for k, (panel, metric) in enumerate(zip(fig.panels, panel_metrics(fig))):
        ok, reason = panel_status(panel.dataset, layout)
        for ref in panel.algorithms:
            row = {"paper": fig.paper, "figure": fig.id, "panel_index": k, "panel": panel.title,
                   "dataset": panel.dataset, "horizon": panel.horizon, "metric": metric, "algorithm": ref.key,
                   "label": ref.label, "algorithm_id": ref.id, "note": instance_note(panel.dataset, layout)}
            if not ok:
                row.update(status="not-run", note=reason)
                rows.append(row)
                continue
            s = load_summary(layout.summary(panel.dataset, panel.horizon, ref.id))
            if f"{metric}_final" not in s:
                raise ReproError(f"{fig.stem}: summary of {ref.id} on {panel.dataset} has no metric {metric!r}")
            st = final_stats(s, metric)
            row.update(status="ok", runs=st["runs"], mean_final_regret=st["mean"], se=st["se"],
                       ci95_low=st["ci_low"], ci95_high=st["ci_high"],
                       late_share=late_share(s["grid"], s[f"{metric}_mean"]), **top_gap_stats(s))
            rows.append(row)
    return pd.DataFrame(rows)


def top_gap_stats(summary: dict) -> dict:
    """Distribution over runs of the top gap p_12 − 1/2 of a generative dataset's per-run instances (median,
    5 % and 95 % quantiles); empty for a fixed instance."""
    gaps = summary.get("instance_top_gap")
    if gaps is None:
        return {}
    g = np.atleast_1d(np.asarray(gaps, dtype=float))
    q05, med, q95 = np.quantile(g, [0.05, 0.5, 0.95])
    return {"top_gap_median": med, "top_gap_q05": q05, "top_gap_q95": q95}


def draw_ws_curves(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    rows, cols = panel_grid(fig)
    mpl_fig, axes = plotting.subplots(rows, cols)
    axes_flat = axes.ravel()
    legend = {}  # label -> handle, first seen order (shared legend)
    for ax, panel, metric in zip(axes_flat, fig.panels, panel_metrics(fig)):
        ok, reason = panel_status(panel.dataset, layout)
        title = panel_title(panel, layout)
        if not ok:
            plotting.unavailable(ax, title, f"{panel.dataset} could not be obtained (no mirror holds it)")
            continue
        counts = Counter(r.name for r in panel.algorithms if not r.challenger)
        seen = Counter()
        yscale = fig.axes.get("yscale", "linear")
        early = []  # mean regret at t ≈ T/100 of every line: the lower limit of a log y axis
        for ref in panel.algorithms:
            s = load_summary(layout.summary(panel.dataset, panel.horizon, ref.id))
            t, mean = s["grid"], s[f"{metric}_mean"]
            style = plotting.challenger_style(ref)  # a challenger's own colour and line
            if style is None:
                style = {"color": plotting.color_for(ref.name, seen[ref.name], counts[ref.name])}
                seen[ref.name] += 1
                style.update(_line_style(ref.name, fig, seen[ref.name] - 1, counts[ref.name]))
            color = style["color"]
            (line,) = ax.plot(t, mean, label=ref.label, **style)
            # the band is the 95 % CI of the mean; regret is never negative, so its lower end is cut at 0
            ax.fill_between(t, np.maximum(s[f"{metric}_lo"], 0.0), s[f"{metric}_hi"], color=color, alpha=0.15,
                            lw=0)
            legend.setdefault(ref.label, line)
            early.append(float(mean[min(np.searchsorted(t, max(t[-1] // 100, 1)), len(t) - 1)]))
        ax.set_title(title)
        ax.set_xscale(fig.axes.get("xscale", "linear"))
        ax.set_yscale(yscale)
        positive = [v for v in early if v > 0]
        if yscale == "log" and positive:
            ax.set_ylim(bottom=0.5 * min(positive))
        ax.set_xlabel(fig.axes.get("x", "t"))
        ax.set_ylabel(fig.axes.get("y", METRIC_LABELS.get(metric, metric)))
    for ax in axes_flat[len(fig.panels):]:
        ax.set_visible(False)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save_with_legend(mpl_fig, legend, png, pdf, max_cols=4, bbox_to_anchor=(0.5, 0.0))


# ----------------------------------------------------------------------------------------------------
# ws-beta (where is β best?)
#
# The β-sensitivity study: the ws-curves table of WS-S lines that differ only in β, plus, per panel, the grid's
# minimiser of mean final regret with a percentile-bootstrap interval over runs (runs resampled jointly across
# β: the cells share random numbers by run index). The figure draws final regret against β (log x) with 95 %
# intervals, the minimiser starred and its interval shaded.


def beta_of(ref) -> float:
    if "beta" not in ref.params:
        raise ReproError(f"{ref.key}: a ws-beta line needs a β parameter")
    return float(ref.params["beta"])


def beta_finals(fig: Figure, panel, metric, layout: Layout):
    """(β values in increasing order, keys, finals (common runs × lines)) of one panel."""
    refs = sorted(panel.algorithms, key=beta_of)
    sums = [load_summary(layout.summary(panel.dataset, panel.horizon, r.id)) for r in refs]
    common = sums[0]["runs"]
    for s in sums[1:]:
        common = np.intersect1d(common, s["runs"])
    cols = [np.asarray(s[f"{metric}_final"])[np.searchsorted(s["runs"], common)] for s in sums]
    return [beta_of(r) for r in refs], [r.key for r in refs], np.column_stack(cols)


def beta_seed(fig: Figure, k: int) -> int:
    return seed_of(fig.stem, f"panel{k}", "argmin")


# columns of the ws-beta table that the claim tests read (papers.winner_stays.claims)
PANEL_INDEX, BETA, ARGMIN_SHARE = "panel_index", "beta", "argmin_share"
MINIMISER_BETA, MINIMISER_LOW, MINIMISER_HIGH = "minimiser_beta", "minimiser_ci_low", "minimiser_ci_high"


def beta_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    df = ws_curves_table(fig, layout)
    df.insert(df.columns.get_loc("label") + 1, BETA, [beta_of(fig.algorithm(k)) for k in df.algorithm])
    for col in (ARGMIN_SHARE, "is_minimiser", MINIMISER_BETA, MINIMISER_LOW, MINIMISER_HIGH):
        df[col] = np.nan if col != "is_minimiser" else False
    for k, (panel, metric) in enumerate(zip(fig.panels, panel_metrics(fig))):
        if not panel_status(panel.dataset, layout)[0]:
            continue
        betas, keys, finals = beta_finals(fig, panel, metric, layout)
        best, lo, hi, share = argmin_interval(finals, seed=beta_seed(fig, k))
        for j, key in enumerate(keys):
            at = (df.panel_index == k) & (df.algorithm == key)
            df.loc[at, ARGMIN_SHARE] = share[j]
            df.loc[at, "is_minimiser"] = j == best
        at = df.panel_index == k
        df.loc[at, MINIMISER_BETA] = betas[best]
        df.loc[at, MINIMISER_LOW] = betas[lo]
        df.loc[at, MINIMISER_HIGH] = betas[hi]
    return df


def draw_beta(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    df = beta_table(fig, layout)
    rows, cols = panel_grid(fig)
    mpl_fig, axes = plotting.subplots(rows, cols)
    color = plotting.color_for("ws-s")
    for k, (ax, panel, metric) in enumerate(zip(axes.ravel(), fig.panels, panel_metrics(fig))):
        title = panel_title(panel, layout)
        d = df[df.panel_index == k].sort_values("beta")
        if (d.status != "ok").any():
            plotting.unavailable(ax, title, f"{panel.dataset} could not be obtained (no mirror holds it)")
            continue
        err = np.vstack([d.mean_final_regret - d.ci95_low, d.ci95_high - d.mean_final_regret])
        ax.errorbar(d.beta, d.mean_final_regret, yerr=err, color=color, marker="o", ms=4, capsize=3, lw=1.3,
                    label="WS-S, mean final regret (95 % CI)")
        best = d[d.is_minimiser.astype(bool)].iloc[0]
        ax.axvspan(best.minimiser_ci_low * 0.97, best.minimiser_ci_high * 1.03, color="#999999", alpha=0.25, lw=0,
                   label="minimiser, 95 % bootstrap interval")
        ax.plot([best.beta], [best.mean_final_regret], marker="*", ms=13, color="black", ls="none",
                label=f"minimiser β* = {best.beta:g}")
        ax.set_xscale("log")
        # every β is a tick; labels skip the crowded 1.05 / 1.2 / 1.5 (log spacing) so that none touch
        ax.set_xticks(d.beta.tolist(), [f"{b:g}" if b not in (1.05, 1.2, 1.5) else "" for b in d.beta], fontsize=7)
        ax.minorticks_off()
        ax.set_title(f"{title}\nβ* = {best.beta:g} [{best.minimiser_ci_low:g}, {best.minimiser_ci_high:g}], "
                     f"{int(d.runs.min())} runs")
        ax.set_xlabel(fig.axes.get("x", "β (log)"))
        ax.set_ylabel(f"final {METRIC_LABELS.get(metric, metric)}")
        ax.legend(loc="upper center", fontsize=7, frameon=True)
    for ax in axes.ravel()[len(fig.panels):]:
        ax.set_visible(False)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save(mpl_fig, png, pdf)


register("ws-curves", ws_curves_table, draw_ws_curves)
register("ws-matrices", matrices_table, draw_matrices)
register("ws-rounds", rounds_table, draw_rounds)
register("ws-beta", beta_table, draw_beta)
