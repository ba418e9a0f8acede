"""Figure kinds of the DP-TS-UCB paper (registered into banditrepro.figures.DRAWERS).

Every kind writes a table whose rows are the figure's lines with their privacy accounting (the GDP parameter η
of ``banditrepro.privacy`` for the Gaussian algorithms, ε for the Laplace ones) beside the usual final-regret
statistics, so the claims of ``banditrepro.claims_dp`` read everything from the table.

Manifest options (``options:`` of a figure, read as ``fig.extra``):

- ``alpha``: the DP-TS-UCB trade-off α that a line stands for, when it is not a DP-TS-UCB line (whose own
  ``alpha`` parameter wins): a number for every line, or ``{key: α}``; ``panel_alpha``: one α per panel.
- ``c_rule``: how the manifest's c of the M-TS-Gaussian lines was computed, checked into the table
  (``c_formula``, ``c_rel_diff``): ``{kind: equal-privacy | log-power, design_horizon: T, factor: 5}``;
  equal-privacy is App. E.1's c = T^{0.5(1+α)} ln^{−1.5(1−α)} T / (2 c0 (b+1)), log-power is c = factor·ln^α T.
  The c values are numbers in the manifest computed for ``design_horizon`` (the paper's T = 10^6), so a
  capped test horizon runs the same configurations (their η at the capped T is what the table reports).
- table1 (``dp-bounds-table``): ``alpha``, ``b``, ``c``, ``gamma`` of the parametrised rows of Table 1.
- delta-epsilon (``dp-delta-epsilon``): ``eps_points`` (ε at which δ(ε) is tabulated), ``delta_points``
  (δ at which ε(δ) is tabulated), ``eps_range`` ([lo, hi] of the plotted ε axis).
- regret-vs-epsilon (``dp-frontier``): ``delta`` (δ at which every GDP line's ε is read), ``operating_points``
  (keys of the paper's own configurations, marked).

Panels whose horizons collapse under ``max_horizon`` (same horizon and same lines) are drawn and tabulated once.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro import privacy as pv
from banditrepro.figures import curves_table, register, summary_file
from banditrepro.manifest import AlgoRef, Figure, Panel

GDP_ALGORITHMS = ("dp-ts-ucb", "m-ts-gaussian", "ts-gaussian")
LAPLACE_ALGORITHMS = ("dp-se", "lazy-dp-ts", "anytime-lazy-ucb")
TABLE1_NOTE = "hidden constants of O(·)/Õ(·) set to 1; K·f(Δ)/Δ read as Σ_i f(Δ_i)/Δ_i"


# ---------------------------------------------------------------------------------------------------
# privacy accounting of one line


def line_alpha(fig: Figure, panel_index: int, ref: AlgoRef) -> float | None:
    """The α a line stands for: DP-TS-UCB's own parameter, else the figure's ``alpha``/``panel_alpha`` option."""
    if ref.name == "dp-ts-ucb":
        return float(ref.params["alpha"])
    opt = fig.extra.get("alpha")
    value = None
    if isinstance(opt, dict):
        value = opt.get(ref.key)
    elif opt is not None:
        value = opt
    if value is None and "panel_alpha" in fig.extra:
        pa = fig.extra["panel_alpha"]
        if not isinstance(pa, list) or len(pa) != len(fig.panels):
            raise ReproError(f"{fig.stem}: options.panel_alpha needs one α per panel ({len(fig.panels)})")
        value = pa[panel_index]
    if value is None:
        return None
    try:
        a = float(value)
    except (TypeError, ValueError):
        raise ReproError(f"{fig.stem}: α of line {ref.key!r} is not a number: {value!r}") from None
    pv._alpha(a)  # one-line error when outside [0, 1]
    return a


def line_privacy(ref: AlgoRef, T: int) -> dict:
    """GDP parameter η (Gaussian algorithms) or ε (Laplace algorithms) of one line at horizon T."""
    row = {"name": ref.name, "b": np.nan, "c": np.nan, "epsilon": np.nan, "eta": np.nan, "privacy": ""}
    if ref.name == "ts-gaussian":
        row.update(b=0, c=1.0, privacy="η-GDP, η = √(0.5 T) (Ou et al. 2024, paper §2)")
        if T > 1:
            row["eta"] = pv.eta_ts_gaussian(T)
    elif ref.name == "m-ts-gaussian":
        b = int(ref.params.get("b", 0))
        c = float(ref.params.get("c", 1.0))
        row.update(b=b, c=c, privacy="η-GDP, η = √(T/(c(b+1))) (Ou et al. 2024)")
        if T > 1:
            row["eta"] = pv.eta_m_ts_gaussian(T, b, c)
    elif ref.name == "dp-ts-ucb":
        row["privacy"] = "η-GDP, η = √(2 c0 T^(0.5(1−α)) ln^(1.5(1−α)) T) (Thm 4.4)"
        if T > 1:
            row["eta"] = pv.eta_dp_ts_ucb(ref.params["alpha"], T)
    elif ref.name in LAPLACE_ALGORITHMS:
        row["epsilon"] = float(ref.params["epsilon"])
        row["privacy"] = f"(ε, 0)-DP, ε = {row['epsilon']:g} (Laplace mechanism)"
    else:
        row["privacy"] = "not private"
    return row


def c_rule_value(rule: dict, alpha: float | None, b) -> float:
    """The c that ``rule`` prescribes for a line (NaN when the line has no α)."""
    if alpha is None or b is None or (isinstance(b, float) and math.isnan(b)):
        return math.nan
    kind = rule.get("kind")
    T = float(rule.get("design_horizon", 10**6))
    if kind == "equal-privacy":
        return float(pv.equal_privacy_c(alpha, T, b))
    if kind == "log-power":
        return float(rule.get("factor", 1.0)) * math.log(T) ** float(pv._alpha(alpha))
    raise ReproError(f"c_rule kind must be 'equal-privacy' or 'log-power', got {kind!r}")


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


def lines_table(fig: Figure, status_dir, prepared_dir, root) -> pd.DataFrame:
    """curves_table (final-regret statistics per line) plus α, b, c, ε, η and the c-rule check per line."""
    base = curves_table(fig, status_dir, prepared_dir, root)
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
            alpha = line_alpha(fig, i, ref)
            row["panel_index"] = i
            row["alpha"] = np.nan if alpha is None else alpha
            row.update(line_privacy(ref, panel.horizon))
            summary = (f"{row['eta']:.4g}-GDP" if row["eta"] == row["eta"] else
                       f"({row['epsilon']:g}, 0)-DP" if row["epsilon"] == row["epsilon"] else "")
            row["note"] = "; ".join(x for x in (row.get("note") or "", summary) if isinstance(x, str) and x)
            if rule and ref.name == "m-ts-gaussian":
                cf = c_rule_value(rule, alpha, row["b"])
                row["c_formula"] = cf
                row["c_rel_diff"] = abs(row["c"] - cf) / cf if cf == cf else np.nan
            rows.append(row)
    df = pd.DataFrame(rows)
    lead = ["paper", "figure", "panel", "panel_index", "dataset", "horizon", "algorithm", "label", "name",
            "alpha", "b", "c", "epsilon", "eta", "privacy", "status", "runs", "mean_final_regret", "se",
            "ci95_low", "ci95_high"]
    cols = [c for c in lead if c in df.columns] + [c for c in df.columns if c not in lead]
    return df[cols]


def _load(panel: Panel, ref: AlgoRef, root):
    from banditrepro.aggregate import load_summary

    return load_summary(summary_file(panel.dataset, panel.horizon, ref.id, root))


def _shades(names: list[str]):
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


def _means(panel: Panel, prepared_dir) -> np.ndarray:
    from pathlib import Path

    from banditrepro.datasets.catalog import load_prepared

    inst = load_prepared(Path(prepared_dir) / f"{panel.dataset}.json")
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


def bounds_table(fig: Figure, status_dir, prepared_dir, root) -> pd.DataFrame:
    rows = []
    p = _table1_params(fig)
    for _, panel in unique_panels(fig):
        mu = _means(panel, prepared_dir)
        T = panel.horizon
        for k, r in enumerate(pv.regret_bounds_table(T, mu, **p)):
            rows.append({"paper": fig.paper, "figure": fig.id, "dataset": panel.dataset, "horizon": T,
                         "label": r.algorithm, "name": _ROW_NAMES[k], "regret_bound": r.regret_bound,
                         "gdp": r.gdp, "regret_bound_value": r.regret, "eta_O_form": r.eta,
                         "eta_with_constants": _exact_eta(k, T, p),
                         "note": f"regret {r.regret_bound} ≈ {r.regret:.4g}; GDP {r.gdp} ≈ {r.eta:.4g} "
                                 f"(with the theorems' constants {_exact_eta(k, T, p):.4g}); {TABLE1_NOTE}"})
    return pd.DataFrame(rows)


def draw_bounds(fig: Figure, png, pdf, status_dir, prepared_dir, root):
    from banditrepro import plotting

    p = _table1_params(fig)
    _, panel = unique_panels(fig)[-1]
    mu = _means(panel, prepared_dir)
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


def privacy_regret_table(fig: Figure, status_dir, prepared_dir, root) -> pd.DataFrame:
    df = lines_table(fig, status_dir, prepared_dir, root)
    df = df.drop_duplicates(subset=["algorithm_id", "horizon"]).copy()
    df["eta_thm46"] = [pv.eta_dp_ts_ucb_thm46(a, T) if n == "dp-ts-ucb" and T > 1 else np.nan
                       for a, T, n in zip(df.alpha, df.horizon, df.name)]
    df["phi"] = [pv.phi(a, T) if n == "dp-ts-ucb" and T > 1 else np.nan
                 for a, T, n in zip(df.alpha, df.horizon, df.name)]
    return df.sort_values(["alpha", "horizon"], kind="stable").reset_index(drop=True)


def draw_privacy_regret(fig: Figure, png, pdf, status_dir, prepared_dir, root):
    from banditrepro import plotting

    df = privacy_regret_table(fig, status_dir, prepared_dir, root)
    mpl_fig, axes = plotting.subplots(1, 3, width=4.4, height=3.6)
    ax_eta, ax_reg, ax_sc = axes[0]
    keys = list(dict.fromkeys(df.algorithm))
    colors = dict(zip(keys, _shades([df[df.algorithm == k].name.iloc[0] for k in keys])))
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
    for name, col in zip(names, _shades(names)):
        d = df[(df.name == name) & df[column].notna()].sort_values("alpha")
        if d.empty:
            continue
        label = d.label.iloc[0].split(" (")[0] if d.label.nunique() > 1 else d.label.iloc[0]
        if lo is not None:
            ax.errorbar(d.alpha, d[column], yerr=[d[column] - d[lo], d[hi] - d[column]], color=col, marker="o",
                        ms=4, capsize=3, lw=1.3, label=label)
        else:
            ax.plot(d.alpha, d[column], "o-", color=col, ms=4, lw=1.3, label=label)


def draw_equal_regret(fig: Figure, png, pdf, status_dir, prepared_dir, root):
    from banditrepro import plotting

    df = lines_table(fig, status_dir, prepared_dir, root)
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


def dp_curves_table(fig: Figure, status_dir, prepared_dir, root) -> pd.DataFrame:
    return lines_table(fig, status_dir, prepared_dir, root)


_STYLES = ["-", "--", "-.", ":"]


def draw_dp_curves(fig: Figure, png, pdf, status_dir, prepared_dir, root):
    """Mean R(t) with 95 % bands per line; variants of one algorithm get shades of its colour and line styles.
    Panels repeated by a horizon cap are drawn once."""
    from banditrepro import plotting
    from banditrepro.figures import panel_status

    panels = [p for _, p in unique_panels(fig)]
    rows, cols = fig.extra.get("layout") or (1, len(panels))
    if rows * cols < len(panels) or len(panels) < len(fig.panels):
        rows, cols = 1, len(panels)
    mpl_fig, axes = plotting.subplots(rows, cols, width=5.6, height=4.2)
    flat = axes.ravel()
    for ax, panel in zip(flat, panels):
        title = f"{panel.title}, T = {panel.horizon:,}"
        ok, reason = panel_status(panel.dataset, status_dir)
        if not ok:
            plotting.unavailable(ax, title, reason)
            continue
        names = [r.name for r in panel.algorithms]
        counts = Counter(names)
        seen = Counter()
        for ref, col in zip(panel.algorithms, _shades(names)):
            s = _load(panel, ref, root)
            style = _STYLES[seen[ref.name] % len(_STYLES)] if counts[ref.name] > 1 else "-"
            seen[ref.name] += 1
            t = s["grid"]
            ax.plot(t, s[f"{fig.metric}_mean"], style, color=col, label=ref.label, lw=1.4)
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


def b_selection_table(fig: Figure, status_dir, prepared_dir, root) -> pd.DataFrame:
    df = lines_table(fig, status_dir, prepared_dir, root)
    df["best_in_panel"] = ""
    for i in df.panel_index.unique():
        d = df[(df.panel_index == i) & (df.name == "m-ts-gaussian") & (df.status == "ok")]
        if d.empty:
            continue
        lowest = d.mean_final_regret.min()
        df.loc[d.index[d.mean_final_regret == lowest], "best_in_panel"] = "lowest final regret"
    return df


# ---------------------------------------------------------------------------------------------------
# delta-epsilon (beyond the paper): δ(ε) of every configuration


def epsilon_at_delta(delta: float, eta: float) -> float:
    """The smallest ε with δ(ε) ≤ ``delta`` for an η-GDP mechanism (Theorem 2.4 inverted)."""
    from scipy.optimize import brentq

    if not 0 < delta < 1:
        raise ReproError(f"delta must lie in (0, 1), got {delta:g}")
    if eta <= 0:
        return 0.0
    lo = 1e-12
    if pv.delta_of_epsilon(lo, eta) <= delta:
        return 0.0
    hi = max(1.0, eta * eta)
    while pv.delta_of_epsilon(hi, eta) > delta:
        hi *= 2
    return float(brentq(lambda e: pv.delta_of_epsilon(e, eta) - delta, lo, hi, xtol=1e-12, rtol=1e-10))


def _eps_options(fig: Figure):
    eps_points = [float(e) for e in fig.extra.get("eps_points", [0.5, 1.0, 2.0, 5.0, 10.0])]
    delta_points = [float(d) for d in fig.extra.get("delta_points", [1e-5])]
    pv._positive("epsilon", np.asarray(eps_points))
    for d in delta_points:
        if not 0 < d < 1:
            raise ReproError(f"{fig.stem}: delta_points must lie in (0, 1), got {d:g}")
    return eps_points, delta_points


def delta_epsilon_table(fig: Figure, status_dir, prepared_dir, root) -> pd.DataFrame:
    eps_points, delta_points = _eps_options(fig)
    df = lines_table(fig, status_dir, prepared_dir, root)
    for e in eps_points:
        col = []
        for eta, e0 in zip(df.eta, df.epsilon):
            if eta == eta:
                col.append(pv.delta_of_epsilon(e, eta))
            else:  # (ε0, 0)-DP gives δ = 0 from ε0 on; below ε0 this table states no bound
                col.append(0.0 if e >= e0 else np.nan)
        df[f"delta_at_eps_{e:g}"] = col
    for d in delta_points:
        df[f"eps_at_delta_{d:g}"] = [epsilon_at_delta(d, eta) if eta == eta else e0
                                     for eta, e0 in zip(df.eta, df.epsilon)]
    return df


def draw_delta_epsilon(fig: Figure, png, pdf, status_dir, prepared_dir, root):
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
        colors = _shades(names)
        lap = 0
        for ref, col in zip(panel.algorithms, colors):
            pr = line_privacy(ref, panel.horizon)
            if ref.name in LAPLACE_ALGORITHMS:
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
# regret-vs-epsilon (issue 10 §3, beyond the paper): the privacy–regret frontier at one (ε, δ) scale
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
    if ref.name in LAPLACE_ALGORITHMS:
        return f"{label} over ε"
    return label


def frontier_delta(fig: Figure) -> float:
    d = float(fig.extra.get("delta", 1e-5))
    if not 0 < d < 1:
        raise ReproError(f"{fig.stem}: options.delta must lie in (0, 1), got {d:g}")
    return d


def frontier_table(fig: Figure, status_dir, prepared_dir, root) -> pd.DataFrame:
    delta = frontier_delta(fig)
    ops = set(fig.extra.get("operating_points", []))
    unknown = ops - {r.key for p in fig.panels for r in p.algorithms}
    if unknown:
        raise ReproError(f"{fig.stem}: operating point {sorted(unknown)[0]!r} is not a line of the figure")
    df = lines_table(fig, status_dir, prepared_dir, root)
    refs = {r.key: r for p in fig.panels for r in p.algorithms}
    df["series"] = [frontier_series(refs[k]) for k in df.algorithm]
    df["dp_kind"] = ["GDP" if eta == eta else "pure ε-DP" for eta in df.eta]
    df["delta"] = [delta if eta == eta else 0.0 for eta in df.eta]
    df["eps_at_delta"] = [epsilon_at_delta(delta, eta) if eta == eta else e0 for eta, e0 in zip(df.eta, df.epsilon)]
    df["operating_point"] = df.algorithm.isin(ops)
    return df


def draw_frontier(fig: Figure, png, pdf, status_dir, prepared_dir, root):
    from banditrepro import plotting

    df = frontier_table(fig, status_dir, prepared_dir, root)
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


register("dp-bounds-table", bounds_table, draw_bounds)
register("dp-privacy-regret", privacy_regret_table, draw_privacy_regret)
register("dp-equal-regret", lines_table, draw_equal_regret)
register("dp-curves", dp_curves_table, draw_dp_curves)
register("dp-b-selection", b_selection_table, draw_dp_curves)
register("dp-delta-epsilon", delta_epsilon_table, draw_delta_epsilon)
register("dp-frontier", frontier_table, draw_frontier)
