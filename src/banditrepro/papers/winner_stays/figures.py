"""Figure kinds of the Winner Stays paper (registered into banditrepro.figures.DRAWERS).

- ``ws-curves``: regret curves like ``curves``, but every panel has its own metric, given in panel order by
  ``options.panel_metrics`` (Fig. 3's 2×2 grid is {sushi16, mslr5} × {binary, utility} strong regret from
  the same cells). One legend for the whole figure; parameter variants of one algorithm get shades.
- ``ws-matrices``: the supplement's tables, the preference matrices of the panels' datasets, read from
  ``data/prepared/<dataset>.json``; heat maps plus a stacked table (one row per arm).
- ``ws-rounds``: the idea of the paper's Fig. 1 drawn from a real run: ``ws_w_trace`` (literal Alg. 1) on a
  small instance, C(t, i) over t with the ends of rounds and iterations marked. No cells: its panel has
  ``algorithms: []``; the seed comes from ``banditrepro.seeds`` with ``options`` base_seed/seed_key/run.
- ``ws-beta``: the β-sensitivity study: final regret of WS-S lines against β with 95 % intervals, and per panel
  the grid's minimiser with a bootstrap interval over runs (table columns ``minimiser_*``, ``argmin_share``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.aggregate import final_stats, load_summary
from banditrepro.figures.panels import instance_note, panel_metrics, panel_status
from banditrepro.figures.registry import register
from banditrepro.layout import DEFAULT_BASE_SEED, Layout
from banditrepro.manifest import Figure
from banditrepro.verdicts import argmin_interval, seed_of

METRIC_LABELS = {
    "regret": "cumulative regret R(t)",
    "weak_regret_binary": "binary weak regret",
    "weak_regret_utility": "utility-based weak regret",
    "strong_regret_binary": "binary strong regret",
    "strong_regret_utility": "utility-based strong regret",
}


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


def _layout(fig: Figure) -> tuple[int, int]:
    rows, cols = fig.extra.get("layout") or (1, len(fig.panels))
    if rows * cols < len(fig.panels):
        raise ReproError(f"{fig.stem}: layout {rows}x{cols} too small for {len(fig.panels)} panels")
    return rows, cols


def _panel_title(panel, layout: Layout) -> str:
    note = instance_note(panel.dataset, layout)
    return panel.title + (f"\n[{note}]" if note else "")


def draw_ws_curves(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    rows, cols = _layout(fig)
    mpl_fig, axes = plotting.subplots(rows, cols)
    axes_flat = axes.ravel()
    legend = {}  # label -> handle, first seen order (shared legend)
    for ax, panel, metric in zip(axes_flat, fig.panels, panel_metrics(fig)):
        ok, reason = panel_status(panel.dataset, layout)
        title = _panel_title(panel, layout)
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
# ws-matrices


def _prepared(dataset: str, layout: Layout) -> dict:
    path = Path(layout.prepared_file(dataset))
    if not path.exists():
        raise ReproError(f"prepared dataset not found: {path}")
    rec = json.loads(path.read_text())
    if rec.get("kind") != "duel" or rec.get("generative"):
        raise ReproError(f"{dataset}: not a fixed preference matrix" +
                         (" (a new instance per run; use its -fixed dataset)" if rec.get("generative") else ""))
    return rec


def matrices_table(fig: Figure, layout: Layout, decimals: int = 4) -> pd.DataFrame:
    """One row per arm of every panel's matrix: dataset, arm, label, CW flag, then p_{arm, j} for j = 0…K−1
    (blank beyond the dataset's K), rounded to ``decimals``."""
    decimals = int(fig.extra.get("decimals", decimals))
    frames = []
    width = 0
    for panel in fig.panels:
        rec = _prepared(panel.dataset, layout)
        P = np.asarray(rec["matrix"], dtype=float)
        width = max(width, len(P))
        cw = int(rec["condorcet_winner"])
        df = pd.DataFrame({"dataset": panel.dataset, "arm": np.arange(len(P)), "label": rec["labels"],
                           "condorcet_winner": ["yes" if i == cw else "" for i in range(len(P))]})
        vals = pd.DataFrame(np.round(P, decimals), columns=[f"p_vs_{j}" for j in range(len(P))])
        frames.append(pd.concat([df, vals], axis=1))
    table = pd.concat(frames, ignore_index=True)
    cols = ["dataset", "arm", "label", "condorcet_winner"] + [f"p_vs_{j}" for j in range(width)]
    return table.reindex(columns=cols)


def draw_matrices(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    rows, cols = _layout(fig)
    from matplotlib.patches import Rectangle

    mpl_fig, axes = plotting.subplots(rows, cols, figsize=(6.4 * cols, 5.6 * rows), layout="constrained")
    axes_flat = axes.ravel()
    image = None
    for ax, panel in zip(axes_flat, fig.panels):
        rec = _prepared(panel.dataset, layout)
        P = np.asarray(rec["matrix"], dtype=float)
        K = len(P)
        cw = int(rec["condorcet_winner"])
        image = ax.imshow(P, cmap="RdBu_r", vmin=0.0, vmax=1.0)
        size = 9 if K <= 8 else 5
        for i in range(K):
            for j in range(K):
                ax.text(j, i, f"{P[i, j]:.2f}", ha="center", va="center", fontsize=size,
                        color="white" if abs(P[i, j] - 0.5) > 0.3 else "black")
        ax.add_patch(Rectangle((-0.5, cw - 0.5), K, 1, fill=False, lw=1.6, ec="black"))
        names = [f"{i}: {lab}" + (" (CW)" if i == cw else "") for i, lab in enumerate(rec["labels"])]
        ax.set_yticks(range(K), names, fontsize=7)
        ax.set_xticks(range(K), [str(i) for i in range(K)], fontsize=7)
        ax.grid(False)
        ax.set_xlabel("j")
        ax.set_title(_panel_title(panel, layout) + f"\np_ij = Pr(i beats j), min gap {rec['min_margin']:.3f}")
    for ax in axes_flat[len(fig.panels):]:
        ax.set_visible(False)
    if image is not None:
        mpl_fig.colorbar(image, ax=list(axes_flat[:len(fig.panels)]), shrink=0.8)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save(mpl_fig, png, pdf, tight=False)  # the colorbar spans the axes: bbox "tight" instead


# ----------------------------------------------------------------------------------------------------
# ws-rounds


def rounds_trace(fig: Figure, layout: Layout):
    """(panel, instance, trace) of the rounds figure: literal WS-W on the panel's dataset for T = horizon
    steps, with the generator ``cell_generator(base_seed, seed_key, run)``."""
    from banditrepro.algorithms.winner_stays import ws_w_trace
    from banditrepro.datasets.catalog import load_prepared
    from banditrepro.seeds import cell_generator

    if len(fig.panels) != 1:
        raise ReproError(f"{fig.stem}: a ws-rounds figure has exactly one panel")
    panel = fig.panels[0]
    inst = load_prepared(Path(layout.prepared_file(panel.dataset)))
    if inst.kind != "duel" or getattr(inst, "generative", False):
        raise ReproError(f"{fig.stem}: {panel.dataset} is not a fixed preference matrix")
    opts = fig.extra
    rng = cell_generator(int(opts.get("base_seed", DEFAULT_BASE_SEED)), str(opts.get("seed_key", fig.stem)),
                         int(opts.get("run", 0)))
    return panel, inst, ws_w_trace(inst.P, panel.horizon, rng)


def iterations(C: np.ndarray, pairs: np.ndarray, round_ends: np.ndarray) -> list[dict]:
    """Split a WS-W trace into iterations (paper §4): in round ℓ an iteration ends at the step after which
    one of its two arms sits at C = −ℓ. The last iteration may be cut off by the horizon."""
    T = len(pairs)
    out = []
    start = 0
    ell = 1
    n_round_ends = 0
    it = 0
    for t in range(T):
        i, j = int(pairs[t, 0]), int(pairs[t, 1])
        ended = min(C[t, i], C[t, j]) == -ell
        if ended or t == T - 1:
            loser = i if C[t, i] == -ell else j
            it += 1
            round_end = n_round_ends < len(round_ends) and round_ends[n_round_ends] == t + 1
            out.append({"round": ell, "iteration": it, "t_start": start + 1, "t_end": t + 1,
                        "length": t + 1 - start, "arm_i": i, "arm_j": j,
                        "winner": (i + j - loser) if ended else -1, "complete": bool(ended),
                        "round_end": bool(round_end)})
            start = t + 1
            if round_end:
                n_round_ends += 1
                ell += 1
                it = 0
    return out


def rounds_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    panel, inst, tr = rounds_trace(fig, layout)
    rows = iterations(tr.C, tr.pairs, tr.round_ends)
    df = pd.DataFrame(rows)
    df.insert(0, "horizon", panel.horizon)
    df.insert(0, "dataset", panel.dataset)
    df["winner_label"] = [inst.labels[w] if w >= 0 else "" for w in df["winner"]]
    df["winner_is_cw"] = df["winner"] == inst.condorcet_winner
    return df


def draw_rounds(fig: Figure, png, pdf, layout: Layout):
    from matplotlib import colormaps

    from banditrepro import plotting

    panel, inst, tr = rounds_trace(fig, layout)
    T, K = tr.C.shape
    its = iterations(tr.C, tr.pairs, tr.round_ends)
    mpl_fig, axes = plotting.subplots(2, 1, figsize=(9.0, 6.0), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1]})
    ax, strip = axes[:, 0]
    t = np.arange(0, T + 1)
    palette = colormaps["tab10"]
    cw = inst.condorcet_winner
    for k in range(K):
        c = np.concatenate([[0], tr.C[:, k]])
        lab = f"{k}: {inst.labels[k]}" + (" (CW)" if k == cw else "")
        ax.step(t, c, where="post", color=palette(k % 10), lw=2.2 if k == cw else 1.2, label=lab)
        sel = (tr.pairs[:, 0] == k) | (tr.pairs[:, 1] == k)
        strip.scatter(np.flatnonzero(sel) + 1, np.full(sel.sum(), k), s=4, marker="s", color=palette(k % 10))
    for row in its:
        if row["complete"] and not row["round_end"]:
            for a in (ax, strip):
                a.axvline(row["t_end"] + 0.5, color="#999999", lw=0.6, ls=":")
    labels = []
    for ell, end in enumerate(tr.round_ends, start=1):
        for a in (ax, strip):
            a.axvline(end + 0.5, color="black", lw=1.0)
        labels.append(ax.annotate(f"ℓ={ell}", (end + 0.5, 1.0), xycoords=ax.get_xaxis_transform(), xytext=(0, 2),
                                  textcoords="offset points", fontsize=6, ha="center", va="bottom"))
    ax.set_ylabel("C(t, i) = net wins")
    title = (_panel_title(panel, layout) + f", T = {T}: {len(tr.round_ends)} complete rounds (ends: solid, "
             f"ℓ above), {sum(r['complete'] for r in its)} complete iterations (ends: dotted)")
    ax.set_title(title, pad=28)
    ax.legend(loc="upper left", fontsize=7, frameon=True)
    strip.set_yticks(range(K))
    strip.set_ylim(-0.5, K - 0.5)
    strip.set_ylabel("arms dueled")
    strip.set_xlabel("t")
    strip.set_xlim(0, T + 1)
    mpl_fig.suptitle(fig.title, fontsize=11)
    # stack the labels of close round ends on as many levels as they need, measured in the final layout
    mpl_fig.tight_layout()
    plotting.place_apart(mpl_fig, labels, [(0, 2 + 10 * k, "center") for k in range(8)])
    ax.set_title(title, pad=max((t.xyann[1] for t in labels), default=0) + 14)
    plotting.save(mpl_fig, png, pdf)


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
    rows, cols = _layout(fig)
    mpl_fig, axes = plotting.subplots(rows, cols)
    color = plotting.color_for("ws-s")
    for k, (ax, panel, metric) in enumerate(zip(axes.ravel(), fig.panels, panel_metrics(fig))):
        title = _panel_title(panel, layout)
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
