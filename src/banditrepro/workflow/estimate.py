"""What a run will submit and write, before anything runs: ``banditrepro estimate``.

The config is the one Snakemake builds: Snakemake's own command-line parser reads the profile (and its
``set-resources``: profiles/slurm's cluster mode, read as the workflow reads it, banditrepro/workflow/engine.py),
``--configfile`` and ``--config`` (values parsed by
Snakemake's ``parse_config``: ``batch_minutes=1e1`` is 10.0), and Snakemake's ``ConfigSettings`` and
``update_config`` merge them over config/config.yaml as the workflow's ``configfile:`` directive does. It then
plans exactly as the workflow does (``build_plan``: the same shards, batches and existing files), without
building Snakemake's DAG, so it takes the parse's time (seconds), and prints the batches still to run (SLURM
submissions in cluster mode) with their estimated and requested lengths, the CPU forecast, and the files and
bytes the run adds. Batch lengths are the sizing's estimates, from the kernels' ns/step (banditrepro/jobsize.py:
right within a factor of a few); the CPU forecast has its own cost model (banditrepro/workflow/costs.py:
kernel seconds measured in the results folder, else on the reference machine, plus the rest of the pipeline)
and bytes from the shards' measured sizes (``bytes_per_run``, ``bytes_per_shard``).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from banditrepro import ReproError
from banditrepro.workflow import costs

# files besides the shards: a summary writes its .npz, its log and Snakemake's record of it; a figure its
# five outputs, a log and five records; claims, run-time table and report a handful
SUMMARY_FILES = 3
FIGURE_FILES = 11
FINAL_FILES = 12


# A shard's bytes, per shard format and instance kind: (bytes per run and grid point, for all the instance's
# curves together: 5 for a dueling instance, 1 for a multi-armed one; bytes per run besides: its sidecar
# entries, 78-79 B measured; bytes per shard: the shared arrays, the zip's directory, the sidecar's own
# fields), least squares over the default config's 196, 292 and 444 shards at runs = 20, 100, 200. A shard of
# more runs deflates better and shares its own bytes, so a run costs fewer bytes in the larger shards of a
# larger `runs` (per run alone, the forecast was 20 % too high at runs=200:
# docs/performance.md#cost-in-runs-and-the-forecast-issue-31-point-4). Kept here, not in the
# format's module: a new measurement recomputes no shard.
SHARD_BYTES = {2: {"duel": (1.45, 80.0, 23_000.0), "mab": (0.41, 80.0, 6_700.0)}}


def _shard_bytes(algo: str) -> tuple[float, float, float]:
    from banditrepro import algorithms
    from banditrepro.shardformat import SHARD_FORMAT

    return SHARD_BYTES[SHARD_FORMAT][algorithms.get(algo.split("+")[0]).problem]


def bytes_per_run(algo: str, horizon: int) -> float:
    """A run's bytes in a shard in the current shard format (``SHARD_BYTES``), its shard's own aside."""
    from banditrepro.grid import regret_grid

    per_point, per_run, _ = _shard_bytes(algo)
    return per_point * len(regret_grid(horizon)) + per_run


def bytes_per_shard(algo: str) -> float:
    """A shard's bytes besides its runs' (``SHARD_BYTES``)."""
    return _shard_bytes(algo)[2]


def load_config(project: Path, configfiles=(), overrides=(), profile: str | None = None) -> dict:
    """The config Snakemake would build for ``snakemake [--workflow-profile profile] [--configfile f ...]
    [--config k=v ...]`` in ``project``: parsed by Snakemake's own command-line parser and config code."""
    import contextlib
    import io

    from snakemake.cli import parse_args, parse_config
    from snakemake.common.configfile import load_configfile
    from snakemake.settings.types import ConfigSettings
    from snakemake.utils import update_config

    from banditrepro.workflow.engine import apply_cluster_mode, minutes_from_resources

    argv = ["--snakefile", str(project / "Snakefile"), "--workflow-profile", str(profile) if profile else "none"]
    if not profile and (project / "profiles/default").is_dir():  # what snakemake picks up by itself
        argv[-1] = str(project / "profiles/default")
    if configfiles:
        argv += ["--configfile", *map(str, configfiles)]
    if overrides:
        argv += ["--config", *overrides]
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # its "Using workflow specific profile" notice
            _, args = parse_args(argv)
        settings = ConfigSettings(config=parse_config(args.config), configfiles=args.configfile or (),
                                  replace_workflow_config=bool(getattr(args, "replace_workflow_config", False)))
    except (ValueError, SystemExit) as exc:
        raise ReproError(f"--config: {exc}") from None
    except Exception as exc:  # noqa: BLE001 -- Snakemake's WorkflowError for an unreadable or invalid config file
        raise ReproError(f"config file: {' '.join(str(exc).split())}") from None
    try:
        minutes = minutes_from_resources(getattr(args, "set_resources", None))
    except ValueError as exc:
        raise ReproError(str(exc)) from None
    # the Snakefile's `configfile: config/config.yaml`, then what the command line adds (Workflow.configfile)
    try:
        config = {} if settings.replace_workflow_config else load_configfile(str(project / "config/config.yaml"))
        update_config(config, settings.overwrite_config)
        apply_cluster_mode(config, minutes)  # the profile's cluster mode, as the workflow's common.smk
    except Exception as exc:  # noqa: BLE001 -- Snakemake's WorkflowError for an unreadable or invalid file
        raise ReproError(f"config file: {' '.join(str(exc).split())}") from None
    return config


def estimate(plan) -> dict:
    """Batches still to run, their lengths, CPU-hours, files and bytes of a plan (numbers, for ``report``).
    A batch runs when its receipt is missing or one of its shards is not complete for the prepared file as
    it is now (a dataset not prepared yet: every shard of it)."""
    from banditrepro.figures.panels import panel_status
    from banditrepro.workflow.batches import file_sha256
    from banditrepro.workflow.plan import dataset_of, split_key

    lay = plan.layout
    # an optional (network) dataset its probe found unavailable: no figure asks for its cells, none is
    # submitted (not probed yet counts as available, as for the figures: the run probes it)
    skip = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d) and not panel_status(d, lay)[0]}
    shas = {d: file_sha256(lay.prepared_file(d)) for d in {b.dataset for b in plan.batches}
            if Path(lay.prepared_file(d)).is_file()}

    todo, batches = [], []
    for b in plan.batches:
        if b.dataset in skip:
            continue
        # a dataset not prepared yet: every shard of it
        new = plan.incomplete_shards(b, shas[b.dataset]) if b.dataset in shas else list(b.shards)
        if new or not Path(plan.receipt(b.name)).is_file():
            batches.append(b)
            todo += new
    runs = sum(b - a + 1 for _, a, b in todo)
    kernels = costs.KernelCosts(plan)
    kernel_seconds = sum((b - a + 1) * kernels.lookup(c)[0] for c, a, b in todo)
    rest_seconds = costs.pipeline_seconds(len(todo), runs)
    data = sum((b - a + 1) * bytes_per_run(split_key(c)[2], split_key(c)[1]) + bytes_per_shard(split_key(c)[2])
               for c, a, b in todo)
    touched = {c for c, _, _ in todo}
    sources = {k: sum(kernels.lookup(c)[1] == k for c in touched) for k in costs.SOURCES}
    files = 3 * len(todo) + 2 * len(batches) + SUMMARY_FILES * len(touched)
    if todo:
        files += FIGURE_FILES * len(plan.figures) + FINAL_FILES
    cells = [c for c in plan.cell_shards if dataset_of(c) not in skip]
    limit = plan.config.get("partition_minutes")
    return {"cells": len(cells), "shards": sum(len(plan.cell_shards[c]) for c in cells),
            "new_shards": len(todo), "new_runs": runs, "batches": len(batches),
            "cluster": plan.config.get("batch_minutes") is not None,
            "estimated_minutes": [b.seconds / 60 for b in batches],
            "requested_minutes": [b.minutes(1, limit) for b in batches],
            "cpu_hours": (kernel_seconds + rest_seconds) / 3600, "kernel_cpu_seconds": kernel_seconds,
            "rest_cpu_seconds": rest_seconds,
            "kernel_sources": sources, "files": files, "bytes": data}


def report(numbers: dict, partition_minutes=None) -> str:
    n = numbers
    lines = [f"cells: {n['cells']:,}; shards: {n['shards']:,}, of which {n['new_shards']:,} to compute "
             f"({n['new_runs']:,} runs)"]
    what = "SLURM submissions" if n["cluster"] else "batches (local run: batch_minutes is not set)"
    if not n["batches"]:
        lines.append(f"{what}: 0 (every shard exists; summaries, figures, claims and the report run on this host)")
    else:
        est, req = n["estimated_minutes"], n["requested_minutes"]
        lines.append(f"{what}: {n['batches']} (one per batch of shards; downloads, preparation, summaries, "
                     "figures, claims and the report run on this host)")
        if n["cluster"]:
            lines.append(
                f"estimated length per submission (sizing, by the kernels' ns/step): min {min(est):.1f}, median "
                f"{statistics.median(est):.1f}, max {max(est):.1f} min; requested --time (3 x estimate + 5 min, "
                f"doubled on each retry): max {max(req)} min"
                + (f" (partition limit {partition_minutes} min)" if partition_minutes else ""))
        kernel, rest, src = n["kernel_cpu_seconds"], n["rest_cpu_seconds"], n["kernel_sources"]
        lines.append(f"CPU forecast: {n['cpu_hours']:.2f} CPU-hours ({kernel + rest:,.0f} CPU-s): kernels "
                     f"{kernel:,.0f}, the rest of the pipeline {rest:,.0f} (Snakemake, shard files, summaries, "
                     "figures, report)")
        lines.append(f"kernel costs of the {sum(src.values()):,} cells: {src['measured']:,} measured in this results "
                     f"folder, {src['reference']:,} from the reference machine's table, {src['ns_per_step']:,} "
                     "from the kernels' ns/step")
    lines.append(f"writes: about {n['files']:,} files, {n['bytes'] / 1e6:,.0f} MB of shards")
    return "\n".join(lines)


def run(project_info, configfiles=(), overrides=(), profile=None) -> str:
    """``banditrepro estimate``: plan as the workflow does, in the project folder."""
    import os

    from banditrepro.workflow.plan import build_plan

    if project_info.root is None:
        raise ReproError(f"no project folder here ({project_info.hint()})")
    files = [Path(f).resolve() for f in configfiles]
    config = load_config(project_info.root, files, overrides, profile and Path(profile).resolve())
    os.chdir(project_info.root)  # the plan's paths (and the shards it looks for) are relative to the project
    plan = build_plan(config, project_info.root)
    return report(estimate(plan), config.get("partition_minutes"))
