"""Claim tests of the DP-TS-UCB paper (registered with banditrepro.claims.test).

Every test reads the figure table written by ``banditrepro.figures_dp`` (columns name, alpha, b, c, eta,
status, mean_final_regret, ci95_low/high, …) and returns (test in words, what it measured, verdict). A line
that did not run makes the test not-run; thresholds ("slightly", "significantly") are arguments in the
manifest, so each verdict states the rule it applied.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro import privacy as pv
from banditrepro.claims import test


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    return df[df.status == "ok"] if "status" in df.columns else df


def _row(ctx, key: str) -> pd.Series:
    rows = ctx.table[ctx.table.algorithm == key]
    if rows.empty:
        raise ReproError(f"{ctx.fig.stem}: claim refers to unknown algorithm key {key!r}")
    return rows.iloc[0]


def _not_run(rows: list[pd.Series]) -> list[str]:
    return [str(r.algorithm) for r in rows if r.get("status", "ok") != "ok"]


def _g(x: float) -> str:
    return f"{x:.4g}"


# ---------------------------------------------------------------------------------------------------
# §5.1: η and regret over α × T


@test("dp-eta-decreasing-in-alpha")
def _eta_decreasing(ctx, name: str = "dp-ts-ucb"):
    desc = f"at every horizon T, η of {name} (Thm 4.4) strictly decreases as α increases"
    df = ctx.table[ctx.table.name == name]
    parts, ok = [], True
    for T, d in df.groupby("horizon"):
        d = d.sort_values("alpha")
        dec = bool(np.all(np.diff(d.eta.to_numpy()) < 0))
        ok &= dec and len(d) > 1
        parts.append(f"T={T}: η = " + " > ".join(_g(v) for v in d.eta) + ("" if dec else " (NOT decreasing)"))
    if not parts:
        return desc, "no rows", "not-run"
    return desc, "; ".join(parts), "pass" if ok else "fail"


@test("dp-regret-increasing-in-alpha")
def _regret_increasing(ctx, name: str = "dp-ts-ucb", min_horizon: int = 0):
    desc = (f"at every horizon T ≥ {min_horizon}, the mean final regret of {name} strictly increases with α "
            "(every adjacent pair of the α grid)")
    df = ctx.table[(ctx.table.name == name) & (ctx.table.horizon >= min_horizon)]
    if df.empty:
        return desc, "no rows", "not-run"
    missing = _not_run([r for _, r in df.iterrows()])
    if missing:
        return desc, f"not run: {', '.join(sorted(set(missing)))}", "not-run"
    parts, bad = [], 0
    for T, d in df.groupby("horizon"):
        d = d.sort_values("alpha")
        r = d.mean_final_regret.to_numpy()
        a = d.alpha.to_numpy()
        viol = [f"α={a[k]:g}→{a[k + 1]:g}" for k in range(len(r) - 1) if not r[k + 1] > r[k]]
        bad += bool(viol)
        parts.append(f"T={T}: " + " < ".join(_g(v) for v in r) + (f" (not increasing at {', '.join(viol)})"
                                                                    if viol else ""))
    n = df.horizon.nunique()
    measured = f"increasing at {n - bad}/{n} horizons; " + "; ".join(parts)
    return desc, measured, "pass" if bad == 0 else "fail"


@test("dp-eta-constant-in-T")
def _eta_constant(ctx, alpha: float = 1.0, name: str = "dp-ts-ucb", rel_tol: float = 1e-9):
    desc = (f"η of {name} at α = {alpha:g} is the same at every horizon (relative spread ≤ {rel_tol:g}); "
            "for contrast, the growth of η over the same horizons at the smallest α")
    df = ctx.table[ctx.table.name == name]
    d = df[np.isclose(df.alpha, alpha)].drop_duplicates("horizon").sort_values("horizon")
    if d.horizon.nunique() < 2:
        return desc, f"fewer than two distinct horizons ({d.horizon.tolist()}): cannot test", "not-run"
    spread = (d.eta.max() - d.eta.min()) / d.eta.min()
    amin = df.alpha.min()
    low = df[np.isclose(df.alpha, amin)].drop_duplicates("horizon").sort_values("horizon")
    measured = (f"α={alpha:g}: η = {_g(d.eta.min())} … {_g(d.eta.max())} over T = {d.horizon.min()} … "
                f"{d.horizon.max()} (relative spread {spread:.2g}); α={amin:g}: η grows "
                f"{_g(low.eta.iloc[-1] / low.eta.iloc[0])}×")
    return desc, measured, "pass" if spread <= rel_tol else "fail"


# ---------------------------------------------------------------------------------------------------
# §5.2: equal regret bound


def _prepared_means(ctx, dataset: str):
    """Arm means of a prepared dataset."""
    from banditrepro.datasets.catalog import load_prepared

    path = Path(ctx.prepared_dir) / f"{dataset}.json"
    if not path.exists():
        return None
    return np.asarray(load_prepared(path).means)


@test("dp-same-bound-order")
def _same_bound_order(ctx, a: str = "dp-ts-ucb", b: str = "m-ts-gaussian", factor: float = 5.0,
                      horizons=(1e3, 1e4, 1e5, 1e6, 1e7), max_spread: float = 2.0):
    desc = (f"Table 1 bounds (constants 1) of {a}(α) and M-TS-Gaussian(b=0, c={factor:g} ln^α T) evaluated at "
            f"T ∈ {{{', '.join(_g(float(t)) for t in horizons)}}}: their ratio changes by at most a factor "
            f"{max_spread:g} over T for every α (same order in T)")
    alphas = sorted(ctx.table[ctx.table.name == a].alpha.dropna().unique())
    dataset = ctx.table.dataset.iloc[0]
    mu = _prepared_means(ctx, dataset)
    if mu is None or not alphas:
        return desc, f"prepared instance {dataset} not found or no α", "not-run"
    parts, ok = [], True
    for al in alphas:
        ratios = []
        for T in horizons:
            T = float(T)
            c = factor * math.log(T) ** al
            rows = pv.regret_bounds_table(T, mu, alpha=al, b=0, c=c)
            ratios.append(rows[4].regret / rows[1].regret)  # DP-TS-UCB(α) / M-TS-G(b=0, c)
        spread = max(ratios) / min(ratios)
        ok &= spread <= max_spread
        parts.append(f"α={al:g}: ratio {_g(min(ratios))}–{_g(max(ratios))} (spread {spread:.2f})")
    return desc, "; ".join(parts), "pass" if ok else "fail"


@test("dp-lower-at-every-alpha")
def _lower_every_alpha(ctx, a: str, b: str, column: str = "mean_final_regret"):
    what = {"mean_final_regret": "mean final regret", "eta": "GDP parameter η"}.get(column, column)
    desc = f"at every α, the {what} of {a}(α) < that of its {b} counterpart"
    df = ctx.table
    da = df[df.name == a].set_index("alpha")
    db = df[df.name == b].set_index("alpha")
    alphas = sorted(set(da.index.dropna()) & set(db.index.dropna()))
    if not alphas:
        return desc, "no common α", "not-run"
    if column != "eta":
        missing = _not_run([r for _, r in pd.concat([da, db]).reset_index().iterrows()])
        if missing:
            return desc, f"not run: {', '.join(missing)}", "not-run"
    parts, wins = [], 0
    for al in alphas:
        va = float(da.loc[da.index == al, column].iloc[0])
        vb = float(db.loc[db.index == al, column].iloc[0])
        wins += va < vb
        parts.append(f"α={al:g}: {_g(va)} vs {_g(vb)}" + ("" if va < vb else " (NOT lower)"))
    measured = f"{a} lower at {wins}/{len(alphas)} α; " + "; ".join(parts)
    return desc, measured, "pass" if wins == len(alphas) else "fail"


# ---------------------------------------------------------------------------------------------------
# §5.3 and E.2: pairwise comparisons of final regret


def _with_cis(ra, rb) -> str:
    """'mean [95 % CI] vs mean [95 % CI]' of two table rows' final regrets."""
    return (f"{_g(float(ra.mean_final_regret))} [{_g(ra.ci95_low)}, {_g(ra.ci95_high)}] vs "
            f"{_g(float(rb.mean_final_regret))} [{_g(rb.ci95_low)}, {_g(rb.ci95_high)}]")


@test("dp-slightly-better")
def _slightly_better(ctx, a: str, b: str, max_ratio: float = 1.5):
    ra, rb = _row(ctx, a), _row(ctx, b)
    desc = (f"mean final regret of {ra.label} < {rb.label}, and {rb.label}'s is at most {max_ratio:g}× "
            f"{ra.label}'s (a small gap)")
    missing = _not_run([ra, rb])
    if missing:
        return desc, f"not run: {', '.join(missing)}", "not-run"
    va, vb = float(ra.mean_final_regret), float(rb.mean_final_regret)
    ratio = vb / max(va, 1e-12)
    T = int(ra.horizon) if "horizon" in ra and ra.horizon == ra.horizon else 0
    share = f" = {(vb - va) / T:.3%} of T" if T else ""
    measured = f"{_with_cis(ra, rb)}; ratio {ratio:.2f}, gap {_g(vb - va)}{share}"
    return desc, measured, "pass" if va < vb and ratio <= max_ratio else "fail"


@test("dp-significantly-better")
def _significantly_better(ctx, a: str, b: str):
    ra, rb = _row(ctx, a), _row(ctx, b)
    desc = (f"mean final regret of {ra.label} < {rb.label} with disjoint 95 % confidence intervals "
            f"(upper limit of {ra.label} below the lower limit of {rb.label})")
    missing = _not_run([ra, rb])
    if missing:
        return desc, f"not run: {', '.join(missing)}", "not-run"
    va, vb = float(ra.mean_final_regret), float(rb.mean_final_regret)
    measured = f"{_with_cis(ra, rb)}; ratio {vb / max(va, 1e-12):.2f}"
    return desc, measured, "pass" if float(ra.ci95_high) < float(rb.ci95_low) else "fail"


@test("dp-beats-all")
def _beats_all(ctx, a: str, b: list, worse: bool = False):
    ra = _row(ctx, a)
    others = [_row(ctx, k) for k in b]
    rel = "higher" if worse else "lower"
    desc = f"mean final regret of {ra.label} is {rel} than that of each of " + ", ".join(r.label for r in others)
    missing = _not_run([ra, *others])
    if missing:
        return desc, f"not run: {', '.join(missing)}", "not-run"
    va = float(ra.mean_final_regret)
    parts, good = [], 0
    for r in others:
        vb = float(r.mean_final_regret)
        hit = va > vb if worse else va < vb
        good += hit
        parts.append(f"{r.label} {_g(vb)}" + ("" if hit else f" (NOT {rel})"))
    measured = f"{ra.label} {_g(va)} vs " + "; ".join(parts)
    return desc, measured, "pass" if good == len(others) else "fail"


# ---------------------------------------------------------------------------------------------------
# E.1: equal-privacy c and the best b


@test("dp-c-matches-rule")
def _c_matches(ctx, rel_tol: float = 0.005):
    rule = ctx.fig.extra.get("c_rule", {})
    desc = (f"every M-TS-Gaussian c of the manifest is within {rel_tol:.1%} of the figure's c rule "
            f"({rule.get('kind', 'none')} at T = {rule.get('design_horizon', 'n/a')})")
    df = ctx.table[ctx.table.name == "m-ts-gaussian"]
    if "c_rel_diff" not in df.columns or df.empty:
        return desc, "no M-TS-Gaussian line with a c rule", "not-run"
    bad = df[~(df.c_rel_diff <= rel_tol)]
    worst = df.loc[df.c_rel_diff.idxmax()]
    measured = (f"{len(df) - len(bad)}/{len(df)} within tolerance; largest difference {worst.c_rel_diff:.2%} "
                f"({worst.label}: formula {_g(worst.c_formula)})")
    if len(bad):
        measured += "; off: " + ", ".join(f"{r.label} (formula {_g(r.c_formula)})" for _, r in bad.iterrows())
    return desc, measured, "pass" if bad.empty else "fail"


@test("dp-best-b")
def _best_b(ctx, panel: int, b: int):
    df = ctx.table[(ctx.table.panel_index == panel) & (ctx.table.name == "m-ts-gaussian")]
    title = ctx.fig.panels[panel].title if panel < len(ctx.fig.panels) else str(panel)
    desc = f"in panel {title}, the M-TS-Gaussian line with the lowest mean final regret has b = {b}"
    if df.empty:
        return desc, "no M-TS-Gaussian line in that panel", "not-run"
    missing = _not_run([r for _, r in df.iterrows()])
    if missing:
        return desc, f"not run: {', '.join(missing)}", "not-run"
    lowest = df.mean_final_regret.min()
    best = df[df.mean_final_regret == lowest]
    order = df.sort_values("mean_final_regret")
    ranking = ", ".join(f"b={int(r.b)} {_g(r.mean_final_regret)}" for _, r in order.iterrows())
    tie = f" (tie of {len(best)})" if len(best) > 1 else ""
    measured = f"lowest at b = {', '.join(str(int(x)) for x in best.b)}{tie}; ranking: {ranking}"
    return desc, measured, "pass" if len(best) == 1 and int(best.b.iloc[0]) == int(b) else "fail"


# ---------------------------------------------------------------------------------------------------
# Table 1


@test("dp-gdp-improves")
def _gdp_improves(ctx, a: str, b: str):
    t = ctx.table
    ra, rb = t[t.label == a], t[t.label == b]
    desc = (f"at the table's horizon, η of {a} (with the theorems' constants) < η of {b}; also the horizon "
            f"from which this holds")
    if ra.empty or rb.empty:
        return desc, f"rows {a!r} / {b!r} not in the table", "not-run"
    ra, rb = ra.iloc[-1], rb.iloc[-1]
    va, vb = float(ra.eta_with_constants), float(rb.eta_with_constants)
    cross = _crossover_alpha0()
    measured = (f"T = {int(ra.horizon):,}: η = {_g(va)} vs {_g(vb)}; η_DP-TS-UCB(α=0) = √(2c0 T^0.5 ln^1.5 T) "
                f"< √T once T > {_g(cross)}")
    return desc, measured, "pass" if va < vb else "fail"


def _crossover_alpha0() -> float:
    """The T above which √(2 c0 T^0.5 ln^1.5 T) < √T (DP-TS-UCB α = 0 vs TS-Gaussian)."""
    from scipy.optimize import brentq

    f = lambda x: math.log(2 * pv.C0) + 1.5 * math.log(x) - 0.5 * x  # noqa: E731  (x = ln T)
    return math.exp(brentq(f, 10.0, 200.0))


# ====================================================================================================
# studies (issue 10 §3): privacy and regret at one scale. Tests return banditrepro.verdicts.Outcome.


@test("dp_frontier_dominated")
def _frontier_dominated(ctx, points: list[str], by: list[str]):
    """Each line of ``points`` is Pareto-dominated by some line of ``by``: that line's ε at the table's δ is no
    larger, and its mean final regret is lower (the paired bootstrap 95 % interval of the ratio by/point lies
    below 1). Not dominated: every line of ``by`` with no larger ε is significantly worse (interval above 1),
    or none has a small enough ε."""
    from banditrepro.claims_c2b import paired_finals, stable_seed
    from banditrepro.verdicts import INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, REPRODUCED, Outcome, combine, ratio_ci

    if "eps_at_delta" not in ctx.table:
        raise ReproError(f"{ctx.fig.stem}: dp_frontier_dominated needs a dp-frontier table (eps_at_delta)")
    panel = ctx.fig.panels[0]
    delta = float(ctx.fig.extra.get("delta", 1e-5))
    desc = (f"each of {', '.join(ctx.label(k) for k in points)} is dominated by a line of the (ε, 0)-DP grid with "
            f"ε ≤ its ε at δ = {delta:g} and lower mean final regret (paired bootstrap 95 % interval of the regret "
            f"ratio below 1)")
    rows = {k: _row(ctx, k) for k in points + by}
    if any(r.status != "ok" for r in rows.values()):
        return Outcome(desc, "lines did not run: " + ", ".join(k for k, r in rows.items() if r.status != "ok"),
                       NOT_RUN)
    parts, verdicts, ivs = [], [], []
    for k in points:
        eps = float(rows[k].eps_at_delta)
        cands = [b for b in by if float(rows[b].eps_at_delta) <= eps]
        if not cands:
            verdicts.append(NOT_REPRODUCED)
            parts.append(f"{ctx.label(k)} (ε = {eps:.4g}): no line of the grid has ε ≤ {eps:.4g} → not dominated")
            continue
        scored = []
        for b in cands:
            fb, fk = paired_finals(ctx, panel, b, k, ctx.fig.metric)
            scored.append((ratio_ci(fb, fk, seed=stable_seed(ctx.fig.stem, b, k)), b))
        best_iv, best = min(scored, key=lambda x: x[0].high)
        if best_iv.high < 1:
            v = REPRODUCED
        elif all(iv.low > 1 for iv, _ in scored):
            v = NOT_REPRODUCED
        else:
            v = INCONCLUSIVE
        verdicts.append(v)
        ivs.append((v, best_iv))
        parts.append(f"{ctx.label(k)} (ε = {eps:.4g}, R = {float(rows[k].mean_final_regret):.4g}): best dominator "
                     f"{ctx.label(best)} (ε = {float(rows[best].eps_at_delta):g}), regret ratio {best_iv} → {v}")
    verdict = combine(verdicts)
    pick = [iv for v, iv in ivs if v == verdict] or [iv for _, iv in ivs]
    iv = max(pick, key=lambda x: x.high) if pick else None
    return Outcome(desc, "; ".join(parts), verdict, iv.low if iv else math.nan, iv.high if iv else math.nan)
