"""What every figure kind reads per panel: whether its dataset ran, the substitute label of its instance, the
final-regret columns of a line, and the metric of each panel."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from banditrepro import ReproError
from banditrepro.aggregate import final_stats
from banditrepro.layout import Layout


def panel_status(dataset: str, layout: Layout) -> tuple[bool, str]:
    """(whether a panel's dataset ran, why not): probes.dataset_ran, optional meaning a dataset the layout's names
    record a probe for (``names.probes``; a layout made by hand has none: its status files alone decide). The
    workflow probes every optional dataset before any figure of it is drawn."""
    from banditrepro.probes import dataset_ran, probe_verdict

    path = layout.status_file(dataset)
    optional = layout.names is not None and dataset in layout.names.probes
    return (True, "") if dataset_ran(path, optional) else (False, probe_verdict(path).reason)


def instance_note(dataset: str, layout: Layout) -> str:
    """'substitute …' for datasets that stand in for unavailable ones (labelled, never silent)."""
    path = Path(layout.prepared_file(dataset))
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


def panel_metrics(fig) -> list[str]:
    """The metric of every panel, in panel order: a ``metric`` attribute of the panel if the loader keeps
    one, else ``options.panel_metrics`` (same length as ``panels``), else the figure's metric."""
    listed = fig.extra.get("panel_metrics")
    if listed is not None and len(listed) != len(fig.panels):
        raise ReproError(f"{fig.stem}: options.panel_metrics has {len(listed)} entries for "
                         f"{len(fig.panels)} panels")
    out = []
    for k, panel in enumerate(fig.panels):
        m = getattr(panel, "metric", None) or (listed[k] if listed is not None else fig.metric)
        if "regret" not in m:
            raise ReproError(f"{fig.stem}: panel {panel.title!r}: {m!r} is not a regret metric")
        out.append(m)
    return out
