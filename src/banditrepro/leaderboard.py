"""Leaderboards (only with challengers): per paper, every line of each figure a challenger joined, ranked, with
its final regret relative to the paper's algorithm on every panel (``<results>/leaderboards/<paper>.*``).

Per figure the lines are ranked by their average rank by mean final regret over the panels that ran (ties:
the lower geometric mean of the ratios to the paper's algorithm); per panel each line shows mean final regret
/ that of the paper's algorithm with the paired 95 % bootstrap interval and beats / loses / inconclusive
(``banditrepro.standings``, the same intervals as the challengers' claim rows). Each challenger also gets rows
against the figure's strongest baseline. Files: a long CSV (one row per line, panel and opponent), Markdown
(one ranking table per figure) and a figure (ratios with intervals, one axes per figure, log scale).
"""

from __future__ import annotations

import math

import pandas as pd

from banditrepro import challengers, standings
from banditrepro.atomic import write_text
from banditrepro.claims.context import Context
from banditrepro.claims.parts import fmt, fmt_iv
from banditrepro.layout import Layout
from banditrepro.manifest import Figure

COLUMNS = ["paper", "figure", "rank", "algorithm", "label", "challenger", "average_rank", "geometric_ratio",
           "panel", "dataset", "horizon", "metric", "opponent", "opponent_label", "role", "ratio", "ci_low",
           "ci_high", "runs", "verdict", "runs_to_settle"]
PAPER, STRONGEST = standings.PAPER, standings.STRONGEST
REFERENCE = "reference"  # the paper's algorithm against itself


def figure_rows(fig: Figure, layout: Layout) -> list[dict]:
    """The leaderboard rows of one figure a challenger joined."""
    ctx = Context(fig, pd.DataFrame(), layout, claim_id="leaderboard")
    arena = challengers.arena_of(fig)
    ref = arena["paper_algorithm"]
    panels = standings.ran_panels(ctx)
    refs = {}
    for r in fig.panels[0].algorithms:
        refs.setdefault(r.key, r)
    keys = list(refs)
    if not panels:
        return []
    ranks = standings.average_ranks(ctx, keys, panels)
    geo = {k: standings.geometric_ratio(ctx, k, ref, panels) for k in keys}
    order = sorted(keys, key=lambda k: (ranks[k], geo[k], keys.index(k)))
    strongest, _ = standings.strongest(ctx, list(arena["baselines"]), ref, panels)
    rows = []
    for rank, key in enumerate(order, start=1):
        line = refs[key]
        against = [(ref, PAPER)] + ([(strongest, STRONGEST)] if line.challenger else [])
        for opp, role in against:
            for name, panel, metric in panels:
                c = standings.compare(ctx, name, panel, metric, key, opp)
                rows.append({"paper": fig.paper, "figure": fig.id, "rank": rank, "algorithm": key,
                             "label": line.label, "challenger": bool(line.challenger), "average_rank": ranks[key],
                             "geometric_ratio": geo[key], "panel": name, "dataset": panel.dataset,
                             "horizon": panel.horizon, "metric": metric, "opponent": opp,
                             "opponent_label": refs[opp].label, "role": role, "ratio": c.iv.estimate,
                             "ci_low": c.iv.low, "ci_high": c.iv.high, "runs": c.runs,
                             "verdict": REFERENCE if key == opp else c.verdict,
                             "runs_to_settle": c.settle if c.settle else math.nan})
    return rows


def table(figures: list[Figure], layout: Layout, paper: str) -> pd.DataFrame:
    rows = [r for f in challengers.arena_figures(figures, paper) for r in figure_rows(f, layout)]
    return pd.DataFrame(rows, columns=COLUMNS)


def markdown(df: pd.DataFrame, figures: list[Figure], paper: str) -> str:
    out = [f"# Leaderboard: {paper}", "",
           "Every line of each figure a challenger joined, ranked by its average rank by mean final regret over "
           "the figure's panels (1 = lowest regret). Per panel: mean final regret / that of the paper's algorithm "
           "with its paired 95 % bootstrap interval; *beats* (interval below 1), *loses* (above 1) or "
           "*inconclusive* (with the runs that would settle it). docs/decisions.md#challengers.", ""]
    for fig in challengers.arena_figures(figures, paper):
        d = df[(df.figure == fig.id) & (df.role == PAPER)]
        ref = fig.algorithm(challengers.arena_of(fig)["paper_algorithm"]).label
        out += [f"## {fig.id}: {fig.title}", "", f"Paper's algorithm: {ref}.", ""]
        if d.empty:
            out += ["_no panel ran_", ""]
            continue
        names = list(dict.fromkeys(d.panel))
        out += ["| rank | algorithm | average rank | geometric-mean ratio | " + " | ".join(names) + " |",
                "|---|---|---|---|" + "---|" * len(names)]
        for key in dict.fromkeys(d.algorithm):
            r = d[d.algorithm == key]
            cells = []
            for name in names:
                p = r[r.panel == name].iloc[0]
                cells.append(_cell(p))
            first = r.iloc[0]
            label = f"**{first.label}**" if first.challenger else first.label
            out.append(f"| {first['rank']} | {label} | {first.average_rank:.3g} | {fmt(first.geometric_ratio)} | "
                       + " | ".join(cells) + " |")
        s = df[(df.figure == fig.id) & (df.role == STRONGEST)]
        for key in dict.fromkeys(s.algorithm):
            r = s[s.algorithm == key]
            out += ["", f"{r.label.iloc[0]} against the strongest baseline, {r.opponent_label.iloc[0]}: "
                    + "; ".join(f"{p.panel} {_cell(p)}" for p in r.itertuples()) + "."]
        out.append("")
    return "\n".join(out) + "\n"


def _cell(p) -> str:
    if p.verdict == REFERENCE:
        return "1 (reference)"
    from banditrepro.verdicts import Interval

    text = f"{fmt_iv(Interval(p.ratio, p.ci_low, p.ci_high))} {p.verdict}"
    settle = p.runs_to_settle
    return text + (f" (≈{int(settle):,} runs)" if settle == settle else "")


def draw(df: pd.DataFrame, figures: list[Figure], paper: str, png, pdf) -> None:
    """Ratios to the paper's algorithm with intervals: one axes per figure, lines in rank order (top = 1),
    one marker and colour per panel, challengers' names in their colours; log x axis clipped to [1e-3, 1e3]."""
    from matplotlib import colormaps

    from banditrepro import plotting

    figs = [f for f in challengers.arena_figures(figures, paper) if not df[df.figure == f.id].empty]
    heights = [max(2.0, 0.32 * df[df.figure == f.id].algorithm.nunique() + 1.2) for f in figs] or [2.0]
    mpl_fig, axes = plotting.subplots(len(heights), 1, figsize=(8.0, sum(heights) + 0.6),
                                      gridspec_kw={"height_ratios": heights})
    palette, markers = colormaps["tab10"], "osD^v<>ph*"
    for ax, fig in zip(axes.ravel(), figs):
        d = df[(df.figure == fig.id) & (df.role == PAPER)]
        keys = list(dict.fromkeys(d.algorithm))
        names = list(dict.fromkeys(d.panel))
        for j, name in enumerate(names):
            shift = (j - (len(names) - 1) / 2) * min(0.6 / max(len(names), 1), 0.15)
            p = d[d.panel == name]
            y = [len(keys) - 1 - keys.index(k) + shift for k in p.algorithm]
            est = p.ratio.clip(1e-3, 1e3)
            lo, hi = p.ci_low.clip(1e-3, 1e3), p.ci_high.clip(1e-3, 1e3)
            ax.errorbar(est, y, xerr=[(est - lo).clip(lower=0), (hi - est).clip(lower=0)], fmt=markers[j % 10],
                        color=palette(j % 10), ms=4, lw=1, capsize=2, label=name)
        ax.axvline(1.0, color="#555555", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yticks(range(len(keys)))
        first = d.drop_duplicates("algorithm").set_index("algorithm")
        ax.set_yticklabels([f"{int(first.loc[k, 'rank'])}. {first.loc[k, 'label']}" for k in reversed(keys)])
        refs = {r.key: r for r in fig.panels[0].algorithms}
        for tick, k in zip(ax.get_yticklabels(), reversed(keys)):
            style = plotting.challenger_style(refs[k])
            if style:
                tick.set_color(style["color"])
                tick.set_fontweight("bold")
        ref = fig.algorithm(challengers.arena_of(fig)["paper_algorithm"]).label
        ax.set_title(f"{fig.id}: final regret / {ref} (95 % interval)", fontsize=9)
        ax.set_ylim(-0.7, len(keys) - 0.3)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7, frameon=True)
    mpl_fig.suptitle(f"Leaderboard: {paper} (challengers in colour)", fontsize=11)
    plotting.save(mpl_fig, png, pdf)


def build(figures: list[Figure], layout: Layout, paper: str, csv, md, png, pdf) -> pd.DataFrame:
    df = write_tables(figures, layout, paper, csv, md)
    draw(df, figures, paper, png, pdf)
    return df


def write_tables(figures: list[Figure], layout: Layout, paper: str, csv, md) -> pd.DataFrame:
    """The leaderboard as CSV and Markdown, without drawing (what ``banditrepro verify`` re-derives)."""
    df = table(figures, layout, paper)
    write_text(csv, df.to_csv(index=False, float_format="%.6g"))
    write_text(md, markdown(df, figures, paper))
    return df


# --- what the workflow asks (workflow/rules/leaderboard.smk; the job's body: workflow/jobs.py) ------------


def papers(figures: list[Figure]) -> list[str]:
    """The papers that get a leaderboard: those a challenger joined."""
    return challengers.papers_with_challengers(figures)


def targets(figures: list[Figure], layout: Layout) -> list[str]:
    return [t for p in papers(figures) for t in layout.leaderboard_outputs(p)]


def tables(figures: list[Figure], layout: Layout) -> list[str]:
    """The leaderboards' CSVs (what the report reads); empty without challengers."""
    return [layout.leaderboard(p, "csv") for p in challengers.papers_with_challengers(figures)]


def inputs(figures: list[Figure], layout: Layout, paper: str) -> list[str]:
    """The tables of the paper's figures a challenger joined (their summaries exist once those are built)."""
    return [layout.table(f.paper, f.id) for f in challengers.arena_figures(figures, paper)]
