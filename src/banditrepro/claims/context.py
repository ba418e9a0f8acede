"""What a claim test may read (``Context``): the figure, its table, the summaries behind it and the layout.

Runs are paired by run index (the cells of one (dataset, T) share their random streams), so every comparison
goes through ``Context.paired``; every bootstrap seed comes from ``verdicts.seed_of``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.aggregate import load_summary
from banditrepro.figures.panels import panel_status
from banditrepro.layout import Layout
from banditrepro.manifest import Figure
from banditrepro.verdicts import Interval


class NotRun(Exception):
    """Raised inside a test when its data cannot be read; the claim becomes `not run` with this reason."""


class Context:
    """What a test may read: the figure, its table, the summaries behind it (per-run finals) and the cells
    (per-run curves, for shares of the horizon)."""

    def __init__(self, fig: Figure, table: pd.DataFrame, layout: Layout, claim_id: str = ""):
        self.fig, self.table, self.layout = fig, table, layout
        self.claim_id = claim_id
        self.text = ""
        self.min_runs = 0
        self._cache: dict = {}

    def describe(self, text: str) -> str:
        """Record the test in words (used if the test stops with NotRun)."""
        self.text = text
        return text

    def seed(self, *tag) -> int:
        return vd.seed_of(self.fig.stem, self.claim_id, *tag)

    def panels(self, spec) -> tuple[list, list[str]]:
        """(panels to test, names of requested panels that were not run)."""
        chosen = list(self.fig.panels)
        if isinstance(spec, dict) and "all_except" in spec:
            chosen = [p for p in chosen if p.dataset not in spec["all_except"]]
        elif isinstance(spec, list):
            chosen = [p for p in chosen if p.dataset in spec]
        ran = [p for p in chosen if panel_status(p.dataset, self.layout)[0]]
        missing = [p.dataset for p in chosen if p not in ran]
        return ran, missing

    def ref(self, panel, key: str):
        ref = next((r for r in panel.algorithms if r.key == key), None)
        if ref is None:
            raise ReproError(f"{self.fig.stem}: no line {key!r} on panel {panel.title!r}")
        return ref

    def _per_run(self, path, array: str, missing: str) -> dict[int, float]:
        """{run index: value} of one per-run array of a summary, made once per (summary, array)."""
        if (path, array) not in self._cache:
            if not Path(path).exists():
                raise NotRun(f"summary {path} not found")
            s = load_summary(path)  # read once per process (aggregate.load_summary)
            if array not in s:
                raise NotRun(f"{path} has no {missing}")
            self._cache[(path, array)] = dict(zip(np.asarray(s["runs"]).tolist(),
                                                   np.asarray(s[array], dtype=float)))
        return self._cache[(path, array)]

    def runs_of(self, dataset: str, horizon: int, algo_id: str, metric: str | None = None) -> dict[int, float]:
        """Per-run final values {run index: final} of one cell's summary."""
        metric = metric or self.fig.metric
        path = self.layout.summary(dataset, int(horizon), algo_id)
        return self._per_run(path, f"{metric}_final", f"per-run {metric}")

    def finals(self, panel, key: str, metric: str | None = None) -> dict[int, float]:
        return self.runs_of(panel.dataset, panel.horizon, self.ref(panel, key).id, metric)

    def paired(self, *runs: dict, what: str = "") -> list[np.ndarray]:
        """Values of the runs common to all (same run index = same random streams: paired), one array per
        argument (a value that is a tuple gives a row); NotRun "no common runs<what>" if there are none."""
        common = sorted(set.intersection(*(set(r) for r in runs)))
        if not common:
            raise NotRun(f"no common runs{what}")
        n = len(common)
        self.min_runs = n if not self.min_runs else min(self.min_runs, n)
        return [np.array([r[i] for i in common]) for r in runs]

    def ratio(self, ra: dict[int, float], rb: dict[int, float], *tag, seed: int | None = None) -> Interval:
        """mean(a) / mean(b) over the common runs, paired bootstrap 95 % interval (seeded by the claim and
        ``tag``, or by ``seed``)."""
        a, b = self.paired(ra, rb)
        if a.size < 2:
            return vd.Interval(float(a.mean() / max(b.mean(), 1e-300)), -math.inf, math.inf)
        return vd.ratio_ci(a, b, seed=self.seed(*tag) if seed is None else seed)

    def panel_ratio(self, panel, a: str, b: str, metric: str | None = None) -> Interval:
        return self.ratio(self.finals(panel, a, metric), self.finals(panel, b, metric),
                          panel.dataset, panel.horizon, panel.title, metric, a, b)

    def late_runs(self, panel, key: str, metric: str | None = None) -> dict[int, tuple[float, float]]:
        """{run: (R(T/2), R(T))} from the cell's summary (per-run R at the last grid point ≤ T/2, and R(T))."""
        metric = metric or self.fig.metric
        path = self.layout.summary(panel.dataset, int(panel.horizon), self.ref(panel, key).id)
        finals = self.finals(panel, key, metric)
        half = self._per_run(path, f"{metric}_half",
                             f"per-run R(T/2) for {metric} (written by an older version: rerun)")
        return {r: (half[r], finals[r]) for r in finals}

    def late_share(self, panel, key: str, metric: str | None = None, minus: str | None = None) -> Interval:
        """Share of the mean final regret accrued over t in (T/2, T] (minus that of line ``minus``, paired),
        with a bootstrap interval over runs."""
        runs = [self.late_runs(panel, key, metric)] + ([self.late_runs(panel, minus, metric)] if minus else [])
        rows = self.paired(*runs, what=" for the late share")  # one (R(T/2), R(T)) row per common run
        cols = [r[:, j] for r in rows for j in (0, 1)]

        def share(h, f):
            tot = f.mean(axis=1)
            return np.where(tot > 0, (tot - h.mean(axis=1)) / np.where(tot > 0, tot, 1.0), 0.0)

        def stat(*c):
            return share(c[0], c[1]) - (share(c[2], c[3]) if len(c) > 2 else 0.0)

        if len(cols[0]) < 2:
            return Interval(float(stat(*[c[None, :] for c in cols])[0]), -math.inf, math.inf)
        return vd.bootstrap(stat, *cols, seed=self.seed("late", panel.dataset, panel.horizon, metric, key, minus))

    def final(self, panel, key: str) -> float:
        """Mean final regret of a line from the figure table (for descriptions; verdicts use intervals)."""
        rows = self.table[(self.table.dataset == panel.dataset) & (self.table.algorithm == key)
                          & (self.table.horizon == panel.horizon)]
        if rows.empty:
            raise ReproError(f"{self.fig.stem}: no row for {key} on {panel.dataset}")
        return float(rows.mean_final_regret.iloc[0])

    def curve(self, panel, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(grid, mean curve) of a line's summary."""
        s = load_summary(self.layout.summary(panel.dataset, panel.horizon, self.ref(panel, key).id))
        return s["grid"], s[f"{self.fig.metric}_mean"]

    def label(self, key: str) -> str:
        return self.fig.algorithm(key).label
