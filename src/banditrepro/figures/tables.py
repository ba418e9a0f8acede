"""A figure's table as Markdown and LaTeX (the CSV is pandas')."""

from __future__ import annotations

import pandas as pd


def table_markdown(df: pd.DataFrame) -> str:
    def cell(v):
        return f"{v:.6g}" if isinstance(v, float) else ("" if pd.isna(v) else str(v).replace("|", "\\|"))

    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def table_latex(df: pd.DataFrame, caption: str) -> str:
    def esc(v):
        text = f"{v:.6g}" if isinstance(v, float) else ("" if pd.isna(v) else str(v))
        for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#")):
            text = text.replace(a, b)
        return text

    body = [" & ".join(esc(c) for c in df.columns) + r" \\", r"\midrule"]
    body += [" & ".join(esc(v) for v in row) + r" \\" for row in df.itertuples(index=False)]
    return ("\\begin{table}[ht]\n\\centering\n\\small\n\\begin{tabular}{" + "l" * len(df.columns) + "}\n\\toprule\n"
            + "\n".join(body) + "\n\\bottomrule\n\\end{tabular}\n\\caption{" + esc(caption) + "}\n\\end{table}\n")
