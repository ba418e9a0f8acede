"""Figure kinds of the DP-TS-UCB paper (registered into banditrepro.figures.DRAWERS).

Every kind writes a table whose rows are the figure's lines with their privacy accounting (the GDP parameter η
for the Gaussian algorithms, ε for the Laplace ones: each algorithm spec's ``privacy``, read by
``banditrepro.papers.dp_ts_ucb.privacy.line_privacy``) beside the usual final-regret statistics, so the claims
of ``banditrepro.papers.dp_ts_ucb.claims`` read everything from the table.

Manifest options (``options:`` of a figure, read as ``fig.extra``):

- ``alpha``: the DP-TS-UCB trade-off α that a line stands for, when it is not a DP-TS-UCB line (whose own
  ``alpha`` parameter wins): a number for every line, or ``{key: α}``; ``panel_alpha``: one α per panel.
- ``c_rule``: how the manifest's c of the M-TS-Gaussian lines was computed, checked into the table
  (``c_formula``, ``c_rel_diff``): ``{kind: equal-privacy | log-power, design_horizon: T, factor: 5}``;
  equal-privacy is App. E.1's c = T^{0.5(1+α)} ln^{−1.5(1−α)} T / (2 c0 (b+1)), log-power is c = factor·ln^α T.
  The c values are numbers in the manifest computed for ``design_horizon`` (the paper's T = 10^6), so a
  capped test horizon runs the same configurations (their η at the capped T is what the table reports).
- table1 (``dp-bounds-table``): ``alpha``, ``b``, ``c``, ``gamma`` of the parametrised rows of Table 1.
- the kinds of the studies beyond the paper (delta-epsilon, regret-vs-epsilon): ``studies.py``.

Panels whose horizons collapse under ``max_horizon`` (same horizon and same lines) are drawn and tabulated once.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.figures.curves import curves_table
from banditrepro.figures.registry import register
from banditrepro.layout import Layout
from banditrepro.manifest import AlgoRef, Figure, Panel
from banditrepro.papers.dp_ts_ucb import privacy as pv

TABLE1_NOTE = "hidden constants of O(·)/Õ(·) set to 1; K·f(Δ)/Δ read as Σ_i f(Δ_i)/Δ_i"


def unique_panels(fig: Figure) -> list[tuple[int, Panel]]:
    """Panels with their index, dropping repeats (same dataset, horizon and lines) made by a horizon cap."""
    seen, out = set(), []
    for i, p in enumerate(fig.panels):
        sig = (p.dataset, p.horizon, tuple(r.id for r in p.algorithms))
        if sig in seen:
            continue
        seen.add(sig)
        out.append((i, p))
    return out


def lines_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    """curves_table (final-regret statistics per line) plus α, b, c, ε, η and the c-rule check per line."""
    base = curves_table(fig, layout)
    keep = [i for i, _ in unique_panels(fig)]
    rows = []
    k = 0
    rule = fig.extra.get("c_rule")
    for i, panel in enumerate(fig.panels):
        for ref in panel.algorithms:
            row = base.iloc[k].to_dict()
            k += 1
            if i not in keep:
                continue
            row = {key: v for key, v in row.items() if not key.startswith("batches_")}
            alpha = pv.line_alpha(fig, i, ref)
            row["panel_index"] = i
            row["alpha"] = np.nan if alpha is None else alpha
            row.update(pv.line_privacy(ref, panel.horizon))
            summary = (f"{row['eta']:.4g}-GDP" if row["eta"] == row["eta"] else
                       f"({row['epsilon']:g}, 0)-DP" if row["epsilon"] == row["epsilon"] else "")
            row["note"] = "; ".join(x for x in (row.get("note") or "", summary) if isinstance(x, str) and x)
            if rule and ref.name == "m-ts-gaussian":
                cf = pv.c_rule_value(rule, alpha, row["b"])
                row["c_formula"] = cf
                row["c_rel_diff"] = abs(row["c"] - cf) / cf if cf == cf else np.nan
            rows.append(row)
    df = pd.DataFrame(rows)
    lead = ["paper", "figure", "panel", "panel_index", "dataset", "horizon", "algorithm", "label", "name",
            "alpha", "b", "c", "epsilon", "eta", "privacy", "status", "runs", "mean_final_regret", "se",
            "ci95_low", "ci95_high"]
    cols = [c for c in lead if c in df.columns] + [c for c in df.columns if c not in lead]
    return df[cols]


def _load(panel: Panel, ref: AlgoRef, layout: Layout):
    from banditrepro.aggregate import load_summary

    return load_summary(layout.summary(panel.dataset, panel.horizon, ref.id))


def line_shades(names: list[str]):
    from banditrepro import plotting

    counts = Counter(names)
    seen = Counter()
    out = []
    for n in names:
        out.append(plotting.color_for(n, seen[n], counts[n]))
        seen[n] += 1
    return out


# ---------------------------------------------------------------------------------------------------
# table1: Table 1 as numbers


def _table1_params(fig: Figure) -> dict:
    o = fig.extra
    return {"alpha": float(o.get("alpha", 0.5)), "b": o.get("b", 1), "c": float(o.get("c", 1.18)),
            "gamma": float(o.get("gamma", 0.25))}


def _means(panel: Panel, layout: Layout) -> np.ndarray:
    from pathlib import Path

    from banditrepro.datasets.catalog import load_prepared

    inst = load_prepared(Path(layout.prepared_file(panel.dataset)))
    if inst.kind != "mab":
        raise ReproError(f"{panel.dataset} is not a Bernoulli instance (Table 1 needs arm means)")
    return np.asarray(inst.means)


def _exact_eta(i: int, T: float, p: dict) -> float:
    """η with the theorems' constants for row i of ``privacy.regret_bounds_table`` (same order)."""
    L = math.log(T)
    tg = T ** p["gamma"]
    la = L ** p["alpha"]
    return [pv.eta_ts_gaussian(T), pv.eta_m_ts_gaussian(T, p["b"], p["c"]), pv.eta_m_ts_gaussian(T, tg, tg),
            pv.eta_m_ts_gaussian(T, la, la), pv.eta_dp_ts_ucb(p["alpha"], T), pv.eta_dp_ts_ucb(0.0, T),
            pv.eta_dp_ts_ucb(1.0, T)][i]


_ROW_NAMES = ["ts-gaussian", "m-ts-gaussian", "m-ts-gaussian", "m-ts-gaussian", "dp-ts-ucb", "dp-ts-ucb",
              "dp-ts-ucb"]


def bounds_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    rows = []
    p = _table1_params(fig)
    for _, panel in unique_panels(fig):
        mu = _means(panel, layout)
        T = panel.horizon
        for k, r in enumerate(pv.regret_bounds_table(T, mu, **p)):
            rows.append({"paper": fig.paper, "figure": fig.id, "dataset": panel.dataset, "horizon": T,
                         "label": r.algorithm, "name": _ROW_NAMES[k], "regret_bound": r.regret_bound,
                         "gdp": r.gdp, "regret_bound_value": r.regret, "eta_O_form": r.eta,
                         "eta_with_constants": _exact_eta(k, T, p),
                         "note": f"regret {r.regret_bound} ≈ {r.regret:.4g}; GDP {r.gdp} ≈ {r.eta:.4g} "
                                 f"(with the theorems' constants {_exact_eta(k, T, p):.4g}); {TABLE1_NOTE}"})
    return pd.DataFrame(rows)


def draw_bounds(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    p = _table1_params(fig)
    _, panel = unique_panels(fig)[-1]
    mu = _means(panel, layout)
    Ts = np.unique(np.geomspace(max(10.0, panel.horizon / 1e4), panel.horizon, 60))
    vals = np.array([[(r.regret, r.eta) for r in pv.regret_bounds_table(T, mu, **p)] for T in Ts])
    labels = [r.algorithm for r in pv.regret_bounds_table(panel.horizon, mu, **p)]
    # one shade per row, clearly apart; the DP-TS-UCB rows (the option's α, 0, 1) drawn and listed by α
    colors = [c for n in dict.fromkeys(_ROW_NAMES) for c in plotting.spread_shades(n, _ROW_NAMES.count(n))]
    order = [0, 1, 2, 3] + sorted([4, 5, 6], key=lambda k: (p["alpha"], 0.0, 1.0)[k - 4])
    colors = dict(zip(order, colors))
    mpl_fig, axes = plotting.subplots(1, 2, width=5.0, height=3.8)
    for j, (ax, what) in enumerate(zip(axes[0], ("regret bound (constants = 1)", "GDP parameter η (O-form)"))):
        for k in order:
            label = labels[k]
            style = "-" if _ROW_NAMES[k] == "dp-ts-ucb" else "--"
            y = vals[:, k, j]
            ok = y > 0
            ax.plot(Ts[ok], y[ok], style, color=colors[k], label=label, lw=1.3)
            if y[-1] > 0:
                ax.plot([Ts[-1]], [y[-1]], "o", color=colors[k], ms=4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("horizon T")
        ax.set_ylabel(what)
        ax.set_title(f"{'(a) regret bounds' if j == 0 else '(b) privacy'}; markers: T = {panel.horizon:,}")
    axes[0, 0].legend(loc="upper left", fontsize=7)
    mpl_fig.suptitle(f"{fig.title} — {panel.dataset}", fontsize=11)
    plotting.save(mpl_fig, png, pdf)


# ---------------------------------------------------------------------------------------------------
# privacy-vs-regret (§5.1): η and final regret over α × T


def privacy_regret_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    df = lines_table(fig, layout)
    df = df.drop_duplicates(subset=["algorithm_id", "horizon"]).copy()
    df["eta_thm46"] = [pv.eta_dp_ts_ucb_thm46(a, T) if n == "dp-ts-ucb" and T > 1 else np.nan
                       for a, T, n in zip(df.alpha, df.horizon, df.name)]
    df["phi"] = [pv.phi(a, T) if n == "dp-ts-ucb" and T > 1 else np.nan
                 for a, T, n in zip(df.alpha, df.horizon, df.name)]
    return df.sort_values(["alpha", "horizon"], kind="stable").reset_index(drop=True)


def draw_privacy_regret(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    df = privacy_regret_table(fig, layout)
    mpl_fig, axes = plotting.subplots(1, 3, width=4.4, height=3.6)
    ax_eta, ax_reg, ax_sc = axes[0]
    keys = list(dict.fromkeys(df.algorithm))
    colors = dict(zip(keys, line_shades([df[df.algorithm == k].name.iloc[0] for k in keys])))
    Tmin, Tmax = df.horizon.min(), df.horizon.max()
    Tc = np.geomspace(max(Tmin, 2), max(Tmax, 3), 100)
    for key in keys:
        d = df[df.algorithm == key]
        col = colors[key]
        label = d.label.iloc[0]
        if d.name.iloc[0] == "dp-ts-ucb":
            ax_eta.plot(Tc, pv.eta_dp_ts_ucb(d.alpha.iloc[0], Tc), color=col, lw=1.2)
        ax_eta.plot(d.horizon, d.eta, "o", color=col, label=label, ms=4)
        ok = d[d.status == "ok"]
        if len(ok):
            ax_reg.errorbar(ok.horizon, ok.mean_final_regret,
                            yerr=[ok.mean_final_regret - ok.ci95_low, ok.ci95_high - ok.mean_final_regret],
                            color=col, marker="o", ms=4, capsize=2, lw=1.2, label=label)
            ax_sc.scatter(ok.eta, ok.mean_final_regret, color=col, s=12 + 8 * np.log10(ok.horizon), label=label)
    ax_eta.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="GDP parameter η (Thm 4.4)",
               title="(a) privacy: η vs T")
    ax_reg.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="final regret R(T), mean ± 95 % CI",
               title="(b) empirical regret vs T")
    ax_sc.set(xscale="log", yscale="log", xlabel="GDP parameter η", ylabel="final regret R(T)",
              title="(c) privacy–regret (marker size ~ log T)")
    for ax in axes[0]:
        ax.legend(loc="best", fontsize=7)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save(mpl_fig, png, pdf)


# ---------------------------------------------------------------------------------------------------
# equal-regret (§5.2): final regret and η vs α, two algorithms


def _pair_plot(ax, df, column, lo=None, hi=None):
    names = list(dict.fromkeys(df.name))
    for name, col in zip(names, line_shades(names)):
        d = df[(df.name == name) & df[column].notna()].sort_values("alpha")
        if d.empty:
            continue
        label = d.label.iloc[0].split(" (")[0] if d.label.nunique() > 1 else d.label.iloc[0]
        if lo is not None:
            ax.errorbar(d.alpha, d[column], yerr=[d[column] - d[lo], d[hi] - d[column]], color=col, marker="o",
                        ms=4, capsize=3, lw=1.3, label=label)
        else:
            ax.plot(d.alpha, d[column], "o-", color=col, ms=4, lw=1.3, label=label)


def draw_equal_regret(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    df = lines_table(fig, layout)
    mpl_fig, axes = plotting.subplots(1, 2, width=4.6, height=3.6)
    T = int(df.horizon.iloc[0])
    ok = df[df.status == "ok"]
    _pair_plot(axes[0, 0], ok, "mean_final_regret", "ci95_low", "ci95_high")
    axes[0, 0].set(xlabel="α", ylabel="final regret R(T), mean ± 95 % CI",
                   title=f"(a) empirical regret, T = {T:,}")
    _pair_plot(axes[0, 1], df, "eta")
    axes[0, 1].set(xlabel="α", ylabel="GDP parameter η", yscale="log", title=f"(b) privacy, T = {T:,}")
    for ax in axes[0]:
        ax.legend(loc="best", fontsize=8)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save(mpl_fig, png, pdf)


# ---------------------------------------------------------------------------------------------------
# regret-vs-t curves with privacy columns (§5.3, E.2) and the b-selection of E.1


def dp_curves_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    return lines_table(fig, layout)


_STYLES = ["-", "--", "-.", ":"]


def draw_dp_curves(fig: Figure, png, pdf, layout: Layout):
    """Mean R(t) with 95 % bands per line; variants of one algorithm get shades of its colour and line styles.
    Panels repeated by a horizon cap are drawn once."""
    from banditrepro import plotting
    from banditrepro.figures.panels import panel_status

    panels = [p for _, p in unique_panels(fig)]
    rows, cols = fig.extra.get("layout") or (1, len(panels))
    if rows * cols < len(panels) or len(panels) < len(fig.panels):
        rows, cols = 1, len(panels)
    mpl_fig, axes = plotting.subplots(rows, cols, width=5.6, height=4.2)
    flat = axes.ravel()
    for ax, panel in zip(flat, panels):
        title = f"{panel.title}, T = {panel.horizon:,}"
        ok, reason = panel_status(panel.dataset, layout)
        if not ok:
            plotting.unavailable(ax, title, reason)
            continue
        own = [r for r in panel.algorithms if not r.challenger]  # challengers: their own colour and line
        names = [r.name for r in own]
        counts = Counter(names)
        seen = Counter()
        shades = dict(zip([r.key for r in own], line_shades(names)))
        for ref in panel.algorithms:
            s = _load(panel, ref, layout)
            look = plotting.challenger_style(ref)
            if look is None:
                look = {"ls": _STYLES[seen[ref.name] % len(_STYLES)] if counts[ref.name] > 1 else "-",
                        "color": shades[ref.key], "lw": 1.4}
                seen[ref.name] += 1
            col = look["color"]
            t = s["grid"]
            ax.plot(t, s[f"{fig.metric}_mean"], label=ref.label, **look)
            ax.fill_between(t, s[f"{fig.metric}_lo"], s[f"{fig.metric}_hi"], color=col, alpha=0.15, lw=0)
        ax.set_title(title)
        ax.set_xscale(fig.axes.get("xscale", "linear"))
        ax.set_yscale(fig.axes.get("yscale", "linear"))
        ax.set_xlabel(fig.axes.get("x", "t"))
        ax.set_ylabel(fig.axes.get("y", fig.metric))
        ax.legend(loc=fig.extra.get("legend", "best"), fontsize=7, framealpha=0.85)
    for ax in flat[len(panels):]:
        ax.set_visible(False)
    mpl_fig.suptitle(fig.title, fontsize=10)
    plotting.save(mpl_fig, png, pdf)


def b_selection_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    df = lines_table(fig, layout)
    df["best_in_panel"] = ""
    for i in df.panel_index.unique():
        d = df[(df.panel_index == i) & (df.name == "m-ts-gaussian") & (df.status == "ok")]
        if d.empty:
            continue
        lowest = d.mean_final_regret.min()
        df.loc[d.index[d.mean_final_regret == lowest], "best_in_panel"] = "lowest final regret"
    return df


register("dp-bounds-table", bounds_table, draw_bounds)
register("dp-privacy-regret", privacy_regret_table, draw_privacy_regret)
register("dp-equal-regret", lines_table, draw_equal_regret)
register("dp-curves", dp_curves_table, draw_dp_curves)
register("dp-b-selection", b_selection_table, draw_dp_curves)
