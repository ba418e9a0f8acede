"""Draw one manifest figure and write the table of the numbers behind it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.aggregate import final_stats, load_summary
from banditrepro.atomic import write_text
from banditrepro.manifest import Figure

SUMMARIES = "results/summaries"


def summary_file(dataset: str, horizon: int, algo_id: str, root: str = SUMMARIES) -> Path:
    return Path(root) / dataset / f"T{horizon}" / f"{algo_id}.npz"


def panel_status(dataset: str, status_dir: str | Path) -> tuple[bool, str]:
    path = Path(status_dir) / f"{dataset}.json"
    if not path.exists():
        return True, ""
    st = json.loads(path.read_text())
    return bool(st["available"]), st.get("reason", "")


def instance_note(dataset: str, prepared_dir: str | Path) -> str:
    """'substitute …' for datasets that stand in for unavailable ones (labelled, never silent)."""
    path = Path(prepared_dir) / f"{dataset}.json"
    if path.exists():
        rec = json.loads(path.read_text())
        if rec.get("substitute"):
            return rec.get("substitute_label", "substitute")
    return ""


def final_columns(summary: dict, metric: str) -> dict:
    """The table columns of one line's final regret: runs, mean, s.e., 95 % CI, mean batches."""
    st = final_stats(summary, metric)
    return {"status": "ok", "runs": st["runs"], "mean_final_regret": st["mean"], "se": st["se"],
            "ci95_low": st["ci_low"], "ci95_high": st["ci_high"],
            "batches_mean": float(np.mean(summary["n_batches"]))}


def curves_table(fig: Figure, status_dir, prepared_dir, root=SUMMARIES) -> pd.DataFrame:
    rows = []
    for panel in fig.panels:
        ok, reason = panel_status(panel.dataset, status_dir)
        for ref in panel.algorithms:
            row = {"paper": fig.paper, "figure": fig.id, "panel": panel.title, "dataset": panel.dataset,
                   "horizon": panel.horizon, "algorithm": ref.key, "label": ref.label, "algorithm_id": ref.id,
                   "metric": fig.metric, "note": instance_note(panel.dataset, prepared_dir)}
            if not ok:
                row.update(status="not-run", note=reason)
                rows.append(row)
                continue
            s = load_summary(summary_file(panel.dataset, panel.horizon, ref.id, root))
            row.update(final_columns(s, fig.metric), batches_max=int(np.max(s["n_batches"])))
            rows.append(row)
    return pd.DataFrame(rows)


def draw_curves(fig: Figure, png, pdf, status_dir, prepared_dir, root=SUMMARIES):
    from banditrepro import plotting

    rows, cols = fig.extra.get("layout") or (1, len(fig.panels))
    if rows * cols < len(fig.panels):
        raise ReproError(f"{fig.stem}: layout {rows}x{cols} too small for {len(fig.panels)} panels")
    mpl_fig, axes = plotting.subplots(rows, cols)
    axes_flat = axes.ravel()
    xscale = fig.axes.get("xscale", "linear")
    for ax, panel in zip(axes_flat, fig.panels):
        ok, reason = panel_status(panel.dataset, status_dir)
        title = panel.title
        note = instance_note(panel.dataset, prepared_dir)
        if note:
            title += f"\n[{note}]"
        if not ok:
            plotting.unavailable(ax, title, f"{panel.dataset} could not be obtained (no mirror holds it)")
            continue
        metric = fig.metric
        counts = Counter(r.name for r in panel.algorithms)
        seen = Counter()
        for ref in panel.algorithms:
            s = load_summary(summary_file(panel.dataset, panel.horizon, ref.id, root))
            color = plotting.color_for(ref.name, seen[ref.name], counts[ref.name])
            seen[ref.name] += 1
            t = s["grid"]
            ax.plot(t, s[f"{metric}_mean"], color=color, label=ref.label, lw=1.4)
            ax.fill_between(t, s[f"{metric}_lo"], s[f"{metric}_hi"], color=color, alpha=0.2, lw=0)
        ax.set_title(title)
        ax.set_xscale(xscale)
        ax.set_xlabel(fig.axes.get("x", "t"))
        ax.set_ylabel(fig.axes.get("y", metric))
        ax.set_yscale(fig.axes.get("yscale", "linear"))
        ax.legend(loc="upper left", frameon=True)
    for ax in axes_flat[len(fig.panels):]:
        ax.set_visible(False)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save(mpl_fig, png, pdf)


# kind -> (make_table(fig, status_dir, prepared_dir, root) -> DataFrame, draw(fig, png, pdf, status_dir,
# prepared_dir, root)); paper-specific kinds register themselves from their own modules below.
DRAWERS = {"curves": (curves_table, draw_curves)}


def register(kind: str, make_table, draw) -> None:
    DRAWERS[kind] = (make_table, draw)


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


def build_figure(fig: Figure, png, pdf, table, status_dir="data/status", prepared_dir="data/prepared",
                 root=SUMMARIES) -> pd.DataFrame:
    """Write the figure (PNG, PDF) and the table behind it as CSV plus Markdown and LaTeX beside it."""
    if fig.kind not in DRAWERS:
        raise ReproError(f"{fig.stem}: figure kind {fig.kind!r} is not implemented")
    make_table, draw = DRAWERS[fig.kind]
    df = make_table(fig, status_dir, prepared_dir, root)
    write_text(table, df.to_csv(index=False, float_format="%.6g"))
    write_text(Path(table).with_suffix(".md"), table_markdown(df))
    write_text(Path(table).with_suffix(".tex"), table_latex(df, fig.title))
    draw(fig, png, pdf, status_dir, prepared_dir, root)
    return df


# paper-specific figure kinds (each module calls register() at import)
from banditrepro import figures_c2b, figures_dp, figures_ws  # noqa: E402,F401
