"""Claim tests of the Winner Stays paper (registered with banditrepro.claims.test).

They read the ``ws-curves`` figures panel by panel (index, panel, metric), so one dataset may appear under
several metrics (Fig. 3's 2×2 grid) without ambiguity, and decide on intervals: ratios of mean final regrets
from the per-run finals of the summaries (paired bootstrap), late shares (share of R(T) accrued over
t in (T/2, T]) from the per-run curves of the cells.
"""

from __future__ import annotations

import math

import numpy as np

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.claims.context import Context
from banditrepro.claims.parts import Part, fmt, outcome
from banditrepro.claims.registry import test
from banditrepro.figures.panels import panel_metrics, panel_status
from banditrepro.papers.winner_stays import figures as ws
from banditrepro.verdicts import Interval, Outcome


def _panels(ctx: Context, metrics=None) -> tuple[list[tuple[int, object, str]], list[str]]:
    """(index, panel, metric) of the panels whose metric is in ``metrics`` (all if None) and that ran,
    and the datasets of those that did not run."""
    if isinstance(metrics, str):
        metrics = [metrics]
    chosen = [(k, p, m) for k, (p, m) in enumerate(zip(ctx.fig.panels, panel_metrics(ctx.fig)))
              if metrics is None or m in metrics]
    ran = [c for c in chosen if panel_status(c[1].dataset, ctx.layout)[0]]
    missing = sorted({c[1].dataset for c in chosen if c not in ran})
    return ran, missing


def _where(panel, metric) -> str:
    return f"{panel.dataset}/{metric.replace('_regret', '')}"


def _missing(missing):
    return f"not run: {', '.join(missing)}" if missing else ""


@test("ws_flat_and_below", keys=("a", "others"), tolerance=("flat",))
def _flat_and_below(ctx: Context, a: str, others: list[str], metric: str | None = None, flat: float = 0.1):
    """WS-W's weak regret "is constant in t" (≤ ``flat`` of R(T) accrues over (T/2, T]) and its mean final
    value is below every algorithm of ``others``, on every panel with ``metric``."""
    ran, missing = _panels(ctx, metric)
    la = ctx.label(a)
    names = ", ".join(ctx.label(b) for b in others)
    desc = ctx.describe(
        f"on every panel{f' with {metric}' if metric else ''}: share of {la}'s mean final regret accrued over "
        f"t in (T/2, T] ≤ {flat:g} (flat), and ratio of mean final regrets {la} / each of {names} < 1 (95 % "
        "bootstrap intervals)")
    if not ran:
        return Outcome(desc, "no panel ran; " + _missing(missing), vd.NOT_RUN)
    parts, lates = [], []
    for _, p, m in ran:
        late = Part(f"{_where(p, m)} late share", ctx.late_share(p, a, m), flat, "below")
        lates.append(late)
        parts.append(late)
        parts += [Part(f"{_where(p, m)} {la}/{ctx.label(b)}", ctx.panel_ratio(p, a, b, m), 1.0, "below")
                  for b in others]
    hi = max(q.iv.high for q in lates)
    lo = max(q.iv.low for q in lates)
    be = f"break-even flatness tolerance: flat part reproduced for ≥ {fmt(hi)}, not reproduced below {fmt(lo)}"
    return outcome(desc, parts, ctx.min_runs, show="all", tail="; ".join(x for x in (be, _missing(missing)) if x))


@test("ws_beats_all", keys=("a", "others"))
def _beats_all(ctx: Context, a: str, others: list[str], metrics=None):
    """``a`` has a lower mean final regret than every algorithm of ``others`` on every panel."""
    ran, missing = _panels(ctx, metrics)
    la = ctx.label(a)
    desc = ctx.describe(f"ratio of mean final regrets {la} / each of {len(others)} benchmarks "
                        f"({', '.join(ctx.label(b) for b in others)}) < 1 on every panel (dataset × regret "
                        "variant; 95 % paired bootstrap intervals)")
    if not ran:
        return Outcome(desc, "no panel ran; " + _missing(missing), vd.NOT_RUN)
    parts = [Part(f"{_where(p, m)} vs {ctx.label(b)}", ctx.panel_ratio(p, a, b, m), 1.0, "below")
             for k, p, m in ran for b in others]
    return outcome(desc, parts, ctx.min_runs, head=f"(panel, benchmark) pairs, ratio {la}/benchmark",
                   tail=_missing(missing))


@test("ws_beta_pattern", keys=("keys",))
def _beta_pattern(ctx: Context, keys: list[str], metrics=None):
    """``keys`` are WS-S lines in increasing β. "β too close to 1 explores too long; β too large pays in early
    exploitation": the best β lies inside the grid. Measured per panel: D = min(R(β_min), R(β_max)) /
    min over interior β of R(β) (mean final regrets; the minimum is taken inside every bootstrap resample,
    so picking the best β is part of the interval); the claim needs D > 1. Also β_min still accrues a larger
    share of its regret over (T/2, T] than the best interior β (late-share difference > 0)."""
    if len(keys) < 3:
        raise ReproError(f"{ctx.fig.stem}: ws_beta_pattern needs at least 3 β values")
    ran, missing = _panels(ctx, metrics)
    lo, hi = ctx.label(keys[0]), ctx.label(keys[-1])
    desc = ctx.describe(
        f"on every panel: D = min(R({lo}), R({hi})) / min over the interior β of R > 1 (an interior β beats both "
        f"ends; 95 % paired bootstrap interval, best β chosen inside each resample), and {lo}'s late share "
        "(over t in (T/2, T]) minus the best interior β's > 0")
    if not ran:
        return Outcome(desc, "no panel ran; " + _missing(missing), vd.NOT_RUN)
    parts, notes = [], []
    for k, p, m in ran:
        runs = [ctx.finals(p, key, m) for key in keys]
        xs = ctx.paired(*runs)

        def d_stat(*cols):
            means = [c.mean(axis=1) for c in cols]
            return np.minimum(means[0], means[-1]) / np.maximum(np.min(means[1:-1], axis=0), 1e-300)

        iv = (vd.bootstrap(d_stat, *xs, seed=ctx.seed("D", k)) if xs[0].size > 1
              else vd.Interval(float(d_stat(*[x[None, :] for x in xs])[0]), -math.inf, math.inf))
        parts.append(Part(f"{_where(p, m)} D", iv, 1.0, "above"))
        means = [float(x.mean()) for x in xs]
        best = keys[1 + int(np.argmin(means[1:-1]))]
        diff = ctx.late_share(p, keys[0], m, minus=best)
        parts.append(Part(f"{_where(p, m)} late share {lo} − {ctx.label(best)}", diff, 0.0, "above"))
        notes.append(f"{_where(p, m)}: finals [{', '.join(fmt(v) for v in means)}], grid best "
                     f"{ctx.label(keys[int(np.argmin(means))])}")
    return outcome(desc, parts, ctx.min_runs, show="all",
                   tail="; ".join(x for x in ("; ".join(notes), _missing(missing)) if x))


# ====================================================================================================
# studies: where is β best? Tests return banditrepro.verdicts.Outcome.


def _arms(ctx: Context, dataset: str) -> int | None:
    import json
    from pathlib import Path

    path = Path(ctx.layout.prepared_file(dataset))
    return len(json.loads(path.read_text())["matrix"]) if path.exists() else None


@test("ws_beta_advice")
def _beta_advice(ctx: Context, advised: float, near: list[float], max_arms: int = 20, metrics=None):
    """The supplement's advice "β ≈ ``advised`` for up to ``max_arms`` arms", on the ``ws-beta`` table: on every
    panel with ≤ max_arms arms, the grid's minimiser of mean final regret, with its 95 % bootstrap interval
    over runs (argmin of resampled means), must lie within ``near`` (what "≈" means)."""
    lo, hi = float(near[0]), float(near[1])
    if not lo <= advised <= hi:
        raise ReproError(f"{ctx.fig.stem}: ws_beta_advice: advised β {advised:g} outside near [{lo:g}, {hi:g}]")
    if ws.MINIMISER_BETA not in ctx.table:
        raise ReproError(f"{ctx.fig.stem}: ws_beta_advice needs a ws-beta table (minimiser columns)")
    ran, missing = _panels(ctx, metrics)
    desc = (f"on every panel with ≤ {max_arms} arms: the β minimising WS-S's mean final regret, with its 95 % "
            f"bootstrap interval over runs, lies within [{lo:g}, {hi:g}] (β ≈ {advised:g})")
    ran = [c for c in ran if (_arms(ctx, c[1].dataset) or 0) <= max_arms]
    if not ran:
        return Outcome(desc, f"no panel with ≤ {max_arms} arms ran" + _missing(missing), vd.NOT_RUN)
    t = ctx.table
    parts, shares = [], []
    for k, p, m in ran:
        row = t[t[ws.PANEL_INDEX] == k].iloc[0]
        iv = Interval(float(row[ws.MINIMISER_BETA]), float(row[ws.MINIMISER_LOW]), float(row[ws.MINIMISER_HIGH]))
        parts.append(Part(f"{_where(p, m)} (K = {_arms(ctx, p.dataset)}, {int(row.runs)} runs): β*", iv, lo,
                          "within", hi))
        share = t[(t[ws.PANEL_INDEX] == k) & (t[ws.BETA] == advised)][ws.ARGMIN_SHARE]
        if len(share):
            shares.append(f"{_where(p, m)}: β = {advised:g} is the argmin in {float(share.iloc[0]):.0%} of resamples")
    # break-even: the widest "≈" the verdict needs (the union of the minimiser intervals)
    span = (min(q.iv.low for q in parts), max(q.iv.high for q in parts))
    tail = [*shares, f"\"≈ {advised:g}\" would have to cover [{span[0]:g}, {span[1]:g}] to hold everywhere"]
    tail += [_missing(missing)] if missing else []
    return outcome(desc, parts, ctx.min_runs, show="all", tail="; ".join(tail))
