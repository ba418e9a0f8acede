"""The claim engine (it names no paper): the papers' sentence-claims, each decided by a stated, measurable test
with a 95 % interval.

A claim in the manifest names a test ``kind`` and its arguments. Every test measures one quantity (a ratio
of mean final regrets, a late-growth share, a formula value) with a 95 % interval from
``banditrepro.verdicts`` (paired bootstrap over the runs of the summaries, ``exact`` for formulas) and
returns an ``Outcome`` with one of the five verdicts: reproduced, not reproduced, inconclusive (with
roughly how many runs would settle it), vacuous (the claim's premise never occurs), not run (why).

Claims over several panels or parts: "on every panel" needs every part reproduced, one contradicted part
decides (``verdicts.combine``). "On most panels" (``quorum``) needs more than half of the panels
reproduced; it is not reproduced once at least half are contradicted; otherwise inconclusive. Every test,
the studies' too, builds its row through ``parts.outcome``.

``ci_low``/``ci_high`` of a claims.csv row are the 95 % interval of the part that decides the row's verdict,
named in the row's measured text ("interval shown: …"). When every part must hold: for *not reproduced* the
first contradicted part, for *inconclusive* the open part that would need the most runs to settle, for
*reproduced* the part closest to its boundary (distance over the interval's half-width). When m of n panels
suffice ("most panels"), the row shows the m-th best lower limit and the m-th best upper limit over the
panels, so this interval lies on the claim's side exactly when at least m panels' intervals do. A formula
check shows its exact value (low = high); a vacuous claim the interval of its premise; a claim not run none.

Modules: ``registry`` (``@test(kind)``, ``validate``), ``parts`` (``Part``, ``outcome``), ``context``
(``Context``: cached summaries, paired runs), ``generic`` (kinds naming no paper). Paper-specific kinds live in
``banditrepro.papers.<paper>.claims`` and register when ``banditrepro.papers.load()`` runs.

Tolerances ("comparable", "small gap", "flat") are manifest parameters with a one-line ``rationale``
next to them; the measured text states the break-even tolerance at which the verdict would flip.
"""

from __future__ import annotations

import pandas as pd

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.atomic import write_text
from banditrepro.claims import challenger, generic  # noqa: F401  (register the generic kinds)
from banditrepro.claims.context import Context, NotRun
from banditrepro.claims.parts import Part, fmt, fmt_iv, outcome, part_text
from banditrepro.claims.registry import META, TESTS, _claim_args, test, validate
from banditrepro.layout import Layout
from banditrepro.manifest import Figure
from banditrepro.verdicts import Outcome

__all__ = ["COLUMNS", "META", "TESTS", "Context", "NotRun", "Part", "check_all", "check_figure", "fmt", "fmt_iv",
           "outcome", "part_text", "test", "validate", "write_claims"]

COLUMNS = ["paper", "figure", "claim_id", "claim", "test", "measured", "ci_low", "ci_high", "verdict"]


def check_figure(fig: Figure, table: pd.DataFrame, layout: Layout, claims=None) -> list[dict]:
    """Rows of ``claims`` (default: every claim of the figure)."""
    rows = []
    for claim in fig.claims if claims is None else claims:
        kind, args = _claim_args(claim)
        if kind not in TESTS:
            raise ReproError(f"{fig.stem}: claim {claim['id']}: unknown test kind {kind!r}")
        ctx = Context(fig, table, layout, claim_id=claim["id"])
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


def check_all(figures: list[Figure], layout: Layout) -> pd.DataFrame:
    """Every claim of ``figures`` checked against the figure tables and summaries of ``layout``: the papers'
    claims, then the challengers' rows (banditrepro.challengers), so a challenger only appends rows."""
    validate(figures)
    rows, added = [], []
    for fig in figures:
        if not fig.claims:
            continue
        table = pd.read_csv(layout.table(fig.paper, fig.id))
        rows += check_figure(fig, table, layout, [c for c in fig.claims if "challenger" not in c])
        added += check_figure(fig, table, layout, [c for c in fig.claims if "challenger" in c])
    return pd.DataFrame(rows + added, columns=COLUMNS)


def write_claims(figures: list[Figure], layout: Layout, out) -> list[str]:
    """Check every claim, write the CSV atomically; one line per claim for a log or the terminal."""
    df = check_all(figures, layout)
    write_text(out, df.to_csv(index=False, float_format="%.6g"))
    return [f"[{r.verdict}] {r.paper}/{r.figure}: {r.claim} — {r.measured}" for r in df.itertuples()]
