"""Figure kinds of the DP-TS-UCB studies beyond the paper (registered into banditrepro.figures.DRAWERS):
privacy on one scale. Their table rows are lines with their privacy accounting, as in ``figures``.

Manifest options (``options:`` of a figure, read as ``fig.extra``):

- delta-epsilon (``dp-delta-epsilon``): ``eps_points`` (ε at which δ(ε) is tabulated), ``delta_points``
  (δ at which ε(δ) is tabulated), ``eps_range`` ([lo, hi] of the plotted ε axis).
- regret-vs-epsilon (``dp-frontier``): ``delta`` (δ at which every GDP line's ε is read), ``operating_points``
  (keys of the paper's own configurations, marked).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.figures.registry import register
from banditrepro.layout import Layout
from banditrepro.manifest import AlgoRef, Figure
from banditrepro.papers.dp_ts_ucb import privacy as pv
from banditrepro.papers.dp_ts_ucb.figures import line_shades, lines_table, unique_panels

# ---------------------------------------------------------------------------------------------------
# delta-epsilon (beyond the paper): δ(ε) of every configuration


def _eps_options(fig: Figure):
    eps_points = [float(e) for e in fig.extra.get("eps_points", [0.5, 1.0, 2.0, 5.0, 10.0])]
    delta_points = [float(d) for d in fig.extra.get("delta_points", [1e-5])]
    pv._positive("epsilon", np.asarray(eps_points))
    for d in delta_points:
        if not 0 < d < 1:
            raise ReproError(f"{fig.stem}: delta_points must lie in (0, 1), got {d:g}")
    return eps_points, delta_points


def delta_epsilon_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    eps_points, delta_points = _eps_options(fig)
    df = lines_table(fig, layout)
    for e in eps_points:
        col = []
        for eta, e0 in zip(df.eta, df.epsilon):
            if eta == eta:
                col.append(pv.delta_of_epsilon(e, eta))
            else:  # (ε0, 0)-DP gives δ = 0 from ε0 on; below ε0 this table states no bound
                col.append(0.0 if e >= e0 else np.nan)
        df[f"delta_at_eps_{e:g}"] = col
    for d in delta_points:
        df[f"eps_at_delta_{d:g}"] = [pv.epsilon_at_delta(d, eta) if eta == eta else e0
                                     for eta, e0 in zip(df.eta, df.epsilon)]
    return df


def draw_delta_epsilon(fig: Figure, png, pdf, layout: Layout):
    from matplotlib.ticker import LogLocator, NullLocator
    from matplotlib.transforms import offset_copy

    from banditrepro import plotting

    lo, hi = (float(x) for x in fig.extra.get("eps_range", [1e-2, 1e6]))
    eps = np.geomspace(lo, hi, 300)
    panels = unique_panels(fig)
    n = len(panels)
    cols = min(4, n)
    rows = math.ceil(n / cols)
    # legends (7 pt, one line per configuration) go below their panels: each row grows by its longest one
    longest = max(len(p.algorithms) for _, p in panels)
    mpl_fig, axes = plotting.subplots(rows, cols, width=4.2, height=3.4 + 0.18 * longest)
    flat = axes.ravel()
    floor = 1e-12
    for ax, (_, panel) in zip(flat, panels):
        names = [r.name for r in panel.algorithms]
        colors = line_shades(names)
        lap = 0
        for ref, col in zip(panel.algorithms, colors):
            pr = pv.line_privacy(ref, panel.horizon)
            if pv.is_pure(ref):
                ax.axvline(pr["epsilon"], color=col, lw=1.6, ls=(2 * lap, (2, 4)),
                           label=f"{ref.label}: ({pr['epsilon']:g}, 0)-DP")
                lap += 1
                continue
            if pr["eta"] != pr["eta"]:
                continue
            d = np.maximum(pv.delta_of_epsilon(eps, pr["eta"]), floor * 1e-3)
            ax.plot(eps, d, "-" if ref.name == "dp-ts-ucb" else "--", color=col, lw=1.3,
                    label=f"{ref.label}: η = {pr['eta']:.4g}")
        ax.set(xscale="log", yscale="log", ylim=(floor, 2.0), xlabel="ε", ylabel="δ(ε)",
               title=f"{panel.title}\nT = {panel.horizon:,}")
        # few ticks: 8 + 12 decades of minor ticks make matplotlib's layout slow and the plot busy
        ax.xaxis.set_major_locator(LogLocator(numticks=6))
        ax.yaxis.set_major_locator(LogLocator(numticks=5))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_minor_locator(NullLocator())
        ax.legend(loc="upper center", fontsize=7, bbox_to_anchor=(0.5, 0.0),
                  bbox_transform=offset_copy(ax.transAxes, fig=mpl_fig, y=-0.45, units="inches"))
    for ax in flat[n:]:
        ax.set_visible(False)
    # a fixed 0.1 in from the top: the default y = 0.98 of a 14 in tall figure meets the panel titles
    mpl_fig.suptitle(fig.title, fontsize=11, y=1 - 0.1 / mpl_fig.get_size_inches()[1])
    plotting.save(mpl_fig, png, pdf)


# ---------------------------------------------------------------------------------------------------
# regret-vs-epsilon (beyond the paper): the privacy–regret frontier at one (ε, δ) scale
#
# Options: ``delta`` (the δ at which every GDP line's ε is read, Theorem 2.4 inverted; (ε, 0)-DP lines keep
# their ε, δ = 0), ``operating_points`` (keys of the paper's own configurations, ringed and labelled).
# Series: one per algorithm, M-TS-Gaussian split by its pre-pulls b; each series is joined in ε order.


def frontier_series(ref: AlgoRef) -> str:
    from banditrepro.algorithms import get

    label = get(ref.name).label  # carries "(reconstructed)" where the algorithm is one
    if ref.name == "m-ts-gaussian":
        b = int(ref.params.get("b", 0))
        return f"{label} (b=0) over c" if b == 0 else f"{label} (b={b})"
    if ref.name == "dp-ts-ucb":
        return f"{label} over α"
    if pv.is_pure(ref):
        return f"{label} over ε"
    return label


def frontier_delta(fig: Figure) -> float:
    d = float(fig.extra.get("delta", 1e-5))
    if not 0 < d < 1:
        raise ReproError(f"{fig.stem}: options.delta must lie in (0, 1), got {d:g}")
    return d


EPS_AT_DELTA = "eps_at_delta"  # frontier column the claim tests read: ε of a line at the figure's δ


def frontier_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    delta = frontier_delta(fig)
    ops = set(fig.extra.get("operating_points", []))
    unknown = ops - {r.key for p in fig.panels for r in p.algorithms}
    if unknown:
        raise ReproError(f"{fig.stem}: operating point {sorted(unknown)[0]!r} is not a line of the figure")
    df = lines_table(fig, layout)
    refs = {r.key: r for p in fig.panels for r in p.algorithms}
    df["series"] = [frontier_series(refs[k]) for k in df.algorithm]
    df["dp_kind"] = ["GDP" if eta == eta else "pure ε-DP" for eta in df.eta]
    df["delta"] = [delta if eta == eta else 0.0 for eta in df.eta]
    df[EPS_AT_DELTA] = [pv.epsilon_at_delta(delta, eta) if eta == eta else e0 for eta, e0 in zip(df.eta, df.epsilon)]
    df["operating_point"] = df.algorithm.isin(ops)
    return df


def draw_frontier(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    df = frontier_table(fig, layout)
    delta = frontier_delta(fig)
    mpl_fig, axes = plotting.subplots(1, 1, width=10.0, height=5.2)
    ax = axes[0, 0]
    markers = {"GDP": "o", "pure ε-DP": "s"}
    ok = df[df.status == "ok"]
    for series, d in ok.groupby("series", sort=False):
        d = d.sort_values("eps_at_delta")
        name = d.name.iloc[0]
        b = d.b.iloc[0]
        mts = sorted({int(x) for x in ok[ok.name == "m-ts-gaussian"].b})  # M-TS-Gaussian: one shade per b
        color = plotting.color_for(name, mts.index(int(b)), len(mts)) if name == "m-ts-gaussian" else \
            plotting.color_for(name)
        err = np.vstack([d.mean_final_regret - d.ci95_low, d.ci95_high - d.mean_final_regret])
        ax.errorbar(d.eps_at_delta, d.mean_final_regret, yerr=err, color=color, marker=markers[d.dp_kind.iloc[0]],
                    ms=4, lw=1.2, capsize=2, label=series)
    notes, rings = [], []  # placed left to right, top down: a label pushed aside then stays next to its ring
    for r in ok[ok.operating_point].sort_values(["eps_at_delta", "mean_final_regret"],
                                                ascending=[True, False]).itertuples():
        rings += ax.plot([r.eps_at_delta], [r.mean_final_regret], marker="o", ms=12, mfc="none", mec="black",
                         mew=1.3, ls="none", zorder=5)
        notes.append(ax.annotate(r.label, (r.eps_at_delta, r.mean_final_regret), textcoords="offset points",
                                 xytext=(6, 6), fontsize=6.5))
    ax.plot([], [], marker="o", ms=10, mfc="none", mec="black", ls="none", label="the paper's operating points")
    ax.set(xscale="log", yscale="log", xlabel=f"ε guaranteed at δ = {delta:g} (ε-DP algorithms: δ = 0)",
           ylabel="final regret R(T), mean and 95 % CI")
    T = int(ok.horizon.max()) if len(ok) else 0
    ax.set_title(f"{fig.panels[0].title}, T = {T:,}", fontsize=9)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=True)  # outside: no point hidden
    mpl_fig.suptitle(fig.title, fontsize=10)
    # labels of near points (equal privacy means equal ε) go beside, below or left of their ring, clear of the
    # labels placed before them and of the other rings
    mpl_fig.tight_layout()
    for k, note in enumerate(notes):
        plotting.place_apart(mpl_fig, [note], [(6, 6, "left"), (-6, 6, "right"), (6, -15, "left"),
                                               (-6, -15, "right"), (6, 16, "left"), (-6, 16, "right"),
                                               (6, -25, "left"), (-6, -25, "right")],
                             fixed=notes[:k] + rings[:k] + rings[k + 1:], within=ax.get_window_extent())
    plotting.save(mpl_fig, png, pdf)


register("dp-delta-epsilon", delta_epsilon_table, draw_delta_epsilon)
register("dp-frontier", frontier_table, draw_frontier)
