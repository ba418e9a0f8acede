"""Plot styling shared by every figure: one colour per algorithm (from its spec) across the whole project.

Figures are built with matplotlib's object-oriented API (``Figure``, no pyplot state), so several can be
drawn in one process, even from the worker threads of an in-process Snakemake job.
"""

from __future__ import annotations

import threading

import matplotlib
import seaborn as sns
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# Figures share matplotlib's global font and text caches: in-process jobs (figures, leaderboards) draw one at a
# time, while cells keep the other cores
DRAW_LOCK = threading.Lock()

# challengers (config key `challengers`) in the order the config lists them: colours no algorithm uses
CHALLENGER_COLOURS = ("#000000", "#ff00ff", "#00a087", "#a65628", "#4d4dff")


def challenger_style(ref) -> dict | None:
    """Colour and line of a challenger's line (``AlgoRef.challenger`` > 0): its own colour, long dashes, drawn
    on top; None for a line of the manifest (which keeps its algorithm's colour)."""
    k = getattr(ref, "challenger", 0)
    if not k:
        return None
    return {"color": CHALLENGER_COLOURS[(k - 1) % len(CHALLENGER_COLOURS)], "ls": (0, (7, 2)), "lw": 2.2,
            "zorder": 4}


def color_for(name: str, variant: int = 0, n_variants: int = 1):
    """The algorithm's colour (its spec's ``colour``, the same in every figure of every paper); several parameter
    variants of one algorithm in one axes get shades."""
    from banditrepro import algorithms

    base = algorithms.get(name).line_colour
    if n_variants <= 1:
        return base
    shades = sns.light_palette(base, n_colors=n_variants + 2)[2:]
    return shades[variant]


def spread_shades(name: str, n: int) -> list:
    """``n`` clearly different shades of the algorithm's colour, light to dark (``color_for``'s shades of a
    light palette look alike from three variants on)."""
    base = color_for(name)
    if n <= 1:
        return [base]
    light, dark = sns.light_palette(base, n_colors=3)[1], sns.dark_palette(base, n_colors=3)[1]
    return sns.blend_palette([light, base, dark], n_colors=n)


def place_apart(fig, texts, offsets, fixed=(), within=None) -> None:
    """Give each annotation of ``texts`` (in order) the first of ``offsets`` — (dx, dy, ha), points from its
    anchor — at which it keeps 2 pt from the annotations placed before it and from the ``fixed`` artists
    (and lies inside the pixel box ``within``); else the offset with the fewest clashes. Boxes are measured
    in the current layout: call it after ``fig.tight_layout()``."""
    taken = [a.get_window_extent() for a in fixed]
    pad = fig.dpi / 72

    def clashes(box):
        outside = within is not None and not (within.x0 <= box.x0 and box.x1 <= within.x1
                                               and within.y0 <= box.y0 and box.y1 <= within.y1)
        return outside + sum(box.padded(pad).overlaps(b.padded(pad)) for b in taken)

    for t in texts:
        scored = []
        for dx, dy, ha in offsets:
            t.xyann = (dx, dy)
            t.set_ha(ha)
            scored.append((clashes(t.get_window_extent()), (dx, dy, ha)))
            if scored[-1][0] == 0:
                break
        dx, dy, ha = min(scored, key=lambda s: s[0])[1]
        t.xyann = (dx, dy)
        t.set_ha(ha)
        taken.append(t.get_window_extent())


def setup():
    """The project's style (global rcParams): applied once, when this module is first imported."""
    sns.set_theme(style="whitegrid", context="paper", font_scale=1.0)
    # plain tick numbers up to 10^8 (horizons reach 10^7): no "1e6" offset beside one panel's axis. Laid out at
    # the PNG's dpi: text sizes are cached per renderer, so the layout's measures serve the PNG's draw (4 % less
    # figure CPU than laying out at 110 dpi; the layout moved by a fraction of a pixel)
    matplotlib.rcParams.update({"figure.dpi": 150, "savefig.dpi": 150, "axes.titlesize": 10,
                                "legend.fontsize": 8, "axes.formatter.useoffset": False,
                                "axes.formatter.limits": (-5, 9),
                                # titles fixed at the axes' top: the automatic placement measures each titled axes'
                                # x and y axes again in every layout pass and draw, to clear ticks or an offset text
                                # above the axes, which no figure here has: 9 % less figure CPU, the same bytes
                                "axes.titley": 1.0,
                                # zlib level 1 instead of 6 for the PDFs' streams (PNG: ``SAVE_OPTIONS``): the 19
                                # figures write 0.5 MB more and cost 0.5 CPU-s less (docs/performance.md)
                                "pdf.compression": 1})


setup()


def subplots(rows: int, cols: int, width: float = 4.2, height: float = 3.2, *, figsize=None,
             layout=None, **kwargs):
    """A new ``Figure`` with a ``rows`` × ``cols`` array of axes (always 2-D), on an Agg canvas."""
    fig = Figure(figsize=figsize or (width * cols, height * rows), layout=layout)
    # A bare Figure has no renderer of its own: every layout query (tight_layout, each tick label's extent)
    # built a new one, and text sizes are cached per renderer, so each query measured every label again. The
    # Agg canvas keeps one renderer per size and dpi: 12 % less figure CPU, the same bytes (docs/performance.md)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(rows, cols, squeeze=False, **kwargs)


def unavailable(ax, title: str, reason: str):
    ax.set_title(title)
    ax.text(0.5, 0.5, "requires network access\n" + reason, ha="center", va="center", wrap=True,
            fontsize=8, transform=ax.transAxes, color="#aa0000")
    ax.set_xticks([])
    ax.set_yticks([])


def _wrap_title(fig) -> None:
    """Let the figure title wrap at the figure's edges: a long title on a one-panel figure (4.2 in wide)
    was clipped on both sides, since a layout engine moves axes but never shortens text."""
    title = fig.get_suptitle()
    for text in fig.texts:
        if title and text.get_text() == title:
            text.set_wrap(True)


def save_with_legend(fig, legend: dict, png: str, pdf: str, max_cols: int, **legend_kw):
    """One figure legend below the panels (rows of at most ``max_cols`` entries, room kept for them), then
    ``save``; without entries, just ``save``."""
    if not legend:
        return save(fig, png, pdf)
    ncol = min(len(legend), max_cols)
    lines = -(-len(legend) // ncol)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=ncol, frameon=True, **legend_kw)
    height = fig.get_size_inches()[1]
    save(fig, png, pdf, rect=(0, (0.2 + 0.22 * lines) / height, 1, 1))


def _thin_crowded_ticks(fig) -> bool:
    """Fewer ticks on an auto-located axis whose tick labels come within 2 pt of each other (plain numbers
    are long: 10000000 at T = 10^7); axes whose labels stand apart keep their ticks. True if any changed."""
    from matplotlib.ticker import MaxNLocator

    pad = fig.dpi / 72
    changed = False
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            loc = axis.get_major_locator()
            while ax.get_visible() and isinstance(loc, MaxNLocator):
                lo, hi = sorted(axis.get_view_interval())
                locs = axis.get_majorticklocs()
                boxes = [t.get_window_extent().padded(pad) for t, x in zip(axis.get_majorticklabels(), locs)
                         if lo <= x <= hi and t.get_text()]
                if len(boxes) < 3 or not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:])):
                    break
                loc.set_params(nbins=len(boxes) - 2)
                changed = True
    return changed


# per format: the PDF without a creation date (same bytes from the same figure); the PNG at zlib level 1
SAVE_OPTIONS = {"pdf": {"metadata": {"CreationDate": None}}, "png": {"pil_kwargs": {"compress_level": 1}}}


def save(fig, png: str, pdf: str, rect=None, tight: bool = True):
    """Write PNG and PDF atomically (the PDF without a creation date). ``rect`` keeps room for a figure
    legend; ``tight=False`` (colour-bar layouts) crops with ``bbox_inches="tight"`` instead."""
    from banditrepro.atomic import atomic_path

    _wrap_title(fig)
    if tight:
        fig.tight_layout(rect=rect)
    if _thin_crowded_ticks(fig) and tight:
        fig.tight_layout(rect=rect)
    if tight:
        # tight_layout leaves a placeholder layout engine, for which every savefig draws the whole figure once
        # more before drawing it for real; the layout is final here, so each format draws once (same bytes;
        # docs/performance.md#first-run-and-pipeline-cpu-against-kernel-cpu-issue-31)
        fig.set_layout_engine(None)
        crop = None
    else:
        # a constrained layout runs again in every draw, and bbox_inches="tight" draws once more to measure: four
        # full draws for two formats. Lay out once, keep that layout, and crop both formats to the box measured
        # once (what "tight" would pad it by): two draws
        fig.draw_without_rendering()
        fig.set_layout_engine(None)
        crop = fig.get_tightbbox().padded(matplotlib.rcParams["savefig.pad_inches"])
    for path, fmt in ((png, "png"), (pdf, "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, bbox_inches=crop, **SAVE_OPTIONS[fmt])
