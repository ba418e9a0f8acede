"""The papers' sentence-claims, each decided by a stated, measurable test on the figure tables.

A claim in the manifest names a test ``kind`` and its arguments; every test returns the test it ran
(in words), what it measured and a verdict: pass, fail, or not-run (with why).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.aggregate import load_summary
from banditrepro.figures import panel_status, summary_file
from banditrepro.manifest import Figure

COLUMNS = ["paper", "figure", "claim_id", "claim", "test", "measured", "verdict"]
TESTS: dict[str, Callable] = {}


def test(kind: str):
    def deco(fn):
        TESTS[kind] = fn
        return fn

    return deco


class Context:
    """What a test may read: the figure, its table, and the summaries behind it."""

    def __init__(self, fig: Figure, table: pd.DataFrame, status_dir, root, prepared_dir="data/prepared"):
        self.fig, self.table, self.status_dir, self.root = fig, table, status_dir, root
        self.prepared_dir = prepared_dir

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

    def final(self, panel, key: str) -> float:
        rows = self.table[(self.table.dataset == panel.dataset) & (self.table.algorithm == key)
                          & (self.table.horizon == panel.horizon)]
        if rows.empty:
            raise ReproError(f"{self.fig.stem}: no row for {key} on {panel.dataset}")
        return float(rows.mean_final_regret.iloc[0])

    def curve(self, panel, key: str) -> tuple[np.ndarray, np.ndarray]:
        ref = next(r for r in panel.algorithms if r.key == key)
        s = load_summary(summary_file(panel.dataset, panel.horizon, ref.id, self.root))
        return s["grid"], s[f"{self.fig.metric}_mean"]

    def label(self, key: str) -> str:
        return self.fig.algorithm(key).label


def _missing_note(missing: list[str]) -> str:
    return f"; not run: {', '.join(missing)} (requires network access)" if missing else ""


@test("beats")
def _beats(ctx: Context, a: str, b: str, panels="all", min_fraction: float = 1.0, strict_majority=False):
    ran, missing = ctx.panels(panels)
    la, lb = ctx.label(a), ctx.label(b)
    need = "on more than half of the panels" if strict_majority else (
        "on every panel" if min_fraction >= 1 else f"on at least {min_fraction:.0%} of the panels")
    desc = f"mean final regret of {la} < {lb} {need}"
    if not ran:
        return desc, "no panel ran" + _missing_note(missing), "not-run"
    wins = [p.dataset for p in ran if ctx.final(p, a) < ctx.final(p, b)]
    losses = [f"{p.dataset} ({ctx.final(p, a):.4g} vs {ctx.final(p, b):.4g})" for p in ran
              if p.dataset not in wins]
    frac = len(wins) / len(ran)
    ok = frac > 0.5 if strict_majority else frac >= min_fraction
    measured = f"{la} lower on {len(wins)}/{len(ran)} panels"
    if losses:
        measured += f"; not lower on {', '.join(losses)}"
    return desc, measured + _missing_note(missing), "pass" if ok else "fail"


@test("comparable")
def _comparable(ctx: Context, a: str, b: str, panels="all", ratio: float = 1.5):
    ran, missing = ctx.panels(panels)
    la, lb = ctx.label(a), ctx.label(b)
    desc = f"final regrets of {la} and {lb} within a factor {ratio:g} of each other on every panel"
    if not ran:
        return desc, "no panel ran" + _missing_note(missing), "not-run"
    ratios = {p.dataset: ctx.final(p, a) / max(ctx.final(p, b), 1e-12) for p in ran}
    bad = {d: r for d, r in ratios.items() if not (1 / ratio <= r <= ratio)}
    measured = "ratio " + ", ".join(f"{d} {r:.2f}" for d, r in ratios.items())
    return desc, measured + _missing_note(missing), "fail" if bad else "pass"


@test("late_growth")
def _late_growth(ctx: Context, a: str, b: str, flat: float = 0.1, panels="all"):
    """On panels where b beats a: b still accrues > flat of its regret in the second half of the horizon
    while a accrues ≤ flat of its regret there ("keeps growing" vs "flat")."""
    ran, missing = ctx.panels(panels)
    la, lb = ctx.label(a), ctx.label(b)
    desc = (f"on panels where {lb} beats {la}: share of final regret accrued over t in (T/2, T] is "
            f"> {flat:g} for {lb} and ≤ {flat:g} for {la}")
    if not ran:
        return desc, "no panel ran" + _missing_note(missing), "not-run"

    def late(p, key):
        t, r = ctx.curve(p, key)
        half = r[np.searchsorted(t, t[-1] // 2)]
        return (r[-1] - half) / max(r[-1], 1e-12)

    where = [p for p in ran if ctx.final(p, b) < ctx.final(p, a)]
    if not where:
        return desc, f"{lb} beats {la} on no panel (claim vacuous)" + _missing_note(missing), "pass"
    parts, ok = [], True
    for p in where:
        ga, gb = late(p, a), late(p, b)
        ok &= gb > flat and ga <= flat
        parts.append(f"{p.dataset}: {lb} {gb:.2f}, {la} {ga:.2f}")
    return desc, "; ".join(parts) + _missing_note(missing), "pass" if ok else "fail"


# paper-specific tests register themselves with @test(kind) in their own modules
from banditrepro import claims_c2b, claims_dp, claims_ws  # noqa: E402,F401


def check_figure(fig: Figure, table: pd.DataFrame, status_dir="data/status", root="results/summaries",
                 prepared_dir="data/prepared"):
    ctx = Context(fig, table, status_dir, root, prepared_dir)
    rows = []
    for claim in fig.claims:
        args = dict(claim["test"])
        kind = args.pop("kind")
        if kind not in TESTS:
            raise ReproError(f"{fig.stem}: claim {claim['id']}: unknown test kind {kind!r}")
        res = TESTS[kind](ctx, **args)
        # new tests return a verdicts.Outcome; the 3-tuples of the older tests are still accepted here
        desc, measured, verdict = (res.test, res.measured, res.verdict) if hasattr(res, "verdict") else res
        rows.append({"paper": fig.paper, "figure": fig.id, "claim_id": claim["id"], "claim": claim["text"],
                     "test": desc, "measured": measured, "verdict": verdict})
    return rows


def check_all(figures: list[Figure], tables_dir="results/tables", status_dir="data/status",
              root="results/summaries", prepared_dir="data/prepared") -> pd.DataFrame:
    rows = []
    for fig in figures:
        if not fig.claims:
            continue
        table = pd.read_csv(Path(tables_dir) / fig.paper / f"{fig.id}.csv")
        rows += check_figure(fig, table, status_dir, root, prepared_dir)
    return pd.DataFrame(rows, columns=COLUMNS)


def write_claims(figures: list[Figure], out, status_dir="data/status", prepared_dir="data/prepared") -> list[str]:
    """Check every claim, write the CSV atomically; one line per claim for a log or the terminal."""
    from banditrepro.atomic import write_text

    df = check_all(figures, status_dir=status_dir, prepared_dir=prepared_dir)
    write_text(out, df.to_csv(index=False))
    return [f"[{r.verdict}] {r.paper}/{r.figure}: {r.claim} — {r.measured}" for r in df.itertuples()]
