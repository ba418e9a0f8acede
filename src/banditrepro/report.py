"""A Markdown report: every figure with its caption and table, every claim with its verdict."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from banditrepro import algorithms as registry
from banditrepro.deviations import load_deviations
from banditrepro.layout import Layout
from banditrepro.manifest import Figure


def _md_table(df: pd.DataFrame, cols: list[str]) -> str:
    cols = [c for c in cols if c in df.columns]
    if df.empty or not cols:
        return "_no rows_\n"
    head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
    body = ""
    for _, r in df[cols].iterrows():
        cells = [f"{v:.4g}" if isinstance(v, float) else ("" if pd.isna(v) else str(v)) for v in r]
        body += "| " + " | ".join(cells) + " |\n"
    return head + body


def _challenger_ids(figures: list[Figure]) -> set[tuple[str, str, str]]:
    return {(f.paper, f.id, c["id"]) for f in figures for c in f.claims if "challenger" in c}


def _paper_rows(claims: pd.DataFrame, figures: list[Figure], challenger: bool = False) -> pd.DataFrame:
    """The papers' claim rows (or, with ``challenger``, the rows the challengers added)."""
    ids = _challenger_ids(figures)
    mask = [(r.paper, r.figure, r.claim_id) in ids for r in claims.itertuples()]
    return claims[[m == challenger for m in mask]] if len(claims) else claims


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _verdict_sentence(rows: pd.DataFrame) -> str:
    """'beats it on 2 panels (a, b), loses on 1 (c) and is inconclusive on 1 (d: ≈40 runs would settle it)'."""
    def names(word):
        picked = rows[rows.verdict == word]
        if word == "inconclusive":
            return [f"{r.panel}: ≈{int(r.runs_to_settle):,} runs would settle it"
                    if r.runs_to_settle == r.runs_to_settle else r.panel for r in picked.itertuples()]
        return list(picked.panel)

    parts = []
    for word, lead in (("beats", "beats it on"), ("loses", "loses on"), ("inconclusive", "is inconclusive on")):
        got = names(word)
        if got:
            parts.append(f"{lead} {len(got)} panel{'s' if len(got) != 1 else ''} ({'; '.join(got)})")
    if not parts:
        return "has no panel that ran"
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def challenger_section(figures: list[Figure], layout: Layout) -> list[str]:
    """Where each challenger stands, in sentences, from the leaderboards (nothing without challengers)."""
    from banditrepro import challengers
    from banditrepro.standings import PAPER, STRONGEST

    papers = challengers.papers_with_challengers(figures)
    if not papers:
        return []
    out = ["## Challengers", "",
           "Algorithms added with the config key `challengers` (not part of the papers): each is drawn into every "
           "figure it fits, in its own colour and labelled “challenger”. Below, per figure, its rank among the "
           "figure's lines (average rank by mean final regret over the panels) and, per panel, whether it beats "
           "or loses to the paper's algorithm and the strongest baseline (ratio of mean final regrets with its "
           "paired 95 % interval below or above 1). Leaderboards: `leaderboards/<paper>.md`.", ""]
    for paper in papers:
        df = pd.read_csv(layout.leaderboard(paper, "csv"))
        out += [f"### {paper}", "", f"![leaderboard {paper}](leaderboards/{paper}.png)", ""]
        for fig in challengers.arena_figures(figures, paper):
            d = df[df.figure == fig.id]
            n_lines = d.algorithm.nunique()
            for ref in challengers.challenger_refs(fig):
                mine = d[d.algorithm == ref.key]
                if mine.empty:
                    out.append(f"- In {fig.id}, {ref.label}: no panel ran.")
                    continue
                first = mine.iloc[0]
                vs_paper = mine[mine.role == PAPER]
                vs_best = mine[mine.role == STRONGEST]
                text = (f"- In {fig.id} ({fig.title}), {ref.label} ranks {_ordinal(int(first['rank']))} of {n_lines} "
                        f"lines (average rank {first.average_rank:.3g} over {len(vs_paper)} panels). Against "
                        f"{vs_paper.opponent_label.iloc[0]}, the paper's algorithm, it {_verdict_sentence(vs_paper)}.")
                if not vs_best.empty:
                    text += (f" Against the strongest baseline, {vs_best.opponent_label.iloc[0]}, it "
                             f"{_verdict_sentence(vs_best)}.")
                out.append(text)
        out.append("")
    return out


def build_report(figures: list[Figure], layout: Layout, claims_csv, runtime_csv, out) -> str:
    out = Path(out)
    claims = pd.read_csv(claims_csv)
    lines = ["# banditrepro report", ""]
    counts = _paper_rows(claims, figures).verdict.value_counts().to_dict() if not claims.empty else {}
    lines.append("Claims: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
                 + " (each claim's location, interval and the deviations from the papers: reproduction.md)\n")
    recon = sorted({r.label for f in figures for p in f.panels for r in p.algorithms
                    if registry.get(r.name).reconstructed})
    if recon:
        lines.append("Reconstructed algorithms (not the papers' own code or pseudocode): "
                     + ", ".join(recon) + ".\n")
    for paper in dict.fromkeys(f.paper for f in figures):
        lines.append(f"## {paper}\n")
        for fig in [f for f in figures if f.paper == paper]:
            rel = Path("figures") / fig.paper / f"{fig.id}.png"
            lines += [f"### {fig.title}", "", f"![{fig.id}]({rel.as_posix()})", "", fig.caption, ""]
            # the figure's own table (each kind tabulates what its paper reports, e.g. η for DP)
            lines.append(Path(layout.table(fig.paper, fig.id, "md")).read_text())
            fc = claims[(claims.paper == fig.paper) & (claims.figure == fig.id)]
            if not fc.empty:
                lines += ["Claims:", ""]
                for _, c in fc.iterrows():
                    ci = (f" (95 % interval [{c.ci_low:.4g}, {c.ci_high:.4g}])"
                          if "ci_low" in c and pd.notna(c.ci_low) and pd.notna(c.ci_high) else "")
                    lines.append(f"- **{c.verdict}** — {c.claim}. Test: {c.test}. Measured: {c.measured}{ci}.")
                lines.append("")
    lines += challenger_section(figures, layout)
    lines += provenance_section(layout, software=True)
    runtime = pd.read_csv(runtime_csv)
    lines += ["## Run time of the kernels", "", _md_table(runtime, list(runtime.columns))]
    text = "\n".join(lines) + "\n"
    from banditrepro.atomic import write_text

    write_text(out, text)
    return text


# ---------------------------------------------------------------------------------------------------
# results/reproduction.md: every claim with its location, test, interval and verdict; every deviation with
# its measured effect


DECISIONS = "docs/decisions.md"  # the project's own statement of what the papers leave open (repository root)

# Read once at the top of results/reproduction.md: every word the claim rows use, so no row needs the code.
_LEGEND = [
    "## How to read this report", "",
    "Every claim of the papers that the figures are meant to show is one section below: the paper's sentence, "
    "where the paper states it, the test that decides it, what was measured, and the verdict. Decisions the "
    f"papers leave open (instances, parameters, reconstructed algorithms, tolerances) are stated in "
    f"`{DECISIONS}` in the repository; links of the form `{DECISIONS}#section` point there.", "",
    "**Verdicts.** Each is decided by a 95 % interval of the measured quantity (a ratio or difference of mean "
    "final regrets with a bootstrap over paired runs, or the exact value of a formula), never by a point mean:",
    "",
    "- *reproduced*: the whole interval lies on the claim's side of its boundary;",
    "- *not reproduced*: the whole interval lies on the other side;",
    "- *inconclusive*: the interval contains the boundary; the row says roughly how many runs would settle it;",
    "- *vacuous*: the claim's premise never occurs (\"where X wins …\" and X never wins);",
    "- *not run*: the data could not be produced; the row says why.", "",
    "**Panels.** A claim over several panels (data sets, horizons, α values …) is tested on each; the measured "
    "text names each panel with its interval and one word: *holds* (that panel reproduces the claim), "
    "*contradicted* (that panel reproduces its opposite), *open* (that panel's interval contains the "
    "boundary). A claim \"on every panel\" needs every panel to hold and fails on one contradicted panel; "
    "\"on most panels\" needs more than half to hold and fails once at least half are contradicted; "
    "otherwise it is inconclusive.", "",
    "**Interval shown** (`ci_low`, `ci_high` in claims.csv) is the interval of the panel that decides the "
    "verdict: for a contradicted claim the first contradicted panel, for an inconclusive one the open panel "
    "that needs the most runs, for a reproduced one the panel closest to its boundary. "
    "A claim \"on most panels\" that needs m of n panels to hold shows the m-th best lower limit and the m-th "
    "best upper limit over the panels (the row names both panels), so its interval lies on the claim's side "
    "exactly when at least m panels' intervals do. A formula check shows its exact value (low = high).", "",
    "**Tolerances.** Where a paper uses an unquantified word (\"comparable\", \"flat\", \"small gap\") the test "
    "states the tolerance we chose, with its rationale, and the measured text gives the tolerance at which the "
    f"verdict would flip (`{DECISIONS}#claims-and-tolerances`).", "",
]


def deviation_effect(dev: dict, figures: list[Figure], layout: Layout) -> str:
    """Ratio of mean final regrets variant/ours per panel with a 95 % paired bootstrap interval."""
    from banditrepro import claims
    from banditrepro.figures.panels import panel_metrics

    eff = dev.get("effect")
    if not eff:
        return "— (no variant run)"
    by_stem = {f.stem: f for f in figures}
    fig, vfig = by_stem.get(eff["figure"]), by_stem.get(eff.get("variant_figure", eff["figure"]))
    if fig is None or vfig is None:
        return "not measured in this run"
    parts = []
    metrics = panel_metrics(fig)
    for k, panel in enumerate(fig.panels):
        ours = next((r for r in panel.algorithms if r.key == eff["ours"]), None)
        vpanel = next((p for p in vfig.panels if (p.dataset, p.horizon) == (panel.dataset, panel.horizon)), None)
        var = vpanel and next((r for r in vpanel.algorithms if r.key == eff["variant"]), None)
        if ours is None or var is None:
            continue
        metric = metrics[k]
        ctx = claims.Context(fig, pd.DataFrame(), layout, claim_id=f"deviation/{dev['id']}")
        name = f"{panel.dataset}" + (f"/{metric}" if metric != "regret" else "")
        try:
            iv = ctx.ratio(ctx.runs_of(panel.dataset, panel.horizon, var.id, metric),
                           ctx.runs_of(panel.dataset, panel.horizon, ours.id, metric), name)
        except claims.NotRun:
            parts.append(f"{name}: not run")
            continue
        parts.append(f"{name} {claims.fmt_iv(iv)}")
    if not parts:
        return f"not measured in this run (keys {eff['ours']!r}/{eff['variant']!r} not in {eff['figure']})"
    return "; ".join(dict.fromkeys(parts))


def _json(path) -> dict | list | None:
    import json

    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def provenance_section(layout: Layout, software: bool = False) -> list[str]:
    """Where the results came from and who checked them: the software stack (``software``: report.md), the
    bundles and folders merged in (received.json: banditrepro merge, with each bundle's sha256) and the last
    recorded verification (verification.json: banditrepro verify --record), each only if it describes this
    report's store entries (banditrepro/records.py: a record of another config's numbers in the same folder is
    not shown). What is shown is part of the report's name (workflow/names.py), so a new record gives a new
    report."""
    from banditrepro.records import shown

    lines = []
    stack = _json(layout.software_json) if software else None
    if isinstance(stack, dict):
        lines += [f"- Software: Python {stack.get('python')}, Snakemake {stack.get('snakemake')}, "
                  f"{len(stack.get('distributions', {}))} distributions (`software.json`)"]
    check, received = shown(layout)
    for entry in received:
        what = (f"bundle `{entry.get('source')}` (sha256 {entry['bundle_sha256']})" if entry.get("bundle_sha256")
                else f"folder `{entry.get('source')}`")
        lines.append(f"- Merged in: {what}: {entry.get('shards', 0)} shards")
    if check is not None:
        lines.append(f"- Verified ({check.get('checked_at', 'time not recorded')}, seed {check.get('seed')}, "
                     f"`banditrepro verify`): {check.get('summary', check.get('result'))}")
    return ["## Software and provenance", "", *lines, ""] if lines else []


def summary_stacks(path) -> set[str]:
    """The numerics stacks a cell's summary records in its sidecar (none for a missing summary or sidecar)."""
    from banditrepro.aggregate import summary_measures

    return set(summary_measures(path)["stacks"])


def stacks_section(figures: list[Figure], layout: Layout) -> list[str]:
    """Lines for reproduction.md naming every figure whose shards came from more than one numerics stack
    (numpy, numba, Python: cell.versions); none when each figure's came from one. Recompute with
    `banditrepro clean --shards [ALGO] --remove` (docs/decisions.md#recompute-on-request)."""
    mixed = []
    for f in figures:
        stacks = set().union(*(summary_stacks(layout.summary(p.dataset, p.horizon, a.id))
                               for p in f.panels for a in p.algorithms))
        if len(stacks) > 1:
            mixed.append(f"- figure `{f.id}` ({f.paper}): its shards came from {len(stacks)} stacks: "
                         + "; ".join(sorted(stacks)))
    if not mixed:
        return []
    return ["## Numerics stacks", "",
            "The shards behind these figures were computed with more than one numerics stack (numpy, numba, "
            "Python), e.g. across an upgrade; their numbers may differ in the last digits from a run on one "
            "stack. `banditrepro clean --shards [ALGO] --remove` and a new run recompute them on this one.", "",
            *mixed, ""]


def _cell(text) -> str:
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return ""
    return str(text).replace("|", "\\|").replace("\n", " ")


def build_reproduction(figures: list[Figure], layout: Layout, claims_csv, deviations, out) -> str:
    """results/reproduction.md, written atomically: per paper, per claim the paper's sentence and its
    location, the test, the measured value with its interval, the verdict and, when it is not reproduced
    (or vacuous), one line of why; then every deviation from the papers with its measured effect."""
    from banditrepro import verdicts as vd
    from banditrepro.atomic import write_text

    every = pd.read_csv(claims_csv)
    claims, added = _paper_rows(every, figures), _paper_rows(every, figures, challenger=True)
    meta = {(f.paper, f.id, c["id"]): c for f in figures for c in f.claims}
    counts = claims.verdict.value_counts().to_dict() if not claims.empty else {}
    lines = ["# Reproduction report", "",
             f"{len(claims)} claims: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in vd.VERDICTS) + ".", "",
             *_LEGEND]
    sections = [(f"## {paper}", claims[claims.paper == paper]) for paper in dict.fromkeys(claims.paper)]
    if len(added):  # the challengers' rows (config key `challengers`): after the papers', never among them
        sections.append(("## Challengers (rows added by the config key `challengers`, not claims of the papers)",
                         added))
    for heading, rows in sections:
        lines += [heading, ""]
        for r in rows.itertuples():
            c = meta.get((r.paper, r.figure, r.claim_id), {})
            ci = (f" — interval [{r.ci_low:.4g}, {r.ci_high:.4g}]"
                  if pd.notna(r.ci_low) and pd.notna(r.ci_high) else "")
            lines += [f"### `{r.claim_id}` — **{r.verdict}**", "",
                      f"> {r.claim}", "",
                      f"- Where: {c.get('where', 'location not given')} (figure `{r.figure}`)",
                      f"- Test: {r.test}"
                      + (f" Tolerance rationale: {c['test']['rationale']}" if c.get("test", {}).get("rationale")
                         else ""),
                      f"- Measured: {r.measured}{ci}",
                      f"- Verdict: **{r.verdict}**"]
            if r.verdict in (vd.NOT_REPRODUCED, vd.VACUOUS, vd.INCONCLUSIVE) and c.get("why_not"):
                lines.append(f"- Why it may not reproduce: {c['why_not']}")
            lines.append("")
    lines += stacks_section(figures, layout)
    lines += provenance_section(layout)
    devs = load_deviations(deviations) if not isinstance(deviations, list) else deviations
    lines += ["## Deviations from the papers", "",
              "Every place where we depart from a paper's text or fill a gap it leaves open "
              f"(`config/deviations.yaml`; the reasons in `{DECISIONS}`). Effect: ratio of mean final regrets "
              "variant / ours per panel with a 95 % paired bootstrap interval (variant = the paper's text read "
              "literally, or the alternative setting of a reconstructed knob); \"— (no variant run)\" where "
              "no variant line is drawn.", "",
              "| id | paper | the paper | ours | measured effect (variant / ours) |", "|---|---|---|---|---|"]
    for d in devs:
        lines.append("| " + " | ".join(_cell(x) for x in (d["id"], d["paper"], d["what"], d["ours"],
                                                          deviation_effect(d, figures, layout))) + " |")
    text = "\n".join(lines) + "\n"
    write_text(out, text)
    return text
