"""Figure kinds of the Winner Stays paper drawn from a prepared instance rather than from cells (registered into
banditrepro.figures.DRAWERS by figures.py):

- ``ws-matrices``: the supplement's tables, the preference matrices of the panels' datasets, read from
  ``data/prepared/<dataset>.json``; heat maps plus a stacked table (one row per arm).
- ``ws-rounds``: the idea of the paper's Fig. 1 drawn from a real run: ``ws_w_trace`` (literal Alg. 1) on a
  small instance, C(t, i) over t with the ends of rounds and iterations marked. No cells: its panel has
  ``algorithms: []``; the seed comes from ``banditrepro.seeds`` with ``options`` base_seed/seed_key/run.

The drawers import matplotlib (banditrepro.plotting: 1.0 s of import, python -X importtime) and the WS-W kernel
(0.2 s) inside their bodies: every plan loads this module (papers.load), only a figure job draws.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro.datasets.catalog import load_prepared
from banditrepro.layout import DEFAULT_BASE_SEED, Layout
from banditrepro.manifest import Figure
from banditrepro.papers.winner_stays.panels import panel_grid, panel_title
from banditrepro.seeds import cell_generator

# ----------------------------------------------------------------------------------------------------
# ws-matrices


def _prepared(dataset: str, layout: Layout) -> dict:
    path = Path(layout.prepared_file(dataset))
    if not path.exists():
        raise ReproError(f"prepared dataset not found: {path}")
    rec = json.loads(path.read_text())
    if rec.get("kind") != "duel" or rec.get("generative"):
        raise ReproError(f"{dataset}: not a fixed preference matrix" +
                         (" (a new instance per run; use its -fixed dataset)" if rec.get("generative") else ""))
    return rec


def matrices_table(fig: Figure, layout: Layout, decimals: int = 4) -> pd.DataFrame:
    """One row per arm of every panel's matrix: dataset, arm, label, CW flag, then p_{arm, j} for j = 0…K−1
    (blank beyond the dataset's K), rounded to ``decimals``."""
    decimals = int(fig.extra.get("decimals", decimals))
    frames = []
    width = 0
    for panel in fig.panels:
        rec = _prepared(panel.dataset, layout)
        P = np.asarray(rec["matrix"], dtype=float)
        width = max(width, len(P))
        cw = int(rec["condorcet_winner"])
        df = pd.DataFrame({"dataset": panel.dataset, "arm": np.arange(len(P)), "label": rec["labels"],
                           "condorcet_winner": ["yes" if i == cw else "" for i in range(len(P))]})
        vals = pd.DataFrame(np.round(P, decimals), columns=[f"p_vs_{j}" for j in range(len(P))])
        frames.append(pd.concat([df, vals], axis=1))
    table = pd.concat(frames, ignore_index=True)
    cols = ["dataset", "arm", "label", "condorcet_winner"] + [f"p_vs_{j}" for j in range(width)]
    return table.reindex(columns=cols)


def draw_matrices(fig: Figure, png, pdf, layout: Layout):
    from banditrepro import plotting

    rows, cols = panel_grid(fig)
    from matplotlib.patches import Rectangle

    mpl_fig, axes = plotting.subplots(rows, cols, figsize=(6.4 * cols, 5.6 * rows), layout="constrained")
    axes_flat = axes.ravel()
    image = None
    for ax, panel in zip(axes_flat, fig.panels):
        rec = _prepared(panel.dataset, layout)
        P = np.asarray(rec["matrix"], dtype=float)
        K = len(P)
        cw = int(rec["condorcet_winner"])
        image = ax.imshow(P, cmap="RdBu_r", vmin=0.0, vmax=1.0)
        size = 9 if K <= 8 else 5
        for i in range(K):
            for j in range(K):
                ax.text(j, i, f"{P[i, j]:.2f}", ha="center", va="center", fontsize=size,
                        color="white" if abs(P[i, j] - 0.5) > 0.3 else "black")
        ax.add_patch(Rectangle((-0.5, cw - 0.5), K, 1, fill=False, lw=1.6, ec="black"))
        names = [f"{i}: {lab}" + (" (CW)" if i == cw else "") for i, lab in enumerate(rec["labels"])]
        ax.set_yticks(range(K), names, fontsize=7)
        ax.set_xticks(range(K), [str(i) for i in range(K)], fontsize=7)
        ax.grid(False)
        ax.set_xlabel("j")
        ax.set_title(panel_title(panel, layout) + f"\np_ij = Pr(i beats j), min gap {rec['min_margin']:.3f}")
    for ax in axes_flat[len(fig.panels):]:
        ax.set_visible(False)
    if image is not None:
        mpl_fig.colorbar(image, ax=list(axes_flat[:len(fig.panels)]), shrink=0.8)
    mpl_fig.suptitle(fig.title, fontsize=11)
    plotting.save(mpl_fig, png, pdf, tight=False)  # the colorbar spans the axes: bbox "tight" instead


# ----------------------------------------------------------------------------------------------------
# ws-rounds


def rounds_trace(fig: Figure, layout: Layout):
    """(panel, instance, trace) of the rounds figure: literal WS-W on the panel's dataset for T = horizon
    steps, with the generator ``cell_generator(base_seed, seed_key, run)``."""
    from banditrepro.algorithms.winner_stays import ws_w_trace

    if len(fig.panels) != 1:
        raise ReproError(f"{fig.stem}: a ws-rounds figure has exactly one panel")
    panel = fig.panels[0]
    inst = load_prepared(Path(layout.prepared_file(panel.dataset)))
    if inst.kind != "duel" or getattr(inst, "generative", False):
        raise ReproError(f"{fig.stem}: {panel.dataset} is not a fixed preference matrix")
    opts = fig.extra
    rng = cell_generator(int(opts.get("base_seed", DEFAULT_BASE_SEED)), str(opts.get("seed_key", fig.stem)),
                         int(opts.get("run", 0)))
    return panel, inst, ws_w_trace(inst.P, panel.horizon, rng)


def iterations(C: np.ndarray, pairs: np.ndarray, round_ends: np.ndarray) -> list[dict]:
    """Split a WS-W trace into iterations (paper §4): in round ℓ an iteration ends at the step after which
    one of its two arms sits at C = −ℓ. The last iteration may be cut off by the horizon."""
    T = len(pairs)
    out = []
    start = 0
    ell = 1
    n_round_ends = 0
    it = 0
    for t in range(T):
        i, j = int(pairs[t, 0]), int(pairs[t, 1])
        ended = min(C[t, i], C[t, j]) == -ell
        if ended or t == T - 1:
            loser = i if C[t, i] == -ell else j
            it += 1
            round_end = n_round_ends < len(round_ends) and round_ends[n_round_ends] == t + 1
            out.append({"round": ell, "iteration": it, "t_start": start + 1, "t_end": t + 1,
                        "length": t + 1 - start, "arm_i": i, "arm_j": j,
                        "winner": (i + j - loser) if ended else -1, "complete": bool(ended),
                        "round_end": bool(round_end)})
            start = t + 1
            if round_end:
                n_round_ends += 1
                ell += 1
                it = 0
    return out


def rounds_table(fig: Figure, layout: Layout) -> pd.DataFrame:
    panel, inst, tr = rounds_trace(fig, layout)
    rows = iterations(tr.C, tr.pairs, tr.round_ends)
    df = pd.DataFrame(rows)
    df.insert(0, "horizon", panel.horizon)
    df.insert(0, "dataset", panel.dataset)
    df["winner_label"] = [inst.labels[w] if w >= 0 else "" for w in df["winner"]]
    df["winner_is_cw"] = df["winner"] == inst.condorcet_winner
    return df


def draw_rounds(fig: Figure, png, pdf, layout: Layout):
    from matplotlib import colormaps

    from banditrepro import plotting

    panel, inst, tr = rounds_trace(fig, layout)
    T, K = tr.C.shape
    its = iterations(tr.C, tr.pairs, tr.round_ends)
    mpl_fig, axes = plotting.subplots(2, 1, figsize=(9.0, 6.0), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1]})
    ax, strip = axes[:, 0]
    t = np.arange(0, T + 1)
    palette = colormaps["tab10"]
    cw = inst.condorcet_winner
    for k in range(K):
        c = np.concatenate([[0], tr.C[:, k]])
        lab = f"{k}: {inst.labels[k]}" + (" (CW)" if k == cw else "")
        ax.step(t, c, where="post", color=palette(k % 10), lw=2.2 if k == cw else 1.2, label=lab)
        sel = (tr.pairs[:, 0] == k) | (tr.pairs[:, 1] == k)
        strip.scatter(np.flatnonzero(sel) + 1, np.full(sel.sum(), k), s=4, marker="s", color=palette(k % 10))
    for row in its:
        if row["complete"] and not row["round_end"]:
            for a in (ax, strip):
                a.axvline(row["t_end"] + 0.5, color="#999999", lw=0.6, ls=":")
    labels = []
    for ell, end in enumerate(tr.round_ends, start=1):
        for a in (ax, strip):
            a.axvline(end + 0.5, color="black", lw=1.0)
        labels.append(ax.annotate(f"ℓ={ell}", (end + 0.5, 1.0), xycoords=ax.get_xaxis_transform(), xytext=(0, 2),
                                  textcoords="offset points", fontsize=6, ha="center", va="bottom"))
    ax.set_ylabel("C(t, i) = net wins")
    title = (panel_title(panel, layout) + f", T = {T}: {len(tr.round_ends)} complete rounds (ends: solid, "
             f"ℓ above), {sum(r['complete'] for r in its)} complete iterations (ends: dotted)")
    ax.set_title(title, pad=28)
    ax.legend(loc="upper left", fontsize=7, frameon=True)
    strip.set_yticks(range(K))
    strip.set_ylim(-0.5, K - 0.5)
    strip.set_ylabel("arms dueled")
    strip.set_xlabel("t")
    strip.set_xlim(0, T + 1)
    mpl_fig.suptitle(fig.title, fontsize=11)
    # stack the labels of close round ends on as many levels as they need, measured in the final layout
    mpl_fig.tight_layout()
    plotting.place_apart(mpl_fig, labels, [(0, 2 + 10 * k, "center") for k in range(8)])
    ax.set_title(title, pad=max((t.xyann[1] for t in labels), default=0) + 14)
    plotting.save(mpl_fig, png, pdf)
