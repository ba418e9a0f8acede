"""Where the lines of one figure stand against each other (the challengers' claim rows and the leaderboard).

Per panel that ran, a line is compared with another by the ratio of their mean final regrets (the panel's
metric), with the paired 95 % bootstrap interval of ``claims.Context.ratio``: *beats* (interval below 1),
*loses* (above 1) or *inconclusive* (with roughly the runs that would settle it, ``verdicts.runs_to_settle``).
The bootstrap seed depends only on the figure, the panel and the two lines, so the claims table and the
leaderboard show the same interval for the same comparison.

The *strongest baseline* of a figure is the declared baseline with the lowest average rank by mean final
regret over the figure's panels that ran (ranked among the baselines; ties: the lower geometric mean of its
ratios to the paper's algorithm, then the manifest's order) — docs/decisions.md#challengers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from banditrepro import verdicts as vd
from banditrepro.claims.context import Context
from banditrepro.figures.panels import panel_metrics, panel_status
from banditrepro.manifest import Panel
from banditrepro.verdicts import Interval

BEATS, LOSES, OPEN = "beats", "loses", "inconclusive"
PAPER, STRONGEST = "paper's algorithm", "strongest baseline"  # the opponents of the leaderboard's rows


@dataclass(frozen=True)
class Comparison:
    """Line a against line b on one panel: mean final regret of a / of b over their common runs."""

    name: str  # the panel, as rows name it
    panel: Panel
    metric: str
    iv: Interval
    runs: int

    @property
    def verdict(self) -> str:
        if self.iv.high < 1.0:
            return BEATS
        if self.iv.low > 1.0:
            return LOSES
        return OPEN

    @property
    def settle(self) -> int | None:
        """Runs that would move an inconclusive interval off 1 (None: a single run, or on the boundary)."""
        if self.verdict != OPEN or self.runs < 2:
            return None
        try:
            return vd.runs_to_settle(self.iv, 1.0, self.runs)
        except OverflowError:  # an interval vastly wider than its distance to 1 (e.g. a zero-regret reference)
            return None

    def text(self, fmt_iv) -> str:
        extra = f", ≈{self.settle:,} runs would settle it" if self.settle else ""
        return f"{self.name} {fmt_iv(self.iv)} ({self.verdict}{extra})"


def ran_panels(ctx: Context) -> list[tuple[str, Panel, str]]:
    """(name, panel, metric) of every panel whose dataset ran; the name adds the metric where a dataset
    appears on several panels (one per metric)."""
    fig = ctx.fig
    pairs = [(p, m) for p, m in zip(fig.panels, panel_metrics(fig)) if panel_status(p.dataset, ctx.layout)[0]]
    datasets = [p.dataset for p, _ in pairs]
    return [(p.dataset if datasets.count(p.dataset) == 1 else f"{p.dataset} ({m})", p, m) for p, m in pairs]


def seed(fig, panel: Panel, metric: str, a: str, b: str) -> int:
    return vd.seed_of(fig.stem, "standing", panel.dataset, panel.horizon, panel.title, metric, a, b)


def compare(ctx: Context, name: str, panel: Panel, metric: str, a: str, b: str) -> Comparison:
    ra, rb = ctx.finals(panel, a, metric), ctx.finals(panel, b, metric)
    iv = ctx.ratio(ra, rb, seed=seed(ctx.fig, panel, metric, a, b))
    return Comparison(name, panel, metric, iv, len(set(ra) & set(rb)))


def mean_final(ctx: Context, panel: Panel, key: str, metric: str) -> float:
    return float(np.mean(list(ctx.finals(panel, key, metric).values())))


def average_ranks(ctx: Context, keys: list[str], panels) -> dict[str, float]:
    """Average over ``panels`` of each line's rank by mean final regret among ``keys`` (1 = lowest; ties
    share the average of their ranks)."""
    total = dict.fromkeys(keys, 0.0)
    for _, panel, metric in panels:
        means = {k: mean_final(ctx, panel, k, metric) for k in keys}
        for k in keys:
            below = sum(v < means[k] for v in means.values())
            equal = sum(v == means[k] for v in means.values())
            total[k] += below + (equal + 1) / 2
    return {k: v / max(len(panels), 1) for k, v in total.items()}


def geometric_ratio(ctx: Context, key: str, reference: str, panels) -> float:
    """Geometric mean over ``panels`` of mean final regret of ``key`` / of ``reference`` (point values)."""
    logs = []
    for _, panel, metric in panels:
        a, b = mean_final(ctx, panel, key, metric), mean_final(ctx, panel, reference, metric)
        logs.append(math.log(max(a, 1e-12) / max(b, 1e-12)))
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def strongest(ctx: Context, baselines: list[str], reference: str, panels) -> tuple[str, float]:
    """(key, average rank among the baselines) of the strongest baseline (module docstring)."""
    ranks = average_ranks(ctx, list(baselines), panels)
    order = {k: i for i, k in enumerate(baselines)}
    best = min(baselines, key=lambda k: (ranks[k], geometric_ratio(ctx, k, reference, panels), order[k]))
    return best, ranks[best]
