"""A Markdown report: every figure with its caption and table, every claim with its verdict."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from banditrepro import algorithms as registry
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


def build_report(figures: list[Figure], claims_csv, runtime_csv, out, tables_dir="results/tables") -> str:
    out = Path(out)
    claims = pd.read_csv(claims_csv)
    lines = ["# banditrepro report", ""]
    counts = claims.verdict.value_counts().to_dict() if not claims.empty else {}
    lines.append("Claims: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + "\n")
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
            lines.append((Path(tables_dir) / fig.paper / f"{fig.id}.md").read_text())
            fc = claims[(claims.paper == fig.paper) & (claims.figure == fig.id)]
            if not fc.empty:
                lines += ["Claims:", ""]
                for _, c in fc.iterrows():
                    lines.append(f"- **{c.verdict}** — {c.claim}. Test: {c.test}. Measured: {c.measured}.")
                lines.append("")
    runtime = pd.read_csv(runtime_csv)
    lines += ["## Run time of the kernels", "", _md_table(runtime, list(runtime.columns))]
    text = "\n".join(lines) + "\n"
    from banditrepro.atomic import write_text

    write_text(out, text)
    return text
