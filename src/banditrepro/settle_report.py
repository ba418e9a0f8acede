"""What ``banditrepro settle`` leaves beside an ordinary results folder: ``<results>/claims-settled.csv``,
``<results>/settle/settle.md`` (its "Settled verdicts" section) and ``<results>/settle/sequences.png``/``.pdf``
(every settled claim's confidence sequences against runs, the boundary 0 and the run count that decided it).
The default run's claims.csv and report.md are not touched (issue 45: they stay byte-identical)."""

from __future__ import annotations

import math
from pathlib import Path

from banditrepro import settle_statistic as st
from banditrepro.atomic import write_text


def _cell(x) -> str:
    if isinstance(x, float):
        return "" if math.isnan(x) else f"{x:.4g}"
    return str(x).replace("|", "\\|")


def markdown(rows: list[dict], state: dict) -> str:
    """The settle report: how it ran, then the "Settled verdicts" table."""
    rounds = state["rounds"]
    runs = sorted({n for r in rounds for n in r["cell_runs"].values()})
    last = rounds[-1]["cell_runs"] if rounds else {}
    grown = sum(n > state["first_round"] for n in last.values())
    lines = [
        "# Settle report", "",
        f"Rounds: {len(rounds)}; first round {state['first_round']} runs per cell, at most {state['max_runs']}; "
        f"cells now at {min(last.values(), default=0)}–{max(last.values(), default=0)} runs ({grown} of "
        f"{len(last)} above the first round's runs; run counts seen: {', '.join(map(str, runs))}). CPU: "
        f"{state['cpu_seconds']:.1f} s. Stopped: {state['stopped'] or 'not yet (run settle again to resume)'}.", "",
        f"Method: {st.METHOD} confidence sequences (docs/settle.md), α = {st.ALPHA} split by Bonferroni over the "
        "settled claims (`alpha_part` per statistic); a claim's verdict is decided at the first look (first round, "
        "2×, 4×, …) where its parts' sequences decide it, and never changes after. `verdict_finite_sample` is the "
        "betting sequence's verdict (no assumption); where it differs, the verdict rests on the stated "
        "assumption. Claims marked `fixed` keep their fixed-design verdict (why: the `assumption` column).", "",
        "## Settled verdicts", "",
        "| claim | verdict | method | decided at runs | finite-sample verdict | measured |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {_cell(r['paper'])}/{_cell(r['figure'])}/{_cell(r['claim_id'])} | {r['verdict']} | "
                     f"{r['method']} | {_cell(r['decided_at_runs']) or '—'} | "
                     f"{_cell(r['verdict_finite_sample']) or '—'} | {_cell(r['measured'])[:160]} |")
    lines += ["", "## Confidence sequences", "", "![every settled claim's confidence sequences](sequences.png)", "",
              "Each panel: one claim; each band one statistic's sequence (lower and upper bound after n runs), "
              "from the first look on, the boundary 0 dashed, the run count that decided the claim dotted.", ""]
    return "\n".join(lines)


def figure(traced, decisions, alpha, out_png: Path, out_pdf: Path, first: int = 1) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from banditrepro.settle_claims import stat_sequence

    shown = [t for t in traced if t.key in decisions]
    cols = max(1, min(4, len(shown)))
    rows = max(1, math.ceil(len(shown) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False)
    for ax in axes.flat[len(shown):]:
        ax.axis("off")
    for ax, t in zip(axes.flat, shown):
        d = decisions[t.key]
        for stats in t.parts:
            for s, values in stats:
                seq = stat_sequence(s, values, alpha[t.key])
                n = np.arange(first, len(values) + 1)  # from the first look: nothing is read before it
                ax.fill_between(n, seq.lower[first - 1:], seq.upper[first - 1:], alpha=0.15)
        ax.axhline(0.0, color="k", ls="--", lw=0.8)
        if d.decided_at:
            ax.axvline(d.decided_at, color="k", ls=":", lw=1.0)
        ax.set_xscale("log")
        ax.set_yscale("symlog")
        ax.set_title(f"{t.row['claim_id'][:38]}\n{d.verdict}" + (f" at {d.decided_at}" if d.decided_at else ""),
                     fontsize=7)
        ax.set_xlabel("runs", fontsize=7)
        ax.set_ylabel("CS of mean(statistic)", fontsize=7)
        ax.tick_params(labelsize=6)
    fig.tight_layout()
    for out in (out_png, out_pdf):
        tmp = out.with_name(f".{out.stem}.tmp{out.suffix}")
        fig.savefig(tmp, dpi=110, metadata={"CreationDate": None} if out.suffix == ".pdf" else None)
        tmp.replace(out)  # atomic: a reader never sees half a figure
    plt.close(fig)


def write(results: Path, folder: Path, traced, decisions, alpha, state) -> None:
    from banditrepro.settle_claims import settled_csv, settled_row

    rows = [settled_row(t, decisions.get(t.key), alpha.get(t.key)) for t in traced]
    folder.mkdir(parents=True, exist_ok=True)
    write_text(results / "claims-settled.csv", settled_csv(traced, decisions, alpha))
    write_text(folder / "settle.md", markdown(rows, state))
    figure(traced, decisions, alpha, folder / "sequences.png", folder / "sequences.pdf", state["first_round"])
