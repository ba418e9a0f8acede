"""Every claim's parts as per-run paired statistics, read through the fixed-design claim tests themselves
(``banditrepro settle``, issue 45 point 1; the statistics: ``banditrepro.settle_statistic``, docs/settle.md).

The fixed-design tests stay as they are. ``TracingContext`` is a ``claims.Context`` that, besides computing the
same intervals, remembers for every ratio and late-share interval it hands out the per-run values behind it
(paired, in run-index order) and the a-priori bounds of those values; ``claims.parts.WATCH`` shows which parts a
test decided on. A part whose interval came from ``Context.ratio`` becomes ``settle_statistic.ratio`` (or the two
of ``within``), one from ``Context.late_share`` without ``minus`` becomes ``late_share``; a claim with any other
part (a formula, an argmin, a difference of late shares, a bootstrap of its own) keeps its fixed-design verdict
(method "fixed"), as ``settle_statistic.KIND_FORMS`` says. Nothing here runs in the default workflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from banditrepro import settle_statistic as st
from banditrepro import verdicts as vd
from banditrepro.claims import COLUMNS, TESTS, Context, NotRun, validate
from banditrepro.claims.parts import WATCH, quorum
from banditrepro.claims.registry import _claim_args
from banditrepro.verdicts import Outcome
from banditrepro.workflow.cells import cell_key


@dataclass(frozen=True)
class Trace:
    """The per-run values behind one interval: ``form`` "ratio" (columns a, b) or "late" (half, final), and each
    column's a-priori upper bound (a final regret lies in [0, bound])."""

    form: str
    columns: dict
    bounds: dict


class TracingContext(Context):
    """A ``Context`` that records the per-run values behind its ratio and late-share intervals and the cells read."""

    def __init__(self, *args, bound_of=None, **kw):
        super().__init__(*args, **kw)
        self.bound_of = bound_of  # (dataset, horizon, metric) -> a final regret's a-priori upper bound
        self.traces: dict[int, Trace] = {}
        self.cells: set[str] = set()
        self._keep: list = []  # every traced interval, kept alive so that no other object takes its id
        self._origin: dict[int, tuple[str, int, str]] = {}

    def runs_of(self, dataset, horizon, algo_id, metric=None):
        out = super().runs_of(dataset, horizon, algo_id, metric)
        self.cells.add(cell_key(dataset, int(horizon), algo_id))
        self._origin[id(out)] = (dataset, int(horizon), metric or self.fig.metric)
        return out

    def _bound(self, dataset, horizon, metric) -> float:
        return self.bound_of(dataset, int(horizon), metric) if self.bound_of else math.nan

    def _trace(self, iv, trace: Trace):
        self.traces[id(iv)] = trace
        self._keep.append(iv)

    def ratio(self, ra, rb, *tag, seed=None):
        iv = super().ratio(ra, rb, *tag, seed=seed)
        a, b = self.paired(ra, rb)  # the same common runs, in run-index order (min_runs unchanged)
        bounds = {k: self._bound(*self._origin[id(r)]) if id(r) in self._origin else math.nan
                  for k, r in (("a", ra), ("b", rb))}
        self._trace(iv, Trace("ratio", {"a": a, "b": b}, bounds))
        return iv

    def late_share(self, panel, key, metric=None, minus=None):
        iv = super().late_share(panel, key, metric, minus)
        if minus is None:  # a difference of two late shares is a ratio of products of means: not traced
            (rows,) = self.paired(self.late_runs(panel, key, metric))
            b = self._bound(panel.dataset, panel.horizon, metric or self.fig.metric)
            self._trace(iv, Trace("late", {"half": rows[:, 0], "final": rows[:, 1]}, {"half": b, "final": b}))
        return iv


@dataclass
class Traced:
    """One claim as the settled path sees it: the fixed-design row, its parts' statistics (a list per part:
    one, or two for "within") with their per-run values, the quorum, the cells read, or why it stays fixed."""

    row: dict
    parts: list = field(default_factory=list)  # [[(PairedStatistic, values), ...], ...]
    need: int | None = None
    cells: set = field(default_factory=set)
    fixed: str = ""  # non-empty: why the claim keeps its fixed-design verdict

    @property
    def key(self) -> str:
        return f"{self.row['paper']}/{self.row['figure']}/{self.row['claim_id']}"

    @property
    def runs(self) -> int:
        return min((len(v) for stats in self.parts for _, v in stats), default=0)


def _statistics(part, trace: Trace | None):
    """The part's statistics with their per-run values, or None when the part has no one-mean form."""
    if trace is None:
        return None
    bounds = trace.bounds
    if not all(math.isfinite(b) and b > 0 for b in bounds.values()):
        return None
    if trace.form == "ratio" and part.side in ("below", "above"):
        stats = [st.ratio("a", "b", part.bound, part.side, bounds["a"], bounds["b"], part.name)]
    elif trace.form == "ratio" and part.side == "within":
        stats = list(st.within("a", "b", part.bound, part.upper, bounds["a"], bounds["b"], part.name))
    elif trace.form == "late" and part.side in ("below", "above") and 0 < part.bound < 1:
        stats = [st.late_share("final", "half", part.bound, part.side, bounds["final"], bounds["half"],
                               part.name)]
    else:
        return None
    return [(s, s.values(trace.columns)) for s in stats]


def bounds_from(layout):
    """(dataset, horizon, metric) -> T·g: the a-priori bound of a final regret, g the instance's largest per-step
    regret of that metric (``settle_statistic.per_step_bound``), read from the prepared instance (nan if none)."""
    from banditrepro.datasets.prepared import load_prepared

    cache: dict = {}

    def bound(dataset: str, horizon: int, metric: str) -> float:
        if (dataset, metric) not in cache:
            try:
                inst = load_prepared(layout.prepared_file(dataset))
                # a generative utility model draws utilities whose range is at most 1 (p_ij = (1 + u_i − u_j)/2
                # must be a probability), so every dueling regret of one step is at most 1; it has no fixed table
                cache[(dataset, metric)] = 1.0 if getattr(inst, "generative", False) else \
                    st.per_step_bound(inst, metric)
            except Exception:  # noqa: BLE001 -- no bound: the claim keeps its fixed-design verdict, said so
                cache[(dataset, metric)] = math.nan
        return float(horizon) * cache[(dataset, metric)]

    return bound


def trace_claim(fig, table, layout, claim, bound_of) -> Traced:
    kind, args = _claim_args(claim)
    ctx = TracingContext(fig, table, layout, claim_id=claim["id"], bound_of=bound_of)
    seen: list = []
    token = WATCH.set(lambda parts, need: seen.append((parts, need)))
    try:
        out = TESTS[kind](ctx, **args)
    except NotRun as why:
        out = Outcome(ctx.text or kind, str(why), vd.NOT_RUN)
    finally:
        WATCH.reset(token)
    row = {"paper": fig.paper, "figure": fig.id, "claim_id": claim["id"], "claim": claim["text"], "test": out.test,
           "measured": out.measured, "ci_low": out.ci_low, "ci_high": out.ci_high, "verdict": out.verdict}
    t = Traced(row, cells=set(ctx.cells))
    form = st.KIND_FORMS.get(kind, ("fixed", "a kind docs/settle.md does not list"))
    if form[0] == "fixed":
        t.fixed = form[1]
    elif out.verdict in (vd.VACUOUS, vd.NOT_RUN) or not seen:
        t.fixed = f"{out.verdict}: no runs to settle"
    else:
        parts, t.need = seen[-1]  # the parts the row's verdict was decided on (outcome → decide_parts)
        for p in parts:
            stats = _statistics(p, ctx.traces.get(id(p.iv)))
            if stats is None:
                t.fixed, t.parts = f"part {p.name!r} is not the mean of one per-run statistic", []
                break
            t.parts.append(stats)
    return t


def trace_all(figures, layout) -> list[Traced]:
    """Every claim of ``figures`` in claims.csv's order (the papers' claims, then the challengers' rows)."""
    validate(figures)
    bound_of = bounds_from(layout)
    own, added = [], []
    for fig in figures:
        if not fig.claims:
            continue
        table = pd.read_csv(layout.table(fig.paper, fig.id))
        for claim in fig.claims:
            (added if "challenger" in claim else own).append(trace_claim(fig, table, layout, claim, bound_of))
    return own + added


def looks(first: int, max_runs: int) -> tuple[int, ...]:
    """The run counts at which a settle reads its sequences: first, 2·first, 4·first, … below max_runs, and
    max_runs (fixed before any run, the same for every claim, so a resumed or merged settle reads the same)."""
    out, r = [], first
    while r < max_runs:
        out.append(r)
        r *= 2
    return tuple(out + [max_runs])


@dataclass
class Decision:
    verdict: str
    decided_at: int | None
    finite_sample: str  # the betting CS's verdict at the same looks (no assumption)
    settled: list  # per statistic: (PairedStatistic, Settled of METHOD)


def _claim_verdict(per_part: list[list[tuple[str, int | None]]], need, at: int) -> str:
    """The claim's verdict at ``at`` runs: each statistic's frozen verdict if decided by then, parts combined."""
    parts = [vd.combine([v if d is not None and d <= at else vd.INCONCLUSIVE for v, d in stats])
             for stats in per_part]
    return quorum(parts, need) if need is not None and need < len(parts) else vd.combine(parts)


def decide_claim(t: Traced, alpha_part: float, grid: tuple[int, ...]) -> Decision:
    """The settled verdict of a traced claim (not fixed): every statistic's sequence read at ``grid``."""
    out = {}
    for method in (st.METHOD, "betting"):
        per_part, settled = [], []
        for stats in t.parts:
            row = []
            for s, values in stats:
                r = st.decide(s, values, alpha_part, method, grid)
                row.append((r.verdict, r.decided_at))
                settled.append((s, r))
            per_part.append(row)
        seen = [g for g in grid if g <= t.runs]
        verdict, at = vd.INCONCLUSIVE, None
        for g in seen:
            verdict = _claim_verdict(per_part, t.need, g)
            if verdict != vd.INCONCLUSIVE:
                at = g
                break
        out[method] = (verdict, at, settled)
    verdict, at, settled = out[st.METHOD]
    return Decision(verdict, at, out["betting"][0], settled)


SETTLED_COLUMNS = [*COLUMNS, "method", "alpha_part", "decided_at_runs", "verdict_finite_sample", "assumption"]
ASSUMPTION = ("i.i.d. runs with a finite (2+δ)-th moment, asymptotic guarantee (docs/settle.md#assumption); "
              "none needed where verdict_finite_sample agrees")


def settled_row(t: Traced, d: Decision | None, alpha_part: float | None) -> dict:
    """A row of claims-settled.csv: ``verdict`` the settled verdict, ``ci_low``/``ci_high`` the deciding (or, open,
    the first open) statistic's sequence at the deciding (last) look, on the statistic's scale (boundary 0)."""
    row = dict(t.row)
    if d is None:
        return {**row, "method": "fixed", "alpha_part": "", "decided_at_runs": "", "verdict_finite_sample": "",
                "assumption": f"keeps the fixed-design verdict: {t.fixed}"}
    chosen = [(s, r) for s, r in d.settled if r.verdict == d.verdict and r.decided_at is not None] or \
             [(s, r) for s, r in d.settled if r.decided_at is None] or d.settled
    s, r = max(chosen, key=lambda sr: sr[1].decided_at or 0)
    lo, hi = (r.lower[-1], r.upper[-1]) if r.lower else (math.nan, math.nan)
    where = f"at {r.decided_at or t.runs} runs"
    row.update(verdict=d.verdict, ci_low=lo, ci_high=hi,
               measured=f"{st.METHOD} confidence sequence of mean({s.name}) {s.side} 0: [{lo:.4g}, {hi:.4g}] {where}"
                        f" ({sum(len(p) for p in t.parts)} statistics); fixed design at {t.runs} runs: "
                        f"{t.row['verdict']}")
    return {**row, "method": st.METHOD, "alpha_part": alpha_part,
            "decided_at_runs": "" if d.decided_at is None else d.decided_at,
            "verdict_finite_sample": d.finite_sample,
            "assumption": "" if d.finite_sample == d.verdict else ASSUMPTION}


def alphas(traced: list[Traced], alpha: float = st.ALPHA) -> dict[str, float]:
    """Bonferroni over the claims that settle (``settle_statistic.split_alpha``)."""
    return st.split_alpha({t.key: sum(len(p) for p in t.parts) for t in traced if not t.fixed}, alpha)


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=SETTLED_COLUMNS)


def decide_all(traced: list[Traced], alpha: dict[str, float], grid: tuple[int, ...]) -> dict[str, Decision]:
    """Every settling claim's decision (a claim fixed, or not in the α split, has none)."""
    return {t.key: decide_claim(t, alpha[t.key], grid) for t in traced if not t.fixed and t.key in alpha}


def settled_csv(traced: list[Traced], decisions: dict[str, Decision], alpha: dict[str, float]) -> str:
    """The text of claims-settled.csv: one row per claim, in claims.csv's order (what settle writes and
    ``banditrepro verify`` re-derives from a source's shards, byte for byte)."""
    rows = [settled_row(t, decisions.get(t.key), alpha.get(t.key)) for t in traced]
    return frame(rows).to_csv(index=False, float_format="%.6g")


def stat_sequence(s, values, alpha_part: float):
    """The CS of ``s`` over all runs (for the figure)."""
    from banditrepro import confseq as cs

    return cs.sequence(st.METHOD, np.asarray(values, dtype=np.float64), s.lo, s.hi, alpha_part, "two")
