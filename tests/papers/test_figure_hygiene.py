"""Figure hygiene: every figure of the three manifests, drawn by its real drawer from synthetic
summaries at the paper's horizons (10^3 … 10^7, plus the curve kinds moved to T = 10^7), has no offset or
scientific axis text, no text outside the saved figure, legends of at least 7 pt, and no two texts that touch.

The geometry is read from the figure as ``plotting.save`` left it (its layout pass done, its crop known)."""

from __future__ import annotations

import io
import json
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from matplotlib.transforms import Bbox

from banditrepro import challengers, plotting
from banditrepro.atomic import write_npz
from banditrepro.datasets.catalog import load_catalog
from banditrepro.figures import build_figure
from banditrepro.grid import regret_grid
from banditrepro.instances import PreferenceMatrix
from banditrepro.layout import Layout
from banditrepro.manifest import cells, load_manifest
from banditrepro.papers.dp_ts_ucb import privacy as pv
from tests.conftest import MSLR5
from tests.helpers import summary_file

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ["c2b", "dp-ts-ucb", "winner-stays"]
METRICS = ("regret", "weak_regret_binary", "weak_regret_utility", "strong_regret_binary", "strong_regret_utility")
CURVE_KINDS = {"curves", "ws-curves", "dp-curves", "dp-b-selection"}
LEGEND_MIN_PT = 7.0
GAP_PT = 1.0  # texts closer than this (each side) count as touching


def _figures():
    figs = [f for m in sorted((ROOT / "config" / "figures").glob("*.yaml")) for f in load_manifest(m, papers=PAPERS)]
    # the curve kinds again at T = 10^7, where a linear axis would print "1e7"
    big = [replace(f, id=f.id + "@1e7", panels=tuple(replace(p, horizon=10**7) for p in f.panels))
           for f in figs if f.kind in CURVE_KINDS]
    # the figures two challengers join (one more line per panel, a longer legend and caption)
    joined = challengers.join(figs, ["rmed2", "dp-se"], ROOT / "config" / "figures", PAPERS)
    added = [replace(f, id=f.id + "+challengers") for f in challengers.arena_figures(joined)]
    return figs + big + added


FIGURES = _figures()


def _summary(T: int, key: str, runs: int = 5) -> dict:
    """Regret curves of plausible size (final regret between T/1000 and T/2, varying with ``key``)."""
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    grid = regret_grid(T)
    s = {"grid": grid, "runs": np.arange(runs), "n_runs": np.int64(runs), "horizon": np.int64(T),
         "n_batches": rng.integers(1, 30, size=runs), "wall_seconds": np.ones(runs)}
    for m in METRICS:
        final = T * 10 ** rng.uniform(-3, -0.3)
        mean = final * (grid / T) ** rng.uniform(0.3, 1.0)
        s[f"{m}_mean"], s[f"{m}_lo"], s[f"{m}_hi"] = mean, 0.9 * mean, 1.1 * mean
        s[f"{m}_final"] = final * (1 + 0.05 * rng.standard_normal(runs))
    return s


def _write_matrix(folder: Path, name: str, P: np.ndarray) -> None:
    inst = PreferenceMatrix(P, name=name)
    rec = {"name": name, "kind": "duel", "matrix": inst.P.tolist(), "labels": list(inst.labels),
           "condorcet_winner": inst.condorcet_winner, "condorcet_label": inst.labels[inst.condorcet_winner],
           "min_margin": float(inst.gaps[inst.gaps > 0].min())}
    (folder / f"{name}.json").write_text(json.dumps(rec))


def _random_cw_matrix(K: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    U = np.sort(rng.uniform(size=K))[::-1]  # utilities: arm 0 beats everyone
    return 1 / (1 + np.exp(-(U[:, None] - U[None, :]) * 4))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    work = tmp_path_factory.mktemp("hygiene")
    prepared = work / "prepared"
    load_catalog(ROOT / "config" / "datasets.yaml").prepare("bernoulli5", work / "raw", prepared)
    _write_matrix(prepared, "mslr5", MSLR5)
    _write_matrix(prepared, "sushi16", _random_cw_matrix(16, 1))
    for ds, T, algo in cells(FIGURES):
        write_npz(summary_file(ds, T, algo, work / "summaries"), _summary(T, f"{ds}/{T}/{algo}"))
    return work


@pytest.fixture
def drawn(data, monkeypatch):
    """Draw one figure with its real drawer; return (matplotlib figure, pixel box of the saved image)."""
    saved = []
    real_save = plotting.save

    def spy(fig, png, pdf, rect=None, tight=True):
        real_save(fig, png, pdf, rect=rect, tight=tight)
        saved.append((fig, tight))

    monkeypatch.setattr(plotting, "save", spy)

    def draw(fig, root=None):
        out = data / "out" / fig.paper
        # ``root``: another results folder's summaries/ beside the same prepared instances
        layout = Layout(str(Path(root).parent if root else data), data_dir=str(data))
        build_figure(fig, layout, out / f"{fig.id}.png", out / f"{fig.id}.pdf", out / f"{fig.id}.csv")
        assert len(saved) == 1, f"{fig.stem}: expected one saved figure"
        mpl_fig, tight = saved[0]
        renderer = mpl_fig._get_renderer()
        mpl_fig.draw(renderer)  # the state the saved file shows (constrained layouts run here)
        if tight:
            box = mpl_fig.bbox
        else:  # bbox_inches="tight": the crop is the tight box plus savefig's pad (inches → pixels)
            pad = mpl_fig.dpi * 0.1
            box = mpl_fig.get_tightbbox(renderer).transformed(mpl_fig.dpi_scale_trans).padded(pad)
        return mpl_fig, box, renderer

    return draw



def _texts(fig, renderer) -> list[tuple[str, Bbox]]:
    """(description, pixel box) of every text a reader sees: figure titles and texts, legends (as one box),
    and per axes its titles, axis labels, drawn tick labels, texts and annotations."""
    out = []

    def add(what, artist):
        if artist.get_visible() and (not hasattr(artist, "get_text") or artist.get_text().strip()):
            out.append((what, artist.get_window_extent(renderer)))

    for t in fig.texts:
        add(f"figure text {t.get_text()!r}", t)
    for leg in fig.legends:
        add("figure legend", leg)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label):
            add(f"label {t.get_text()!r}", t)
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis._update_ticks():  # the ticks that are drawn (inside the view interval)
                for lab in (tick.label1, tick.label2):
                    add(f"tick label {lab.get_text()!r}", lab)
        for t in ax.texts:
            add(f"text {t.get_text()!r}", t)
        if ax.get_legend() is not None:
            add("legend", ax.get_legend())
    return out


def hygiene_problems(mpl_fig, box, renderer) -> list[str]:
    problems = []
    # (a) plain tick numbers: no "1e6" offset or "×10^k" text on any axis
    for ax in mpl_fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if ax.get_visible() and axis.get_offset_text().get_text():
                problems.append(f"offset text {axis.get_offset_text().get_text()!r} on {ax.get_title()!r}")
    # (c) legends readable
    legends = list(mpl_fig.legends) + [ax.get_legend() for ax in mpl_fig.axes if ax.get_legend() is not None]
    for leg in legends:
        small = {t.get_fontsize() for t in leg.get_texts() if t.get_fontsize() < LEGEND_MIN_PT}
        if small:
            problems.append(f"legend font {min(small):g} pt < {LEGEND_MIN_PT:g} pt")
    texts = _texts(mpl_fig, renderer)
    # (b) every text inside the saved image
    tol = 1.0
    for what, bb in texts:
        if bb.x0 < box.x0 - tol or bb.y0 < box.y0 - tol or bb.x1 > box.x1 + tol or bb.y1 > box.y1 + tol:
            problems.append(f"{what} outside the figure")
    # (d) no two texts touch
    gap = GAP_PT * mpl_fig.dpi / 72
    grown = [(w, bb.padded(gap)) for w, bb in texts]
    for i, (wa, a) in enumerate(grown):
        for wb, b in grown[i + 1:]:
            if a.overlaps(b):
                problems.append(f"{wa} touches {wb}")
    # (e) titles of panels side by side read as two titles: at least 3 em apart
    titles = [(ax.title, ax.title.get_window_extent(renderer)) for ax in mpl_fig.axes
              if ax.get_visible() and ax.title.get_text()]
    for i, (ta, a) in enumerate(titles):
        for tb, b in titles[i + 1:]:
            em = 3 * ta.get_fontsize() * mpl_fig.dpi / 72
            if a.y0 < b.y1 and b.y0 < a.y1 and max(b.x0 - a.x1, a.x0 - b.x1) < em:
                problems.append(f"titles {ta.get_text()!r} and {tb.get_text()!r} less than 3 em apart")
    return problems


def _report(fig, problems) -> str:
    problems = list(dict.fromkeys(problems))  # each kind of flaw once
    return f"{fig.stem}: " + "; ".join(problems[:8]) + (" …" if len(problems) > 8 else "")


@pytest.mark.parametrize("fig", FIGURES, ids=[f.stem for f in FIGURES])
def test_figure_hygiene(drawn, fig):
    problems = hygiene_problems(*drawn(fig))
    assert not problems, _report(fig, problems)


def test_frontier_labels_stay_apart_when_points_coincide(data, drawn):
    """Every line at the same final regret: the operating points of equal ε (equal privacy by design) sit on
    one spot, and their labels must still not meet."""
    fig = next(f for f in FIGURES if f.kind == "dp-frontier")
    root = data / "ties" / "summaries"
    for ds, T, algo in cells([fig]):
        s = _summary(T, "one value")
        write_npz(summary_file(ds, T, algo, root), s)
    mpl_fig, box, renderer = drawn(fig, root=root)
    ax = mpl_fig.axes[0]
    notes = [t for t in ax.texts if t.get_text()]
    assert len(notes) == len(fig.extra["operating_points"])
    problems = hygiene_problems(mpl_fig, box, renderer)
    assert not problems, _report(fig, problems)
    inside = ax.get_window_extent(renderer)
    assert all(inside.contains(*t.get_window_extent(renderer).min) and inside.contains(*t.get_window_extent(
        renderer).max) for t in notes)


def _contrast(a, b) -> float:
    """WCAG luminance contrast ratio of two colours (1 = same lightness)."""
    def lum(c):
        c = np.asarray(to_rgb(c))
        return float(np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4) @ [0.2126, 0.7152, 0.0722])

    lo, hi = sorted([lum(a), lum(b)])
    return (hi + 0.05) / (lo + 0.05)


def test_table1_alpha_rows_ordered_distinct_and_on_one_formula(data, drawn):
    fig = next(f for f in FIGURES if f.kind == "dp-bounds-table")
    mpl_fig, _, _ = drawn(fig)
    ax_regret, ax_eta = mpl_fig.axes[:2]
    listed = [t.get_text() for t in ax_regret.get_legend().get_texts()]
    dp = [x for x in listed if x.startswith("DP-TS-UCB")]
    alphas = [float(x.split("α=")[1].rstrip(")")) for x in dp]
    assert alphas == sorted(alphas) and len(alphas) == 3, listed
    lines = {ln.get_label(): ln for ln in ax_eta.get_lines() if not ln.get_label().startswith("_")}
    for family in ("DP-TS-UCB", "M-TS-G"):
        shades = [lines[x].get_color() for x in listed if x.startswith(family)]
        for a, b in zip(shades, shades[1:]):
            assert _contrast(a, b) >= 1.7, (family, shades)
    # the α = 0 row's O-form η keeps its logs exactly as the α row does: the α formula evaluated at α = 0
    mu = json.loads((data / "prepared" / "bernoulli5.json").read_text())["means"]
    T, eta = lines["DP-TS-UCB (α=0)"].get_data()
    expect = [pv.regret_bounds_table(t, mu, alpha=0.0)[4].eta for t in T]
    assert np.allclose(eta, expect, rtol=1e-9)


def test_layout_queries_share_one_renderer():
    """A figure keeps one renderer for its layout queries (tight_layout, tick-label extents): text sizes are
    cached per renderer, and a bare ``Figure`` built a new renderer, so a new cache, for every query."""
    fig, axes = plotting.subplots(1, 2)
    axes[0, 0].set_xlabel("horizon T")
    renderer = fig.canvas.get_renderer()  # a bare Figure's canvas has none to keep
    fig.tight_layout()
    assert fig.canvas.get_renderer() is renderer
    # laid out at the PNG's dpi: the PNG is drawn by the layout's renderer, with the text sizes it measured
    fig.savefig(io.BytesIO(), format="png")
    assert fig.canvas.get_renderer() is renderer


def test_titles_placed_without_measuring_the_axes_again():
    """A title sits at the axes' top without the automatic placement, which measured the y axis again in every
    layout pass and draw; it lands where that placement put it (no figure has ticks above its axes)."""
    from unittest import mock

    import matplotlib

    def titled():
        fig, axes = plotting.subplots(1, 2)
        for ax in axes.flat:
            ax.set_title("regret after T rounds")
            ax.set_xlabel("horizon T")
            ax.set_xscale("log")
            ax.plot([10, 10_000_000], [0.0, 12_345.0])
        fig.tight_layout()
        fig.canvas.draw()
        return fig

    fig = titled()
    ax = fig.axes[0]
    with mock.patch.object(ax.yaxis, "get_tightbbox", wraps=ax.yaxis.get_tightbbox) as measured:
        fig.canvas.draw()
    assert measured.call_count == 0
    with matplotlib.rc_context({"axes.titley": None}):  # matplotlib's automatic placement
        auto = titled()
    assert [a.title.get_window_extent().bounds for a in fig.axes] == \
        [a.title.get_window_extent().bounds for a in auto.axes]
