"""Parts and outcomes: how a claim's measured quantities become one verdict and one interval.

A claim test measures one or more *parts*, each a quantity with a 95 % interval (a paired bootstrap over
runs, ``banditrepro.verdicts``, or a formula's exact value) and the boundary it must clear. Per part:
*holds* (the interval lies on the claim's side), *contradicted* (on the other side), *open* (it straddles the
boundary). ``outcome`` turns the parts into the row of ``claims.csv``; every test builds its row this way.

What ``ci_low``/``ci_high`` are on every kind of row: ``banditrepro.claims`` (module docstring).
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass

from banditrepro import verdicts as vd
from banditrepro.verdicts import Interval, Outcome


def fmt(x: float) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.4g}"


def fmt_iv(iv: Interval) -> str:
    return f"{fmt(iv.estimate)} [{fmt(iv.low)}, {fmt(iv.high)}]"


@dataclass(frozen=True)


class Part:
    """One measured quantity of a claim with the boundary it must clear: ``side`` "below"/"above" ``bound``,
    or "within" [``bound``, ``upper``]."""

    name: str
    iv: Interval
    bound: float
    side: str
    upper: float = math.nan

    @property
    def verdict(self) -> str:
        if self.side == "within":
            return vd.decide_within(self.iv, self.bound, self.upper)
        return vd.decide(self.iv, self.bound, self.side)

    @property
    def nearest_bound(self) -> float:
        if self.side != "within":
            return self.bound
        return min((self.bound, self.upper), key=lambda b: abs(self.iv.estimate - b))


# ``banditrepro settle`` (banditrepro.settle_claims) sees the parts every claim test decides on through this
# hook, so the settled path reads the same parts the fixed design decides on without any test returning them;
# unset (None) in the fixed design, which therefore runs exactly as before.
WATCH: ContextVar = ContextVar("claims_parts_watch", default=None)

_WORD = {vd.REPRODUCED: "holds", vd.NOT_REPRODUCED: "contradicted", vd.INCONCLUSIVE: "open"}


def part_text(p: Part) -> str:
    return f"{p.name} {fmt_iv(p.iv)} ({_WORD[p.verdict]})"


def quorum(verdicts: list[str], need: int) -> str:
    """At least ``need`` parts reproduced → reproduced; more than len − need contradicted (so ``need``
    can no longer be reached) → not reproduced; else inconclusive. need = len is ``verdicts.combine``;
    "most panels" is need = len // 2 + 1 (reproduced on more than half, not reproduced on at least half)."""
    vs = [v for v in verdicts if v not in (vd.NOT_RUN, vd.VACUOUS)]
    if not vs:
        return vd.NOT_RUN
    if sum(v == vd.REPRODUCED for v in vs) >= need:
        return vd.REPRODUCED
    if sum(v == vd.NOT_REPRODUCED for v in vs) > len(vs) - need:
        return vd.NOT_REPRODUCED
    return vd.INCONCLUSIVE


def decide_parts(parts: list[Part], runs: int, need: int | None = None) -> tuple[str, Interval, str]:
    """(verdict, the row's interval, a note) for parts that must all hold (``need`` None) or a quorum of
    ``need`` parts sharing one boundary. The interval is the deciding part's; an inconclusive verdict says
    roughly how many runs would settle it."""
    if (watch := WATCH.get()) is not None:
        watch(list(parts), need)
    if not parts:
        return vd.NOT_RUN, Interval(math.nan, math.nan, math.nan), ""
    verdicts = [p.verdict for p in parts]
    if need is None or need >= len(parts):
        verdict = vd.combine(verdicts)
        same = [p for p in parts if p.verdict == verdict]
        if verdict == vd.INCONCLUSIVE:  # the open part that needs the most runs
            deciding = max(same, key=lambda p: vd.runs_to_settle(p.iv, p.nearest_bound, max(runs, 1)) or math.inf)
        else:
            deciding = same[0] if verdict == vd.NOT_REPRODUCED else _least_margin(parts)
        iv, bound = deciding.iv, deciding.nearest_bound
        if len(parts) == 1:
            where = f"{deciding.name} (the only part)"
        else:
            why = {vd.NOT_REPRODUCED: "the first part that contradicts the claim",
                   vd.INCONCLUSIVE: "the open part that would need the most runs to settle"}.get(
                verdict, "the part closest to its boundary, relative to its interval's width")
            where = f"{deciding.name}, {why}"
    else:  # m-th best limits: the row interval decides like the quorum
        verdict = quorum(verdicts, need)
        rev = parts[0].side == "above"
        lows = sorted(parts, key=lambda p: p.iv.low, reverse=rev)
        highs = sorted(parts, key=lambda p: p.iv.high, reverse=rev)
        ests = sorted((p.iv.estimate for p in parts), reverse=rev)
        low, high = lows[need - 1], highs[need - 1]
        iv, bound = Interval(ests[need - 1], low.iv.low, high.iv.high), parts[0].bound
        rank, side = _ordinal(need), "highest" if rev else "lowest"
        where = (f"{need} of {len(parts)} panels must hold, so the row shows the {rank} {side} lower limit "
                 f"({low.name}) and the {rank} {side} upper limit ({high.name}): this interval is "
                 f"{parts[0].side} {fmt(bound)} exactly when at least {need} panels' intervals are")
    note = f"interval shown: {where}"
    if verdict == vd.INCONCLUSIVE and runs > 0:
        note += "; a single run gives no interval" if not math.isfinite(iv.half_width) else \
            f"; {vd.settle_note(iv, bound, runs)}"
    return verdict, iv, note


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _least_margin(parts: list[Part]) -> Part:
    """The reproduced part closest to its boundary (relative to its interval width)."""
    def margin(p: Part) -> float:
        w = max(p.iv.half_width, 1e-300)
        return abs(p.iv.estimate - p.nearest_bound) / w
    return min(parts, key=margin)


def outcome(desc: str, parts: list[Part], runs: int, *, need: int | None = None, head: str = "",
            tail: str = "", show: str = "problems") -> Outcome:
    """The Outcome of a claim made of ``parts``; ``show`` "all" lists every part, "problems" only those that
    do not hold (with a count)."""
    verdict, iv, note = decide_parts(parts, runs, need)
    if show == "all":
        body = "; ".join(part_text(p) for p in parts)
    else:
        listed = [p for p in parts if p.verdict != vd.REPRODUCED]
        held = len(parts) - len(listed)
        body = f"holds for {held}/{len(parts)}" + (": " if listed else "") + "; ".join(part_text(p) for p in listed)
    text = "; ".join(x for x in (head, body, note, tail) if x)
    return Outcome(desc, text, verdict, iv.low, iv.high)
