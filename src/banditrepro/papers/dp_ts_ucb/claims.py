"""Claim tests of the DP-TS-UCB paper (registered with banditrepro.claims.test).

Every test reads the figure table written by ``banditrepro.papers.dp_ts_ucb.figures`` (columns name, alpha, b, c, eta,
status, mean_final_regret, …) for the lines, and the per-run finals of their summaries for intervals
(paired bootstrap: the lines of one (dataset, T) share their random streams). Formula claims (η, c, the
Table 1 bounds) are decided exactly (``verdicts.exact``) and say "formula check". A line that did not run
makes the claim `not run`; tolerances ("small gap", "significantly") are manifest parameters with a
rationale, and the measured text gives the break-even value.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.claims.context import NotRun
from banditrepro.claims.parts import Part, fmt, fmt_iv, outcome
from banditrepro.claims.registry import test
from banditrepro.papers.dp_ts_ucb import privacy as pv
from banditrepro.papers.dp_ts_ucb.studies import EPS_AT_DELTA
from banditrepro.verdicts import Interval, Outcome, exact


def _row(ctx, key: str) -> pd.Series:
    rows = ctx.table[ctx.table.algorithm == key]
    if rows.empty:
        raise ReproError(f"{ctx.fig.stem}: claim refers to unknown algorithm key {key!r}")
    return rows.iloc[0]


def _not_run(rows: list[pd.Series]) -> list[str]:
    return [str(r.algorithm) for r in rows if r.get("status", "ok") != "ok"]


def _g(x: float) -> str:
    return fmt(float(x))


def _finals(ctx, row: pd.Series) -> dict[int, float]:
    """Per-run final regrets of a table row's cell."""
    return ctx.runs_of(row.dataset, int(row.horizon), row.algorithm_id)


def _ratio(ctx, ra: pd.Series, rb: pd.Series) -> vd.Interval:
    """mean final regret of row a / row b, paired bootstrap interval."""
    return ctx.ratio(_finals(ctx, ra), _finals(ctx, rb), ra.algorithm, rb.algorithm, int(ra.horizon))


def _formula(desc: str, value: float, bound: float, side: str, text: str) -> Outcome:
    """A formula value against its boundary; side "at_most" admits equality (a tolerance), "below" does not."""
    iv = exact(value)
    if side == "at_most":
        verdict = vd.REPRODUCED if value <= bound else vd.NOT_REPRODUCED
    else:
        verdict = vd.decide(iv, bound, side)
        verdict = vd.NOT_REPRODUCED if verdict == vd.INCONCLUSIVE else verdict  # on the boundary: not strict
    return Outcome(desc, text, verdict, iv.low, iv.high)


# ---------------------------------------------------------------------------------------------------
# §5.1: η and regret over α × T


@test("dp-eta-decreasing-in-alpha", names=("name",))
def _eta_decreasing(ctx, name: str = "dp-ts-ucb"):
    desc = ctx.describe(f"formula check (Thm 4.4 η as tabulated): at every horizon T, η of {name} strictly "
                        "decreases as α increases; measured: the largest ratio η(α_next)/η(α) over adjacent "
                        "α and all T (must be < 1)")
    df = ctx.table[ctx.table.name == name]
    parts, worst = [], -math.inf
    for T, d in df.groupby("horizon"):
        d = d.sort_values("alpha")
        eta = d.eta.to_numpy(dtype=float)
        if len(eta) > 1:
            worst = max(worst, float(np.max(eta[1:] / eta[:-1])))
        parts.append(f"T={T}: η = " + " > ".join(_g(v) for v in eta))
    if worst == -math.inf:
        return Outcome(desc, "fewer than two α per horizon", vd.NOT_RUN)
    return _formula(desc, worst, 1.0, "below", f"largest adjacent ratio {_g(worst)}; " + "; ".join(parts))


@test("dp-regret-increasing-in-alpha", names=("name",))
def _regret_increasing(ctx, name: str = "dp-ts-ucb", min_horizon: int = 0):
    desc = ctx.describe(f"at every horizon T ≥ {min_horizon} and every adjacent pair of the α grid, the ratio of "
                        f"mean final regrets {name}(α_next) / {name}(α) > 1 (95 % paired bootstrap interval)")
    df = ctx.table[(ctx.table.name == name) & (ctx.table.horizon >= min_horizon)]
    if df.empty:
        return Outcome(desc, "no rows", vd.NOT_RUN)
    missing = _not_run([r for _, r in df.iterrows()])
    if missing:
        return Outcome(desc, f"not run: {', '.join(sorted(set(missing)))}", vd.NOT_RUN)
    parts = []
    for T, d in df.groupby("horizon"):
        d = d.sort_values("alpha")
        rows = [r for _, r in d.iterrows()]
        for r0, r1 in zip(rows, rows[1:]):
            parts.append(Part(f"T={T} α={r0.alpha:g}→{r1.alpha:g}", _ratio(ctx, r1, r0), 1.0, "above"))
    return outcome(desc, parts, ctx.min_runs)


@test("dp-eta-constant-in-T", names=("name",), tolerance=("rel_tol",))
def _eta_constant(ctx, alpha: float = 1.0, name: str = "dp-ts-ucb", rel_tol: float = 1e-9):
    desc = ctx.describe(f"formula check: η of {name} at α = {alpha:g} is the same at every horizon (relative "
                        f"spread (max − min)/min ≤ {rel_tol:g}); for contrast, the growth of η at the smallest α")
    df = ctx.table[ctx.table.name == name]
    d = df[np.isclose(df.alpha, alpha)].drop_duplicates("horizon").sort_values("horizon")
    if d.horizon.nunique() < 2:
        return Outcome(desc, f"fewer than two distinct horizons ({d.horizon.tolist()}): cannot test", vd.NOT_RUN)
    spread = float((d.eta.max() - d.eta.min()) / d.eta.min())
    amin = df.alpha.min()
    low = df[np.isclose(df.alpha, amin)].drop_duplicates("horizon").sort_values("horizon")
    measured = (f"α={alpha:g}: η = {_g(d.eta.min())} … {_g(d.eta.max())} over T = {d.horizon.min()} … "
                f"{d.horizon.max()} (relative spread {spread:.2g} = the break-even tolerance); α={amin:g}: η grows "
                f"{_g(low.eta.iloc[-1] / low.eta.iloc[0])}×")
    return _formula(desc, spread, rel_tol, "at_most", measured)


# ---------------------------------------------------------------------------------------------------
# §5.2: equal regret bound


def _prepared_means(ctx, dataset: str):
    """Arm means of a prepared dataset."""
    from banditrepro.datasets.catalog import load_prepared

    path = Path(ctx.layout.prepared_file(dataset))
    if not path.exists():
        return None
    return np.asarray(load_prepared(path).means)


def _rule_c(rule: dict, alpha: float, T: float) -> float:
    """The M-TS-Gaussian c of the figure's c rule evaluated at horizon T (b = 0)."""
    return pv.c_rule_value({**rule, "design_horizon": T}, alpha, 0)


@test("dp-same-bound-order", names=("a", "b"), tolerance=("max_exponent",))
def _same_bound_order(ctx, a: str = "dp-ts-ucb", b: str = "m-ts-gaussian", horizons=(1e6, 1e60),
                      max_exponent: float = 0.125):
    rule = ctx.fig.extra.get("c_rule", {})
    desc = ctx.describe(
        f"formula check (Table 1, constants 1): the ratio of the bounds of {a}(α) and {b}(b = 0, c from the "
        f"figure's c rule {rule.get('kind', 'none')} evaluated at each T) grows like ln^s(T) with |s| ≤ "
        f"{max_exponent:g} between T = {_g(float(horizons[0]))} and {_g(float(horizons[-1]))}, for every α "
        "(same order in T; a c without its ln^α T factor gives s ≈ α)")
    alphas = sorted(ctx.table[ctx.table.name == a].alpha.dropna().unique())
    dataset = ctx.table.dataset.iloc[0]
    mu = _prepared_means(ctx, dataset)
    if mu is None or not alphas or not rule:
        return Outcome(desc, f"prepared instance {dataset}, α or c rule not found", vd.NOT_RUN)
    T0, T1 = float(horizons[0]), float(horizons[-1])
    parts, worst = [], 0.0
    for al in alphas:
        r = []
        for T in (T0, T1):
            rows = pv.regret_bounds_table(T, mu, alpha=al, b=0, c=_rule_c(rule, al, T))
            r.append(rows[4].regret / rows[1].regret)  # DP-TS-UCB(α) / M-TS-G(b=0, c)
        s = math.log(r[1] / r[0]) / math.log(math.log(T1) / math.log(T0))
        worst = max(worst, abs(s))
        parts.append(f"α={al:g}: s = {s:+.3f}")
    return _formula(desc, worst, max_exponent, "at_most",
                    f"largest |s| {worst:.3f} (the break-even tolerance); " + "; ".join(parts))


@test("dp-lower-at-every-alpha", names=("a", "b"))
def _lower_every_alpha(ctx, a: str, b: str, column: str = "mean_final_regret"):
    if column == "eta":
        desc = ctx.describe(f"formula check: at every α, η of {a}(α) / η of its {b} counterpart < 1")
    else:
        desc = ctx.describe(f"at every α, the ratio of mean final regrets {a}(α) / its {b} counterpart < 1 "
                            "(95 % paired bootstrap interval)")
    df = ctx.table
    da = df[df.name == a].set_index("alpha")
    db = df[df.name == b].set_index("alpha")
    alphas = sorted(set(da.index.dropna()) & set(db.index.dropna()))
    if not alphas:
        return Outcome(desc, "no common α", vd.NOT_RUN)
    if column != "eta":
        missing = _not_run([r for _, r in pd.concat([da, db]).reset_index().iterrows()])
        if missing:
            return Outcome(desc, f"not run: {', '.join(missing)}", vd.NOT_RUN)
    parts = []
    for al in alphas:
        ra, rb = da[da.index == al].iloc[0], db[db.index == al].iloc[0]
        if column == "eta":
            iv = exact(float(ra.eta) / float(rb.eta))
            parts.append(Part(f"α={al:g} η {_g(ra.eta)} vs {_g(rb.eta)}: ratio", iv, 1.0, "below"))
        else:
            parts.append(Part(f"α={al:g}: ratio", _ratio(ctx, ra, rb), 1.0, "below"))
    return outcome(desc, parts, ctx.min_runs, show="all")


# ---------------------------------------------------------------------------------------------------
# §5.3 and E.2: pairwise comparisons of final regret


def _means(ra, rb) -> str:
    return f"mean final regret {_g(ra.mean_final_regret)} vs {_g(rb.mean_final_regret)}"


@test("dp-slightly-better", keys=("a", "b"), tolerance=("max_ratio",))
def _slightly_better(ctx, a: str, b: str, max_ratio: float = 1.5):
    ra, rb = _row(ctx, a), _row(ctx, b)
    desc = ctx.describe(f"ratio of mean final regrets {rb.label} / {ra.label} in (1, {max_ratio:g}]: {ra.label} "
                        f"lower, by a small gap (95 % paired bootstrap interval inside)")
    missing = _not_run([ra, rb])
    if missing:
        return Outcome(desc, f"not run: {', '.join(missing)}", vd.NOT_RUN)
    iv = _ratio(ctx, rb, ra)
    T = int(ra.horizon)
    gap = float(rb.mean_final_regret - ra.mean_final_regret)
    verdict = vd.decide_within(iv, 1.0, max_ratio)
    if verdict == vd.REPRODUCED and iv.low <= 1.0:
        verdict = vd.INCONCLUSIVE  # a tie is not "slightly better"
    be = (f"break-even tolerance: reproduced for a gap factor ≥ {_g(iv.high)}, not reproduced below {_g(iv.low)}"
          if iv.low > 1 else "the interval reaches 1: no tolerance makes it reproduced")
    measured = f"ratio {fmt_iv(iv)}; {_means(ra, rb)}, gap {_g(gap)} = {gap / T:.3%} of T; {be}"
    if verdict == vd.INCONCLUSIVE:
        bound = 1.0 if iv.low <= 1 else max_ratio
        measured += f"; {vd.settle_note(iv, bound, ctx.min_runs)}"
    return Outcome(desc, measured, verdict, iv.low, iv.high)


@test("dp-significantly-better", keys=("a", "b"), tolerance=("max_ratio",))
def _significantly_better(ctx, a: str, b: str, max_ratio: float = 1.0):
    ra, rb = _row(ctx, a), _row(ctx, b)
    desc = ctx.describe(f"ratio of mean final regrets {ra.label} / {rb.label} < {max_ratio:g} (95 % paired "
                        "bootstrap interval below)")
    missing = _not_run([ra, rb])
    if missing:
        return Outcome(desc, f"not run: {', '.join(missing)}", vd.NOT_RUN)
    parts = [Part("ratio", _ratio(ctx, ra, rb), max_ratio, "below")]
    iv = parts[0].iv
    return outcome(desc, parts, ctx.min_runs, show="all",
                   tail=f"{_means(ra, rb)}; break-even tolerance: reproduced for a ratio bound > {_g(iv.high)}, "
                        f"not reproduced for a bound < {_g(iv.low)}")


@test("dp-beats-all", keys=("a", "b"))
def _beats_all(ctx, a: str, b: list, worse: bool = False):
    ra = _row(ctx, a)
    others = [_row(ctx, k) for k in b]
    rel = "> 1" if worse else "< 1"
    desc = ctx.describe(f"ratio of mean final regrets {ra.label} / each of " + ", ".join(r.label for r in others)
                        + f" {rel} (95 % paired bootstrap intervals)")
    missing = _not_run([ra, *others])
    if missing:
        return Outcome(desc, f"not run: {', '.join(missing)}", vd.NOT_RUN)
    parts = [Part(f"vs {r.label}", _ratio(ctx, ra, r), 1.0, "above" if worse else "below") for r in others]
    return outcome(desc, parts, ctx.min_runs, show="all")


# ---------------------------------------------------------------------------------------------------
# E.1: equal-privacy c and the best b


@test("dp-c-matches-rule", tolerance=("rel_tol",))
def _c_matches(ctx, rel_tol: float = 0.005):
    rule = ctx.fig.extra.get("c_rule", {})
    desc = ctx.describe(f"formula check: the largest relative difference between an M-TS-Gaussian c of the "
                        f"manifest and the figure's c rule ({rule.get('kind', 'none')} at T = "
                        f"{rule.get('design_horizon', 'n/a')}) is ≤ {rel_tol:.2%}")
    df = ctx.table[ctx.table.name == "m-ts-gaussian"]
    if "c_rel_diff" not in df.columns or df.empty:
        return Outcome(desc, "no M-TS-Gaussian line with a c rule", vd.NOT_RUN)
    worst = df.loc[df.c_rel_diff.idxmax()]
    n_ok = int((df.c_rel_diff <= rel_tol).sum())
    measured = (f"{n_ok}/{len(df)} within tolerance; largest difference {worst.c_rel_diff:.3%} = the break-even "
                f"tolerance ({worst.label}: formula {_g(worst.c_formula)})")
    return _formula(desc, float(worst.c_rel_diff), rel_tol, "at_most", measured)


@test("dp-best-b")
def _best_b(ctx, panel: int, b: int):
    df = ctx.table[(ctx.table.panel_index == panel) & (ctx.table.name == "m-ts-gaussian")]
    title = ctx.fig.panels[panel].title if panel < len(ctx.fig.panels) else str(panel)
    desc = ctx.describe(
        f"in panel {title}: ratio of mean final regrets M-TS-Gaussian(b = {b}) / each other M-TS-Gaussian line "
        "< 1 (95 % paired bootstrap intervals). Lines whose pre-pull regret alone (b'·Σ_i Δ_i) exceeds the "
        f"upper limit of b = {b}'s mean lose by construction: listed, not counted")
    if df.empty:
        return Outcome(desc, "no M-TS-Gaussian line in that panel", vd.NOT_RUN)
    missing = _not_run([r for _, r in df.iterrows()])
    if missing:
        return Outcome(desc, f"not run: {', '.join(missing)}", vd.NOT_RUN)
    target = df[df.b.astype(float) == float(b)]
    if target.empty:
        return Outcome(desc, f"no line with b = {b}", vd.NOT_RUN)
    rt = target.iloc[0]
    mu = _prepared_means(ctx, rt.dataset)
    if mu is None:
        raise NotRun(f"prepared instance {rt.dataset} not found (needed for the pre-pull regret)")
    gaps = float(np.sum(mu.max() - mu))
    K, T = mu.size, int(rt.horizon)
    parts, forced = [], []
    for _, r in df[df.algorithm != rt.algorithm].sort_values("b").iterrows():
        floor = gaps * min(float(r.b), T / K)
        if floor > float(rt.ci95_high):
            forced.append(f"b={int(r.b)} (pre-pull regret ≥ {_g(floor)})")
            continue
        parts.append(Part(f"vs b={int(r.b)}", _ratio(ctx, rt, r), 1.0, "below"))
    head = f"b = {b}: mean final regret {_g(rt.mean_final_regret)}"
    tail = ("lose by construction (not counted): " + ", ".join(forced)) if forced else ""
    if not parts:
        return Outcome(desc, f"{head}; every other line loses by construction ({tail}): formula check only",
                       vd.REPRODUCED, math.nan, math.nan)
    return outcome(desc, parts, ctx.min_runs, show="all", head=head, tail=tail)


# ---------------------------------------------------------------------------------------------------
# Table 1


@test("dp-gdp-improves")
def _gdp_improves(ctx, a: str, b: str):
    t = ctx.table
    ra, rb = t[t.label == a], t[t.label == b]
    desc = ctx.describe(f"formula check: at the table's horizon, η of {a} / η of {b} (theorems' constants) < 1; "
                        "also the horizon from which this holds")
    if ra.empty or rb.empty:
        return Outcome(desc, f"rows {a!r} / {b!r} not in the table", vd.NOT_RUN)
    ra, rb = ra.iloc[-1], rb.iloc[-1]
    va, vb = float(ra.eta_with_constants), float(rb.eta_with_constants)
    k = vb / math.sqrt(float(ra.horizon))  # the baseline's η as k·√T (TS-Gaussian: k = 1 or √0.5)
    cross = _crossover_sqrt(k)
    measured = (f"T = {int(ra.horizon):,}: η = {_g(va)} vs {_g(vb)}, ratio {_g(va / vb)}; η_DP-TS-UCB(α=0) = "
                f"√(2c0 T^0.5 ln^1.5 T) < {'' if abs(k - 1) < 1e-9 else _g(k) + '·'}√T once T > {_g(cross)}")
    return _formula(desc, va / vb, 1.0, "below", measured)


def _crossover_sqrt(k: float) -> float:
    """The T above which √(2 c0 T^0.5 ln^1.5 T) < k·√T: ln(2c0) + 1.5 ln L − 0.5 L − 2 ln k = 0, L = ln T."""
    from scipy.optimize import brentq

    f = lambda x: math.log(2 * pv.C0) + 1.5 * math.log(x) - 0.5 * x - 2 * math.log(k)  # noqa: E731
    return math.exp(brentq(f, 10.0, 400.0))


# ====================================================================================================
# studies: privacy and regret at one scale. Tests return banditrepro.verdicts.Outcome.


@test("dp_frontier_dominated")
def _frontier_dominated(ctx, points: list[str], by: list[str]):
    """Each line of ``points`` is Pareto-dominated by some line of ``by``: that line's ε at the table's δ is no
    larger, and its mean final regret is lower (the paired bootstrap 95 % interval of the ratio by/point lies
    below 1). Not dominated: every line of ``by`` with no larger ε is significantly worse (interval above 1),
    or none has a small enough ε."""
    if EPS_AT_DELTA not in ctx.table:
        raise ReproError(f"{ctx.fig.stem}: dp_frontier_dominated needs a dp-frontier table ({EPS_AT_DELTA})")
    panel = ctx.fig.panels[0]
    delta = float(ctx.fig.extra.get("delta", 1e-5))
    desc = (f"each of {', '.join(ctx.label(k) for k in points)} is dominated by a line of the (ε, 0)-DP grid with "
            f"ε ≤ its ε at δ = {delta:g} and lower mean final regret (paired bootstrap 95 % interval of the regret "
            f"ratio below 1)")
    rows = {k: _row(ctx, k) for k in points + by}
    if any(r.status != "ok" for r in rows.values()):
        return Outcome(desc, "lines did not run: " + ", ".join(k for k, r in rows.items() if r.status != "ok"),
                       vd.NOT_RUN)
    parts, undominated, notes = [], [], []
    for k in points:
        eps = float(rows[k][EPS_AT_DELTA])
        cands = [b for b in by if float(rows[b][EPS_AT_DELTA]) <= eps]
        if not cands:  # nothing can dominate it: a contradicted part with no finite ratio (listed last)
            undominated.append(Part(f"{ctx.label(k)} (ε = {eps:.4g}): no line of the grid has ε ≤ {eps:.4g}, ratio",
                                    Interval(math.inf, math.inf, math.inf), 1.0, "below"))
            continue
        scored = [(ctx.ratio(ctx.finals(panel, b), ctx.finals(panel, k), seed=vd.seed_of(ctx.fig.stem, b, k)), b)
                  for b in cands]
        best_iv, best = min(scored, key=lambda x: x[0].high)
        # dominated if some candidate's interval lies below 1, not if every candidate's lies above: the smallest
        # ratio over the candidates, with the smallest lower and the smallest upper limit, decides exactly so
        iv = Interval(min(x.estimate for x, _ in scored), min(x.low for x, _ in scored), best_iv.high)
        parts.append(Part(f"{ctx.label(k)} (ε = {eps:.4g}, R = {float(rows[k].mean_final_regret):.4g}): smallest "
                          f"regret ratio dominator / it over the {len(cands)} lines with ε ≤ its ε", iv, 1.0, "below"))
        notes.append(f"{ctx.label(k)}: best dominator {ctx.label(best)} (ε = {float(rows[best][EPS_AT_DELTA]):g}), "
                     f"ratio {best_iv}")
    return outcome(desc, parts + undominated, ctx.min_runs, show="all", tail="; ".join(notes))
