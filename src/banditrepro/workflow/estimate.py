"""What a cluster run will submit and write, before anything runs: ``banditrepro estimate``.

It plans exactly as the workflow does under a cluster executor (``build_plan(..., binned=True)``: the same
chains, the same bins, the same existing files), without Snakemake, so it takes the parse's time (seconds)
and prints the SLURM submissions with their estimated and requested lengths, the CPU-hours, and the files
and bytes the run adds. Estimates come from the kernels' ns/step (banditrepro/jobsize.py: right within a
factor of a few) and from the shards' sizes (``bytes_per_run``).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import yaml

from banditrepro import ReproError, jobsize

# Per-run bytes of a shard: 8 bytes per grid point per regret curve, compressed to ~0.6 (measured on the test
# config's shards: 0.25-0.64 of the raw size), plus a few hundred bytes of its share of the file's zip and
# sidecar. The curves are the instance's metrics: 5 for a dueling instance, 1 for a multi-armed one.
COMPRESSION = 0.6
CURVES = {"duel": 5, "mab": 1}
# files besides the shards: a summary writes its .npz, its log and Snakemake's record of it; a figure its
# five outputs, a log and five records; claims, run-time table and report a handful
SUMMARY_FILES = 3
FIGURE_FILES = 11
FINAL_FILES = 12


def bytes_per_run(algo: str, horizon: int) -> float:
    from banditrepro import algorithms
    from banditrepro.grid import regret_grid

    curves = CURVES[algorithms.get(algo.split("+")[0]).problem]
    return 8 * len(regret_grid(horizon)) * curves * COMPRESSION + 300


def load_config(project: Path, configfiles=(), overrides=(), profile: str | None = None) -> dict:
    """The config Snakemake would see: config/config.yaml, then each ``--configfile``, then the profile's
    ``config:`` entries and each ``--config KEY=VALUE`` (values parsed as YAML, as Snakemake does)."""
    config = yaml.safe_load((project / "config/config.yaml").read_text()) or {}
    for f in configfiles:
        config.update(yaml.safe_load(Path(f).read_text()) or {})
    entries = list(overrides)
    if profile:
        settings = yaml.safe_load((Path(profile) / "config.yaml").read_text()) or {}
        given = settings.get("config", [])
        entries = ([given] if isinstance(given, str) else list(given)) + entries
    for entry in entries:
        key, sep, value = str(entry).partition("=")
        if not sep:
            raise ReproError(f"--config: expected KEY=VALUE, got {entry!r}")
        config[key] = yaml.safe_load(value)
    return config


def estimate(plan) -> dict:
    """Submissions, their lengths, CPU-hours, files and bytes of a binned plan (numbers, for ``report``)."""
    from banditrepro.figures.panels import panel_status
    from banditrepro.workflow.plan import split_key

    # an optional (network) dataset its probe found unavailable: no figure asks for its cells, none is
    # submitted (not probed yet counts as available, as for the figures: the run probes it)
    skip = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d) and not panel_status(d, plan.layout)[0]}
    bins = [b for b in plan.bins if b.shards and split_key(b.shards[0][0])[0] not in skip]
    todo = sorted(s for s in plan.missing if split_key(s[0])[0] not in skip)
    runs = sum(b - a + 1 for _, a, b in todo)
    seconds = sum(b.seconds for b in bins)
    data = sum((b - a + 1) * bytes_per_run(split_key(c)[2], split_key(c)[1]) for c, a, b in todo)
    touched = {c for c, _, _ in todo}
    files = 3 * len(todo) + len(bins) + SUMMARY_FILES * len(touched)
    if todo:
        files += FIGURE_FILES * len(plan.figures) + FINAL_FILES
    cells = [c for c in plan.chains if split_key(c)[0] not in skip]
    return {"cells": len(cells), "shards": sum(len(plan.chains[c]) for c in cells),
            "new_shards": len(todo), "new_runs": runs, "submissions": len(bins),
            "estimated_minutes": [b.seconds / 60 for b in bins], "requested_minutes": [b.minutes for b in bins],
            "cpu_hours": seconds / 3600, "files": files, "bytes": data}


def report(numbers: dict, partition_minutes=None) -> str:
    n = numbers
    lines = [f"cells: {n['cells']:,}; shards: {n['shards']:,}, of which {n['new_shards']:,} to compute "
             f"({n['new_runs']:,} runs)"]
    if not n["submissions"]:
        lines.append("SLURM submissions: 0 (every shard exists; summaries, figures, claims and the report run on "
                     "this host)")
    else:
        est, req = n["estimated_minutes"], n["requested_minutes"]
        lines += [
            f"SLURM submissions: {n['submissions']} (one per bin of shards; downloads, preparation, summaries, "
            "figures, claims and the report run on this host)",
            f"estimated length per submission: min {min(est):.1f}, median {statistics.median(est):.1f}, "
            f"max {max(est):.1f} min; requested --time (3 x estimate + 5 min): max {max(req)} min"
            + (f" (partition limit {partition_minutes} min)" if partition_minutes else ""),
            f"simulation: {n['cpu_hours']:.2f} CPU-hours estimated (kernel ns/step, {jobsize.RUN_SECONDS * 1e3:g} ms "
            "per run besides)"]
    lines.append(f"writes: about {n['files']:,} files, {n['bytes'] / 1e6:,.0f} MB of shards")
    return "\n".join(lines)


def run(project_info, configfiles=(), overrides=(), profile=None) -> str:
    """``banditrepro estimate``: plan as the workflow does under a cluster executor, in the project folder."""
    import os

    from banditrepro.workflow.plan import build_plan

    if project_info.root is None:
        raise ReproError(f"no project folder here ({project_info.hint()})")
    files = [Path(f).resolve() for f in configfiles]
    config = load_config(project_info.root, files, overrides, profile and Path(profile).resolve())
    os.chdir(project_info.root)  # the plan's paths (and the shards it looks for) are relative to the project
    plan = build_plan(config, project_info.root, binned=True)
    return report(estimate(plan), config.get("partition_minutes"))
