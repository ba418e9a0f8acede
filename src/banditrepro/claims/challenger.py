"""The claim rows of a challenger (config key ``challengers``, banditrepro.challengers): on every panel of a
figure, the ratio of mean final regrets challenger / opponent with its paired 95 % interval and one word per
panel (beats, loses, inconclusive with the runs that would settle it; ``banditrepro.standings``). The opponent
is the paper's algorithm (``opponent``) or the strongest of the declared ``baselines``, chosen from the data.
The row reads "the challenger has lower final regret on every panel": reproduced when it beats the opponent
on every panel, not reproduced when it loses on one, otherwise inconclusive (``parts.decide_parts``)."""

from __future__ import annotations

from banditrepro import standings
from banditrepro import verdicts as vd
from banditrepro.claims.context import Context
from banditrepro.claims.parts import Part, decide_parts, fmt_iv
from banditrepro.claims.registry import test
from banditrepro.verdicts import Outcome


@test("challenger", keys=("challenger", "opponent", "baselines", "paper_algorithm"))
def _challenger(ctx: Context, challenger: str, opponent: str | None = None, baselines=(),
                paper_algorithm: str | None = None):
    panels = standings.ran_panels(ctx)
    lc = ctx.label(challenger)
    head = ""
    if opponent is None:
        who = "the strongest baseline"
    else:
        who = ctx.label(opponent)
    desc = ctx.describe(f"ratio of mean final regrets {lc} / {who} < 1 (95 % paired bootstrap interval) on every "
                        "panel; per panel: beats (interval below 1), loses (above 1) or inconclusive")
    if not panels:
        return Outcome(desc, "no panel ran", vd.NOT_RUN)
    if opponent is None:
        opponent, rank = standings.strongest(ctx, list(baselines), paper_algorithm, panels)
        head = (f"strongest baseline: {ctx.label(opponent)} (average rank {rank:.3g} among {len(baselines)} "
                f"baselines by mean final regret over {len(panels)} panels)")
    comps = [standings.compare(ctx, name, p, m, challenger, opponent) for name, p, m in panels]
    verdict, iv, note = decide_parts([Part(c.name, c.iv, 1.0, "below") for c in comps], ctx.min_runs)
    counts = {w: sum(c.verdict == w for c in comps) for w in (standings.BEATS, standings.LOSES, standings.OPEN)}
    tally = (f"{lc} vs {ctx.label(opponent)}: beats on {counts[standings.BEATS]}, loses on "
             f"{counts[standings.LOSES]}, inconclusive on {counts[standings.OPEN]} of {len(comps)} panels")
    body = "; ".join(c.text(fmt_iv) for c in comps)
    missing = [p.dataset for p in ctx.fig.panels if p not in [c.panel for c in comps]]
    tail = f"not run: {', '.join(dict.fromkeys(missing))} (requires network access)" if missing else ""
    return Outcome(desc, "; ".join(x for x in (head, tally, body, note, tail) if x), verdict, iv.low, iv.high)
