"""The papers' sentence-claims, each decided by a stated, measurable test with a 95 % interval.

A claim in the manifest names a test ``kind`` and its arguments. Every test measures one quantity (a ratio
of mean final regrets, a late-growth share, a formula value) with a 95 % interval from
``banditrepro.verdicts`` (paired bootstrap over the runs of the summaries, ``exact`` for formulas) and
returns an ``Outcome`` with one of the five verdicts: reproduced, not reproduced, inconclusive (with
roughly how many runs would settle it), vacuous (the claim's premise never occurs), not run (why).

Claims over several panels or parts: "on every panel" needs every part reproduced, one contradicted part
decides (``verdicts.combine``). "On most panels" (``quorum``) needs more than half of the panels
reproduced; it is not reproduced once at least half are contradicted; otherwise inconclusive. The row's
interval is the deciding part's: for a quorum of m panels the m-th best lower and upper limits, so the
row's interval against the boundary gives the same verdict.

Tolerances ("comparable", "small gap", "flat") are manifest parameters with a one-line ``rationale``
next to them; the measured text states the break-even tolerance at which the verdict would flip.
"""

from __future__ import annotations

import inspect
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.aggregate import load_summary
from banditrepro.figures import panel_status, summary_file
from banditrepro.manifest import Figure
from banditrepro.verdicts import Interval, Outcome

COLUMNS = ["paper", "figure", "claim_id", "claim", "test", "measured", "ci_low", "ci_high", "verdict"]
TESTS: dict[str, Callable] = {}
# per kind: parameters naming algorithm keys / algorithm names of the figure, and tolerance parameters
META: dict[str, dict[str, tuple[str, ...]]] = {}
CLAIM_KEYS = {"id", "text", "test", "where", "why_not"}


def test(kind: str, *, keys: tuple[str, ...] = (), names: tuple[str, ...] = (),
         tolerance: tuple[str, ...] = ()):
    """Register a claim test. ``keys``/``names``: parameters that name algorithm keys/names of the figure
    (checked by ``validate``); ``tolerance``: parameters that need a ``rationale`` in the manifest."""

    def deco(fn):
        TESTS[kind] = fn
        META[kind] = {"keys": tuple(keys), "names": tuple(names), "tolerance": tuple(tolerance)}
        return fn

    return deco


class NotRun(Exception):
    """Raised inside a test when its data cannot be read; the claim becomes `not run` with this reason."""


def seed_of(*parts) -> int:
    """A stable integer bootstrap seed from a claim's identity (never Python's salted hash())."""
    return zlib.crc32("/".join(str(p) for p in parts).encode())


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
        where = deciding.name
    else:  # m-th best limits: the row interval decides like the quorum
        verdict = quorum(verdicts, need)
        rev = parts[0].side == "above"
        lows = sorted((p.iv.low for p in parts), reverse=rev)
        highs = sorted((p.iv.high for p in parts), reverse=rev)
        ests = sorted((p.iv.estimate for p in parts), reverse=rev)
        iv, bound = Interval(ests[need - 1], lows[need - 1], highs[need - 1]), parts[0].bound
        where = f"quorum: the {_ordinal(need)} best of {len(parts)} panels"
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
    listed = parts if show == "all" else [p for p in parts if p.verdict != vd.REPRODUCED]
    held = sum(p.verdict == vd.REPRODUCED for p in parts)
    body = f"holds for {held}/{len(parts)}" + (": " if listed else "") + "; ".join(part_text(p) for p in listed)
    if show == "all":
        body = "; ".join(part_text(p) for p in parts)
    text = "; ".join(x for x in (head, body, note, tail) if x)
    return Outcome(desc, text, verdict, iv.low, iv.high)


class Context:
    """What a test may read: the figure, its table, the summaries behind it (per-run finals) and the cells
    (per-run curves, for shares of the horizon)."""

    def __init__(self, fig: Figure, table: pd.DataFrame, status_dir, root, prepared_dir="data/prepared",
                 claim_id: str = ""):
        self.fig, self.table, self.status_dir, self.root = fig, table, status_dir, root
        self.prepared_dir = prepared_dir
        self.claim_id = claim_id
        self.text = ""
        self.min_runs = 0
        self._cache: dict = {}

    def describe(self, text: str) -> str:
        """Record the test in words (used if the test stops with NotRun)."""
        self.text = text
        return text

    def seed(self, *tag) -> int:
        return seed_of(self.fig.stem, self.claim_id, *tag)

    def panels(self, spec) -> tuple[list, list[str]]:
        """(panels to test, names of requested panels that were not run)."""
        chosen = list(self.fig.panels)
        if isinstance(spec, dict) and "all_except" in spec:
            chosen = [p for p in chosen if p.dataset not in spec["all_except"]]
        elif isinstance(spec, list):
            chosen = [p for p in chosen if p.dataset in spec]
        ran = [p for p in chosen if panel_status(p.dataset, self.status_dir)[0]]
        missing = [p.dataset for p in chosen if p not in ran]
        return ran, missing

    def ref(self, panel, key: str):
        ref = next((r for r in panel.algorithms if r.key == key), None)
        if ref is None:
            raise ReproError(f"{self.fig.stem}: no line {key!r} on panel {panel.title!r}")
        return ref

    def _per_run(self, path, array: str, missing: str) -> dict[int, float]:
        """{run index: value} of one per-run array of a summary; each summary file is read once."""
        if (path, array) not in self._cache:
            if path not in self._cache:
                if not Path(path).exists():
                    raise NotRun(f"summary {path} not found")
                self._cache[path] = load_summary(path)
            s = self._cache[path]
            if array not in s:
                raise NotRun(f"{path} has no {missing}")
            self._cache[(path, array)] = dict(zip(np.asarray(s["runs"]).tolist(),
                                                   np.asarray(s[array], dtype=float)))
        return self._cache[(path, array)]

    def runs_of(self, dataset: str, horizon: int, algo_id: str, metric: str | None = None) -> dict[int, float]:
        """Per-run final values {run index: final} of one cell's summary."""
        metric = metric or self.fig.metric
        path = summary_file(dataset, int(horizon), algo_id, self.root)
        return self._per_run(path, f"{metric}_final", f"per-run {metric}")

    def finals(self, panel, key: str, metric: str | None = None) -> dict[int, float]:
        return self.runs_of(panel.dataset, panel.horizon, self.ref(panel, key).id, metric)

    def paired(self, *runs: dict[int, float]) -> list[np.ndarray]:
        """Values of the runs common to all (same run index = same random streams: paired)."""
        common = sorted(set.intersection(*(set(r) for r in runs)))
        if not common:
            raise NotRun("no common runs")
        n = len(common)
        self.min_runs = n if not self.min_runs else min(self.min_runs, n)
        return [np.array([r[i] for i in common]) for r in runs]

    def ratio(self, ra: dict[int, float], rb: dict[int, float], *tag) -> Interval:
        """mean(a) / mean(b) over the common runs, paired bootstrap 95 % interval."""
        a, b = self.paired(ra, rb)
        if a.size < 2:
            return vd.Interval(float(a.mean() / max(b.mean(), 1e-300)), -math.inf, math.inf)
        return vd.ratio_ci(a, b, seed=self.seed(*tag))

    def panel_ratio(self, panel, a: str, b: str, metric: str | None = None) -> Interval:
        return self.ratio(self.finals(panel, a, metric), self.finals(panel, b, metric),
                          panel.dataset, panel.horizon, panel.title, metric, a, b)

    def late_runs(self, panel, key: str, metric: str | None = None) -> dict[int, tuple[float, float]]:
        """{run: (R(T/2), R(T))} from the cell's summary (per-run R at the last grid point ≤ T/2, and R(T))."""
        metric = metric or self.fig.metric
        path = summary_file(panel.dataset, int(panel.horizon), self.ref(panel, key).id, self.root)
        finals = self.finals(panel, key, metric)
        half = self._per_run(path, f"{metric}_half",
                             f"per-run R(T/2) for {metric} (written by an older version: rerun)")
        return {r: (half[r], finals[r]) for r in finals}

    def late_share(self, panel, key: str, metric: str | None = None, minus: str | None = None) -> Interval:
        """Share of the mean final regret accrued over t in (T/2, T] (minus that of line ``minus``, paired),
        with a bootstrap interval over runs."""
        runs = [self.late_runs(panel, key, metric)] + ([self.late_runs(panel, minus, metric)] if minus else [])
        common = sorted(set.intersection(*(set(r) for r in runs)))
        if not common:
            raise NotRun("no common runs for the late share")
        self.min_runs = len(common) if not self.min_runs else min(self.min_runs, len(common))
        cols = [np.array([r[i][j] for i in common]) for r in runs for j in (0, 1)]

        def share(h, f):
            tot = f.mean(axis=1)
            return np.where(tot > 0, (tot - h.mean(axis=1)) / np.where(tot > 0, tot, 1.0), 0.0)

        def stat(*c):
            return share(c[0], c[1]) - (share(c[2], c[3]) if len(c) > 2 else 0.0)

        if len(common) < 2:
            return Interval(float(stat(*[c[None, :] for c in cols])[0]), -math.inf, math.inf)
        return vd.bootstrap(stat, *cols, seed=self.seed("late", panel.dataset, panel.horizon, metric, key, minus))

    def final(self, panel, key: str) -> float:
        """Mean final regret of a line from the figure table (for descriptions; verdicts use intervals)."""
        rows = self.table[(self.table.dataset == panel.dataset) & (self.table.algorithm == key)
                          & (self.table.horizon == panel.horizon)]
        if rows.empty:
            raise ReproError(f"{self.fig.stem}: no row for {key} on {panel.dataset}")
        return float(rows.mean_final_regret.iloc[0])

    def curve(self, panel, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(grid, mean curve) of a line's summary."""
        s = load_summary(summary_file(panel.dataset, panel.horizon, self.ref(panel, key).id, self.root))
        return s["grid"], s[f"{self.fig.metric}_mean"]

    def label(self, key: str) -> str:
        return self.fig.algorithm(key).label


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
from banditrepro import claims_c2b, claims_dp, claims_ws  # noqa: E402,F401


def _claim_args(claim: dict) -> tuple[str, dict]:
    args = dict(claim["test"])
    kind = args.pop("kind")
    args.pop("rationale", None)  # the manifest's reason for a tolerance; shown in the report, not a parameter
    return kind, args


def _check_claim(fig: Figure, claim: dict, kind: str, args: dict) -> str | None:
    """The first problem of one claim, or None."""
    unknown = sorted(set(claim) - CLAIM_KEYS)
    if unknown:
        return f"unknown field(s) {', '.join(unknown)} (allowed: {', '.join(sorted(CLAIM_KEYS))})"
    if kind not in TESTS:
        return f"unknown test kind {kind!r} (known: {', '.join(sorted(TESTS))})"
    sig = inspect.signature(TESTS[kind])
    try:
        sig.bind(None, **args)
    except TypeError as exc:
        params = ", ".join(list(sig.parameters)[1:])
        return f"test {kind}: {exc} (parameters: {params})"
    meta = META.get(kind, {})
    lines = [r for p in fig.panels for r in p.algorithms]
    for param in meta.get("keys", ()):
        vals = args.get(param, [])
        for v in [vals] if isinstance(vals, str) else list(vals):
            if v not in {r.key for r in lines}:
                return f"test {kind}: {param} = {v!r} is not an algorithm key of the figure"
    for param in meta.get("names", ()):
        v = args.get(param, sig.parameters[param].default)
        if isinstance(v, str) and v not in {r.name for r in lines}:
            return f"test {kind}: {param} = {v!r} is not an algorithm of the figure"
    for param in meta.get("tolerance", ()):
        if param in args and not str(claim["test"].get("rationale", "")).strip():
            return f"test {kind}: tolerance {param} = {args[param]!r} needs a one-line `rationale:` in the test"
    spec = args.get("panels")
    if isinstance(spec, dict) or isinstance(spec, list):
        named = spec.get("all_except", []) if isinstance(spec, dict) else spec
        datasets = {p.dataset for p in fig.panels}
        bad = [d for d in named if d not in datasets]
        if bad:
            return f"test {kind}: panels name dataset(s) not in the figure: {', '.join(map(str, bad))}"
    return None


def validate(figures: list[Figure]) -> None:
    """Check every claim's kind, parameters (against its test's signature), algorithm keys/names and
    tolerance rationales at parse time; raise ReproError("<paper>/<figure>: claim <id>: <problem>")."""
    for fig in figures:
        seen = set()
        for claim in fig.claims:
            cid = claim.get("id", "?")
            if cid in seen:
                raise ReproError(f"{fig.stem}: claim {cid}: duplicate claim id")
            seen.add(cid)
            if not isinstance(claim.get("test"), dict) or "kind" not in claim["test"]:
                raise ReproError(f"{fig.stem}: claim {cid}: test must be a mapping with a kind")
            problem = _check_claim(fig, claim, *_claim_args(claim))
            if problem:
                raise ReproError(f"{fig.stem}: claim {cid}: {problem}")


def check_figure(fig: Figure, table: pd.DataFrame, status_dir="data/status", root="results/summaries",
                 prepared_dir="data/prepared") -> list[dict]:
    rows = []
    for claim in fig.claims:
        kind, args = _claim_args(claim)
        if kind not in TESTS:
            raise ReproError(f"{fig.stem}: claim {claim['id']}: unknown test kind {kind!r}")
        ctx = Context(fig, table, status_dir, root, prepared_dir, claim_id=claim["id"])
        try:
            out = TESTS[kind](ctx, **args)
        except NotRun as why:
            out = Outcome(ctx.text or kind, str(why), vd.NOT_RUN)
        if not isinstance(out, Outcome):
            raise ReproError(f"{fig.stem}: claim {claim['id']}: test {kind} must return a verdicts.Outcome")
        rows.append({"paper": fig.paper, "figure": fig.id, "claim_id": claim["id"], "claim": claim["text"],
                     "test": out.test, "measured": out.measured, "ci_low": out.ci_low, "ci_high": out.ci_high,
                     "verdict": out.verdict})
    return rows


def check_all(figures: list[Figure], tables_dir="results/tables", status_dir="data/status",
              root="results/summaries", prepared_dir="data/prepared") -> pd.DataFrame:
    validate(figures)
    rows = []
    for fig in figures:
        if not fig.claims:
            continue
        table = pd.read_csv(Path(tables_dir) / fig.paper / f"{fig.id}.csv")
        rows += check_figure(fig, table, status_dir, root, prepared_dir)
    return pd.DataFrame(rows, columns=COLUMNS)


def write_claims(figures: list[Figure], out, status_dir="data/status", prepared_dir="data/prepared",
                 tables_dir="results/tables", root="results/summaries") -> list[str]:
    """Check every claim, write the CSV atomically; one line per claim for a log or the terminal."""
    from banditrepro.atomic import write_text

    df = check_all(figures, tables_dir=tables_dir, status_dir=status_dir, root=root, prepared_dir=prepared_dir)
    write_text(out, df.to_csv(index=False, float_format="%.6g"))
    return [f"[{r.verdict}] {r.paper}/{r.figure}: {r.claim} — {r.measured}" for r in df.itertuples()]
