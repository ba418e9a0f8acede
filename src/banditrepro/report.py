"""A Markdown report: every figure with its caption and table, every claim with its verdict."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from banditrepro import algorithms as registry
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


def build_report(figures: list[Figure], layout: Layout, claims_csv, runtime_csv, out) -> str:
    out = Path(out)
    claims = pd.read_csv(claims_csv)
    lines = ["# banditrepro report", ""]
    counts = claims.verdict.value_counts().to_dict() if not claims.empty else {}
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
    runtime = pd.read_csv(runtime_csv)
    lines += ["## Run time of the kernels", "", _md_table(runtime, list(runtime.columns))]
    text = "\n".join(lines) + "\n"
    from banditrepro.atomic import write_text

    write_text(out, text)
    return text


# ---------------------------------------------------------------------------------------------------
# results/reproduction.md: every claim with its location, test, interval and verdict; every deviation with
# its measured effect


def load_deviations(path) -> list[dict]:
    """config/deviations.yaml: a list under ``deviations`` of {id, paper, what, ours, effect?}."""
    import yaml

    from banditrepro import ReproError

    path = Path(path)
    if not path.exists():
        raise ReproError(f"deviations file not found: {path}")
    doc = yaml.safe_load(path.read_text()) or {}
    items = doc.get("deviations", [])
    for k, d in enumerate(items):
        missing = [f for f in ("id", "paper", "what", "ours") if not d.get(f)]
        if missing:
            raise ReproError(f"{path.name}: deviation {d.get('id', k)}: missing {', '.join(missing)}")
        eff = d.get("effect")
        if eff is not None and not all(eff.get(f) for f in ("figure", "ours", "variant")):
            raise ReproError(f"{path.name}: deviation {d['id']}: effect needs figure, ours and variant")
    return items


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

    claims = pd.read_csv(claims_csv)
    meta = {(f.paper, f.id, c["id"]): c for f in figures for c in f.claims}
    counts = claims.verdict.value_counts().to_dict() if not claims.empty else {}
    lines = ["# Reproduction report", "",
             f"{len(claims)} claims: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in vd.VERDICTS) + ".", "",
             "Each verdict is decided by a 95 % interval: a ratio or difference of mean final regrets with a "
             "paired bootstrap over runs, or the exact value of a formula. *reproduced*: the interval lies on the "
             "claim's side of its boundary; *not reproduced*: on the other side; *inconclusive*: it straddles "
             "the boundary (the measured text says roughly how many runs would settle it); *vacuous*: the "
             "claim's premise never occurs; *not run*: the data could not be produced. Claims over several "
             "panels need every panel, or more than half of them for \"most\".", ""]
    for paper in dict.fromkeys(claims.paper):
        lines += [f"## {paper}", ""]
        for r in claims[claims.paper == paper].itertuples():
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
    devs = load_deviations(deviations) if not isinstance(deviations, list) else deviations
    lines += ["## Deviations from the papers", "",
              "Effect: ratio of mean final regrets variant / ours per panel with a 95 % paired bootstrap "
              "interval (variant = the paper's text read literally or the alternative reading).", "",
              "| id | paper | the paper | ours | measured effect (variant / ours) |", "|---|---|---|---|---|"]
    for d in devs:
        lines.append("| " + " | ".join(_cell(x) for x in (d["id"], d["paper"], d["what"], d["ours"],
                                                          deviation_effect(d, figures, layout))) + " |")
    text = "\n".join(lines) + "\n"
    write_text(out, text)
    return text
