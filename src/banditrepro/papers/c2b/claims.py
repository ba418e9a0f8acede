"""Claim tests of the C2B studies beyond the paper's figures (registered with banditrepro.claims.test).

``c2b_rounds_needed`` answers the paper's question (ii) (§4: "how many rounds suffice?") on the
``c2b-rounds`` figure: per panel, the ratio of C2B-KL's mean final regret to a reference's (RUCB, RMED1) with a
paired percentile-bootstrap 95 % interval over runs (runs with the same index share random numbers). C2B-KL
*reaches* the reference at B when that interval's lower end is ≤ 1 (it is no longer significantly worse);
the smallest such B of the sweep is reported, or "not within B ≤ <largest B>".
"""

from __future__ import annotations

from banditrepro import ReproError
from banditrepro.claims.context import Context
from banditrepro.claims.generic import break_even_within
from banditrepro.claims.parts import Part, outcome
from banditrepro.claims.registry import test
from banditrepro.papers.c2b.figures import line_batches, roles
from banditrepro.verdicts import NOT_RUN, Interval, Outcome, seed_of


def _ratio(ctx: Context, panel, a: str, b: str) -> Interval:
    """Paired ratio of mean final regrets a / b on one panel (seeded by figure, panel and lines only, so the
    sweep's intervals do not depend on which claim asks)."""
    return ctx.ratio(ctx.finals(panel, a), ctx.finals(panel, b),
                     seed=seed_of(ctx.fig.stem, panel.dataset, panel.horizon, a, b))


@test("c2b_rounds_needed")
def _rounds_needed(ctx: Context, reference: str, claim_key: str, mode: str = "beats", ratio: float = 1.5,
                   panels="all") -> Outcome:
    """The smallest B at which C2B-KL reaches ``reference`` (measured), and the verdict on the paper's
    statement about B = ⌊ln T⌋ + 6 (``claim_key``): ``mode: beats`` ("always outperforms": the ratio interval
    lies below 1) or ``mode: comparable`` (the ratio interval lies within [1/ratio, ratio])."""
    if mode not in ("beats", "comparable"):
        raise ReproError(f"{ctx.fig.stem}: c2b_rounds_needed mode must be beats or comparable, not {mode!r}")
    series = [k for k, r in roles(ctx.fig).items() if r == "series"]
    if claim_key not in series:
        raise ReproError(f"{ctx.fig.stem}: claim_key {claim_key!r} is not in options.series")
    ran, missing = ctx.panels(panels)
    lc, lr = ctx.label(claim_key), ctx.label(reference)
    how = ("mean-final-regret ratio C2B-KL / {r} < 1 (95 % paired bootstrap interval below 1)" if mode == "beats"
           else f"ratio C2B-KL / {{r}} within [1/{ratio:g}, {ratio:g}] (95 % paired bootstrap interval)")
    desc = (f"on every panel: {lc}: {how.format(r=lr)}; also measured: the smallest B of the sweep at which the "
            f"ratio interval's lower end is ≤ 1 (C2B-KL reaches {lr})")
    note = f"; not run: {', '.join(missing)} (requires network access)" if missing else ""
    if not ran:
        return Outcome(desc, "no panel ran" + note, NOT_RUN)
    parts, found = [], []
    for p in ran:
        refs = sorted((r for r in p.algorithms if r.key in series), key=lambda r: line_batches(r, p.horizon))
        reach = None
        for r in refs:
            if _ratio(ctx, p, r.key, reference).low <= 1.0:
                reach = line_batches(r, p.horizon)
                break
        iv = _ratio(ctx, p, claim_key, reference)
        Bc = line_batches(next(r for r in p.algorithms if r.key == claim_key), p.horizon)
        name = f"{p.dataset} at B = {Bc}: ratio"
        parts.append(Part(name, iv, 1.0, "below") if mode == "beats" else Part(name, iv, 1 / ratio, "within", ratio))
        where = f"B = {reach}" if reach is not None else f"not within B ≤ {line_batches(refs[-1], p.horizon)}"
        found.append(f"{p.dataset}: {where}")
    head = f"smallest B reaching {lr}: " + "; ".join(found)
    tail = [break_even_within(parts)] if mode == "comparable" else []
    tail += [note.removeprefix("; ")] if missing else []
    return outcome(desc, parts, ctx.min_runs, show="all", head=head, tail="; ".join(tail))
