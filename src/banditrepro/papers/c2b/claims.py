"""Claim tests of the C2B studies beyond the paper's figures (registered with banditrepro.claims.test).

``c2b_rounds_needed`` answers the paper's question (ii) (§4: "how many rounds suffice?") on the
``c2b-rounds`` figure: per panel, the ratio of C2B-KL's mean final regret to a reference's (RUCB, RMED1) with a
paired percentile-bootstrap 95 % interval over runs (runs with the same index share random numbers). C2B-KL
*reaches* the reference at B when that interval's lower end is ≤ 1 (it is no longer significantly worse);
the smallest such B of the sweep is reported, or "not within B ≤ <largest B>".
"""

from __future__ import annotations

import zlib

import numpy as np

from banditrepro import ReproError
from banditrepro.aggregate import load_summary
from banditrepro.claims import Context, test
from banditrepro.figures import summary_file
from banditrepro.verdicts import (
    INCONCLUSIVE,
    NOT_RUN,
    Interval,
    Outcome,
    combine,
    decide,
    decide_within,
    ratio_ci,
    settle_note,
)


def paired_finals(ctx: Context, panel, a: str, b: str, metric: str = "regret") -> tuple[np.ndarray, np.ndarray]:
    """Per-run final values of lines a and b on the runs both cells have (paired by run index)."""
    out = []
    for key in (a, b):
        ref = next((r for r in panel.algorithms if r.key == key), None)
        if ref is None:
            raise ReproError(f"{ctx.fig.stem}: no line {key!r} on panel {panel.title!r}")
        out.append(load_summary(summary_file(panel.dataset, panel.horizon, ref.id, ctx.root)))
    (sa, sb) = out
    common = np.intersect1d(sa["runs"], sb["runs"])
    if common.size < 2:
        raise ReproError(f"{ctx.fig.stem}: {a} and {b} share fewer than 2 runs on {panel.dataset}")
    fa = np.asarray(sa[f"{metric}_final"])[np.searchsorted(sa["runs"], common)]
    fb = np.asarray(sb[f"{metric}_final"])[np.searchsorted(sb["runs"], common)]
    return fa, fb


def stable_seed(*parts) -> int:
    """A bootstrap seed that depends only on what is compared (figure, dataset, lines)."""
    return zlib.crc32("/".join(str(p) for p in parts).encode())


def _ratio(ctx: Context, panel, a: str, b: str) -> tuple[Interval, int]:
    fa, fb = paired_finals(ctx, panel, a, b, ctx.fig.metric)
    return ratio_ci(fa, fb, seed=stable_seed(ctx.fig.stem, panel.dataset, panel.horizon, a, b)), fa.size


@test("c2b_rounds_needed")
def _rounds_needed(ctx: Context, reference: str, claim_key: str, mode: str = "beats", ratio: float = 1.5,
                   panels="all") -> Outcome:
    """The smallest B at which C2B-KL reaches ``reference`` (measured), and the verdict on the paper's
    statement about B = ⌊ln T⌋ + 6 (``claim_key``): ``mode: beats`` ("always outperforms": the ratio interval
    lies below 1) or ``mode: comparable`` (the ratio interval lies within [1/ratio, ratio])."""
    from banditrepro.figures_c2b import line_batches, roles

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
    parts, verdicts, deciding = [], [], []
    for p in ran:
        refs = sorted((r for r in p.algorithms if r.key in series), key=lambda r: line_batches(r, p.horizon))
        reach = None
        for r in refs:
            iv, _ = _ratio(ctx, p, r.key, reference)
            if iv.low <= 1.0:
                reach = line_batches(r, p.horizon)
                break
        iv, n = _ratio(ctx, p, claim_key, reference)
        Bc = line_batches(next(r for r in p.algorithms if r.key == claim_key), p.horizon)
        if mode == "beats":
            v = decide(iv, 1.0, "below")
            extra = f", {settle_note(iv, 1.0, n)}" if v == INCONCLUSIVE else ""
        else:
            v = decide_within(iv, 1 / ratio, ratio)
            flip = max(iv.high, 1 / iv.low) if iv.low > 0 else float("inf")
            extra = f", verdict flips at ratio tolerance {flip:.3g}"
        verdicts.append(v)
        deciding.append((v, iv))
        where = f"B = {reach}" if reach is not None else f"not within B ≤ {line_batches(refs[-1], p.horizon)}"
        parts.append(f"{p.dataset}: smallest B reaching {lr}: {where}; at B = {Bc} ratio {iv} ({v}{extra}; {n} runs)")
    verdict = combine(verdicts)
    # the interval reported is that of the panel that decides: the first with the combined verdict, else the
    # panel with the largest ratio
    pick = [iv for v, iv in deciding if v == verdict] or [max((iv for _, iv in deciding), key=lambda x: x.estimate)]
    worst = max(pick, key=lambda x: x.estimate)
    return Outcome(desc, "; ".join(parts) + note, verdict, worst.low, worst.high)
