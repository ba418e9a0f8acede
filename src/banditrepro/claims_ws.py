"""Claim tests of the Winner Stays paper (registered with banditrepro.claims.test).

They read the ``ws-curves`` tables, whose rows carry the panel index, the panel's metric, the mean
final regret and ``late_share`` (share of R(T) accrued over t in (T/2, T]), so one dataset may appear
under several metrics (Fig. 3's 2×2 grid) without ambiguity.
"""

from __future__ import annotations

import pandas as pd

from banditrepro import ReproError
from banditrepro.claims import Context, test
from banditrepro.figures import panel_status


def _panels(ctx: Context, metrics=None) -> tuple[list[tuple[int, object, str]], list[str]]:
    """(index, panel, metric) of the panels whose metric is in ``metrics`` (all if None) and that ran,
    and the datasets of those that did not run."""
    from banditrepro.figures_ws import panel_metrics

    if isinstance(metrics, str):
        metrics = [metrics]
    chosen = [(k, p, m) for k, (p, m) in enumerate(zip(ctx.fig.panels, panel_metrics(ctx.fig)))
              if metrics is None or m in metrics]
    ran = [c for c in chosen if panel_status(c[1].dataset, ctx.status_dir)[0]]
    missing = sorted({c[1].dataset for c in chosen if c not in ran})
    return ran, missing


def _row(ctx: Context, k: int, key: str) -> pd.Series:
    rows = ctx.table[(ctx.table.panel_index == k) & (ctx.table.algorithm == key)]
    if rows.empty:
        raise ReproError(f"{ctx.fig.stem}: no row for {key} in panel {k}")
    return rows.iloc[0]


def _final(ctx, k, key) -> float:
    return float(_row(ctx, k, key).mean_final_regret)


def _late(ctx, k, key) -> float:
    return float(_row(ctx, k, key).late_share)


def _where(panel, metric) -> str:
    return f"{panel.dataset}/{metric.replace('_regret', '')}"


def _missing(missing):
    return f"; not run: {', '.join(missing)}" if missing else ""


@test("ws_flat_and_below")
def _flat_and_below(ctx: Context, a: str, others: list[str], metric: str | None = None, flat: float = 0.1):
    """WS-W's weak regret "is constant in t" (≤ ``flat`` of R(T) accrues over (T/2, T]) and its mean final
    value is below every algorithm of ``others``, on every panel with ``metric``."""
    ran, missing = _panels(ctx, metric)
    la = ctx.label(a)
    names = ", ".join(ctx.label(b) for b in others)
    desc = (f"on every panel{f' with {metric}' if metric else ''}: share of {la}'s final regret accrued over "
            f"t in (T/2, T] ≤ {flat:g} (flat), and {la}'s mean final regret < that of {names}")
    if not ran:
        return desc, "no panel ran" + _missing(missing), "not-run"
    ok = True
    parts = []
    for k, p, m in ran:
        fa, share = _final(ctx, k, a), _late(ctx, k, a)
        is_flat = share <= flat
        below = {b: fa < _final(ctx, k, b) for b in others}
        ok &= is_flat and all(below.values())
        cmp = ", ".join(f"{ctx.label(b)} {_final(ctx, k, b):.4g}{'' if below[b] else ' (not above)'}"
                        for b in others)
        parts.append(f"{_where(p, m)}: {la} {fa:.4g}, late share {share:.2f}"
                     f"{'' if is_flat else ' (not flat)'}; {cmp}")
    return desc, "; ".join(parts) + _missing(missing), "pass" if ok else "fail"


@test("ws_beats_all")
def _beats_all(ctx: Context, a: str, others: list[str], metrics=None):
    """``a`` has the lowest mean final regret against every algorithm of ``others`` on every panel."""
    ran, missing = _panels(ctx, metrics)
    la = ctx.label(a)
    desc = (f"mean final regret of {la} < that of each of {len(others)} benchmarks "
            f"({', '.join(ctx.label(b) for b in others)}) on every panel (dataset × regret variant)")
    if not ran:
        return desc, "no panel ran" + _missing(missing), "not-run"
    losses = []
    wins = 0
    for k, p, m in ran:
        fa = _final(ctx, k, a)
        for b in others:
            fb = _final(ctx, k, b)
            if fa < fb:
                wins += 1
            else:
                losses.append(f"{_where(p, m)}: {ctx.label(b)} {fb:.4g} ≤ {la} {fa:.4g}")
    total = len(ran) * len(others)
    measured = f"{la} lower in {wins}/{total} (panel, benchmark) pairs"
    if losses:
        measured += "; not lower: " + "; ".join(losses)
    return desc, measured + _missing(missing), "pass" if not losses else "fail"


@test("ws_beta_pattern")
def _beta_pattern(ctx: Context, keys: list[str], metrics=None):
    """``keys`` are WS-S lines in increasing β. "Too small β explores too long": the smallest β ends with
    more regret than the best β of the grid and is still accruing it (larger late share). "Too large β
    pays in early exploitation": the largest β ends with more regret than the best β. Together: the
    best β is inside the grid."""
    if len(keys) < 3:
        raise ReproError(f"{ctx.fig.stem}: ws_beta_pattern needs at least 3 β values")
    ran, missing = _panels(ctx, metrics)
    lo, hi = ctx.label(keys[0]), ctx.label(keys[-1])
    desc = (f"on every panel, with β* the grid's minimiser of mean final regret: {lo} ends above β* and accrues "
            f"a larger share of its regret over (T/2, T] than β* (explores too long), and {hi} ends above β*")
    if not ran:
        return desc, "no panel ran" + _missing(missing), "not-run"
    ok = True
    parts = []
    for k, p, m in ran:
        finals = {b: _final(ctx, k, b) for b in keys}
        best = min(keys, key=lambda b: finals[b])
        small = finals[keys[0]] > finals[best] and _late(ctx, k, keys[0]) > _late(ctx, k, best)
        large = finals[keys[-1]] > finals[best]
        ok &= small and large
        curve = ", ".join(f"{finals[b]:.4g}" for b in keys)
        parts.append(f"{_where(p, m)}: finals [{curve}], best {ctx.label(best)}, late share "
                     f"{_late(ctx, k, keys[0]):.2f} vs {_late(ctx, k, best):.2f}; small-β side "
                     f"{'holds' if small else 'fails'}, large-β side {'holds' if large else 'fails'}")
    return desc, "; ".join(parts) + _missing(missing), "pass" if ok else "fail"


# ====================================================================================================
# studies (issue 10 §2): where is β best? Tests return banditrepro.verdicts.Outcome.


def _arms(ctx: Context, dataset: str) -> int | None:
    import json
    from pathlib import Path

    path = Path(ctx.prepared_dir) / f"{dataset}.json"
    return len(json.loads(path.read_text())["matrix"]) if path.exists() else None


@test("ws_beta_advice")
def _beta_advice(ctx: Context, advised: float, near: list[float], max_arms: int = 20, metrics=None):
    """The supplement's advice "β ≈ ``advised`` for up to ``max_arms`` arms", on the ``ws-beta`` table: on every
    panel with ≤ max_arms arms, the grid's minimiser of mean final regret, with its 95 % bootstrap interval
    over runs (argmin of resampled means), must lie within ``near`` (what "≈" means)."""
    from banditrepro.verdicts import NOT_RUN, Interval, Outcome, combine, decide_within

    lo, hi = float(near[0]), float(near[1])
    if not lo <= advised <= hi:
        raise ReproError(f"{ctx.fig.stem}: ws_beta_advice: advised β {advised:g} outside near [{lo:g}, {hi:g}]")
    if "minimiser_beta" not in ctx.table:
        raise ReproError(f"{ctx.fig.stem}: ws_beta_advice needs a ws-beta table (minimiser columns)")
    ran, missing = _panels(ctx, metrics)
    desc = (f"on every panel with ≤ {max_arms} arms: the β minimising WS-S's mean final regret, with its 95 % "
            f"bootstrap interval over runs, lies within [{lo:g}, {hi:g}] (β ≈ {advised:g})")
    ran = [c for c in ran if (_arms(ctx, c[1].dataset) or 0) <= max_arms]
    if not ran:
        return Outcome(desc, f"no panel with ≤ {max_arms} arms ran" + _missing(missing), NOT_RUN)
    parts, decided = [], []
    for k, p, m in ran:
        row = ctx.table[ctx.table.panel_index == k].iloc[0]
        iv = Interval(float(row.minimiser_beta), float(row.minimiser_ci_low), float(row.minimiser_ci_high))
        share = ctx.table[(ctx.table.panel_index == k) & (ctx.table.beta == advised)].argmin_share
        share_txt = f", β = {advised:g} is the argmin in {float(share.iloc[0]):.0%} of resamples" if len(share) else ""
        v = decide_within(iv, lo, hi)
        decided.append((v, iv))
        parts.append(f"{_where(p, m)} (K = {_arms(ctx, p.dataset)}): β* = {iv.estimate:g} [{iv.low:g}, {iv.high:g}]"
                     f"{share_txt}, {int(row.runs)} runs → {v}")
    verdict = combine(v for v, _ in decided)
    # break-even: the widest "≈" the verdict needs (the union of the minimiser intervals)
    span = (min(iv.low for _, iv in decided), max(iv.high for _, iv in decided))
    iv = next((iv for v, iv in decided if v == verdict), decided[0][1])
    measured = "; ".join(parts) + (f"; \"≈ {advised:g}\" would have to cover [{span[0]:g}, {span[1]:g}] to hold "
                                   "everywhere")
    return Outcome(desc, measured + _missing(missing), verdict, iv.low, iv.high)
