"""The claim tests that name no paper: ``beats``, ``comparable`` (ratios of mean final regrets per panel) and
``late_growth`` (one line still growing over (T/2, T] where it beats a flat one)."""

from __future__ import annotations

import math

from banditrepro import verdicts as vd
from banditrepro.claims.context import Context
from banditrepro.claims.parts import Part, fmt, outcome, part_text
from banditrepro.claims.registry import test
from banditrepro.verdicts import Outcome


def _missing_note(missing: list[str]) -> str:
    return f"not run: {', '.join(missing)} (requires network access)" if missing else ""


def _not_run(desc: str, why: str) -> Outcome:
    return Outcome(desc, why, vd.NOT_RUN)


@test("beats", keys=("a", "b"))
def _beats(ctx: Context, a: str, b: str, panels="all", min_fraction: float = 1.0, strict_majority=False):
    """mean final regret of a < b: per panel the paired ratio a/b with its interval must lie below 1."""
    ran, missing = ctx.panels(panels)
    la, lb = ctx.label(a), ctx.label(b)
    need_txt = "on more than half of the panels" if strict_majority else (
        "on every panel" if min_fraction >= 1 else f"on at least {min_fraction:.0%} of the panels")
    desc = ctx.describe(f"ratio of mean final regrets {la} / {lb} < 1 (95 % paired bootstrap interval) {need_txt}")
    if not ran:
        return _not_run(desc, "no panel ran; " + _missing_note(missing))
    parts = [Part(p.dataset, ctx.panel_ratio(p, a, b), 1.0, "below") for p in ran]
    n = len(parts)
    need = n // 2 + 1 if strict_majority else max(1, math.ceil(min_fraction * n - 1e-9))
    return outcome(desc, parts, ctx.min_runs, need=need, show="all", tail=_missing_note(missing))


def break_even_within(parts: list[Part]) -> str:
    """For "ratio within [1/r, r]" on every part: reproduced for r ≥ r_rep, not reproduced for r < r_nr."""
    r_rep = max(max(p.iv.high, 1 / p.iv.low if p.iv.low > 0 else math.inf) for p in parts)
    r_nr = max(max(p.iv.low, 1 / p.iv.high if p.iv.high > 0 else math.inf) for p in parts)
    txt = f"break-even tolerance: reproduced for a factor ≥ {fmt(r_rep)}"
    if r_nr > 1:
        txt += f", not reproduced for a factor < {fmt(r_nr)}"
    return txt


@test("comparable", keys=("a", "b"), tolerance=("ratio",))
def _comparable(ctx: Context, a: str, b: str, panels="all", ratio: float = 1.5):
    ran, missing = ctx.panels(panels)
    la, lb = ctx.label(a), ctx.label(b)
    desc = ctx.describe(f"ratio of mean final regrets {la} / {lb} within [1/{ratio:g}, {ratio:g}] (95 % paired "
                        "bootstrap interval inside) on every panel")
    if not ran:
        return _not_run(desc, "no panel ran; " + _missing_note(missing))
    parts = [Part(p.dataset, ctx.panel_ratio(p, a, b), 1 / ratio, "within", ratio) for p in ran]
    return outcome(desc, parts, ctx.min_runs, show="all",
                   tail="; ".join(x for x in (break_even_within(parts), _missing_note(missing)) if x))


@test("late_growth", keys=("a", "b"), tolerance=("flat",))
def _late_growth(ctx: Context, a: str, b: str, flat: float = 0.1, panels="all"):
    """Premise: b beats a (ratio b/a < 1 with its interval). Where it does, b still accrues > flat of its
    regret over (T/2, T] while a accrues ≤ flat ("keeps growing" vs "flat"). No panel where the premise
    holds or is open: vacuous."""
    ran, missing = ctx.panels(panels)
    la, lb = ctx.label(a), ctx.label(b)
    desc = ctx.describe(
        f"premise: ratio {lb} / {la} of mean final regrets < 1 (interval below 1). Where it holds: share of "
        f"final regret accrued over t in (T/2, T] > {flat:g} for {lb} and ≤ {flat:g} for {la} (intervals)")
    if not ran:
        return _not_run(desc, "no panel ran; " + _missing_note(missing))
    premise = [Part(p.dataset, ctx.panel_ratio(p, b, a), 1.0, "below") for p in ran]
    wins = [p for p, q in zip(ran, premise) if q.verdict == vd.REPRODUCED]
    open_ = [q for q in premise if q.verdict == vd.INCONCLUSIVE]
    prem_txt = f"ratio {lb}/{la}: " + "; ".join(part_text(q) for q in premise)
    if not wins and not open_:
        lo = min(q.iv.low for q in premise)
        return Outcome(desc, f"premise never occurs: {lb} beats {la} on no panel (lowest lower limit of the "
                       f"ratio {fmt(lo)} > 1); {prem_txt}" + (f"; {_missing_note(missing)}" if missing else ""),
                       vd.VACUOUS, lo, min(q.iv.high for q in premise))
    parts = []
    for p in wins:
        parts.append(Part(f"{p.dataset} late share {lb}", ctx.late_share(p, b), flat, "above"))
        parts.append(Part(f"{p.dataset} late share {la}", ctx.late_share(p, a), flat, "below"))
    parts += [Part(f"{q.name} premise {lb}/{la}", q.iv, 1.0, "below") for q in open_]
    be = ""
    if wins:
        flat_hi = max(q.iv.high for q in parts if q.side == "below" and "late share" in q.name)
        grow_lo = min(q.iv.low for q in parts if q.side == "above")
        be = (f"break-even tolerance: {la} flat for a tolerance ≥ {fmt(flat_hi)}, {lb} still growing for a "
              f"tolerance < {fmt(grow_lo)}")
    return outcome(desc, parts, ctx.min_runs, show="all", head=f"premise holds on {len(wins)}/{len(ran)} panels",
                   tail="; ".join(x for x in (be, _missing_note(missing)) if x))


# paper-specific tests register themselves with @test(kind) in their own modules
