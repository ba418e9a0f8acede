"""What a run will submit and write, before anything runs: ``banditrepro estimate``.

The config is the one Snakemake builds: Snakemake's own command-line parser reads the profile (and its
``set-resources``: profiles/slurm's cluster mode, read as the workflow reads it, banditrepro/workflow/engine.py),
``--configfile`` and ``--config`` (values parsed by
Snakemake's ``parse_config``: ``batch_minutes=1e1`` is 10.0), and Snakemake's ``ConfigSettings`` and
``update_config`` merge them over config/config.yaml as the workflow's ``configfile:`` directive does. It then
plans exactly as the workflow does (``build_plan``), without building Snakemake's DAG, and prints the plan's
batches, which hold exactly the shards missing (a finished shard is never packed), so they are the jobs of rule
``simulate`` a run starts (SLURM submissions in cluster mode): their estimated and requested lengths, the CPU
forecast, and the files and bytes the run adds.

Read-only, and it reads no shard: the plan lists the cells' folders (a shard exists or not), the forecast
reads the sidecars of the cells still to compute (banditrepro/workflow/costs.py), and whether a summary or a
store entry must be made is whether its file exists (its name covers what it is made of). Batch lengths are
the sizing's estimates, from the kernels' ns/step (banditrepro/jobsize.py: right within a factor of a few);
the CPU forecast has its own cost model (costs.py: kernel seconds measured in the cell's folder, else on the
reference machine, plus the rest of the pipeline) and bytes from the shards' measured sizes
(``bytes_per_run``, ``bytes_per_shard``).
"""

from __future__ import annotations

import os
import statistics

from banditrepro import algorithms, leaderboard
from banditrepro.grid import regret_grid
from banditrepro.probes import UNAVAILABLE, probe_verdict
from banditrepro.shardformat import SHARD_FORMAT
from banditrepro.workflow import costs
from banditrepro.workflow.cells import split_key
from banditrepro.workflow.config import load_config  # noqa: F401 - a command line's shaped config (tests import it here)
from banditrepro.workflow.plan import open_project

# Files a run writes, counted in a run of the test config (each store entry: its files, Snakemake's record of
# each, its job log, and the copies rule `all` publishes at the fixed paths): a shard its .npz and sidecar; a
# batch its log and the record of its end marker (the marker itself is temporary), in cluster mode also its
# spec, the spec's log and record; a summary its .npz, log and record; a figure 5 stored outputs, 5 records, a
# log and 5 published copies; a leaderboard 4 + 4 + 1 + 4; claims and the run-time table 1 + 1 + 1 + 1 each,
# the reports 2 + 2 + 1 + 2, software.json 1 + 1 + 1 + 1; every run rule all's log, published.json and
# Snakemake's own log, and a run computing shards the log of shards computed (Layout.shards_log). Counted so,
# the forecast of a first run is what it wrote besides data/ (shared by every config): 1,307 files for the
# test config, 1,436 for the default config (bench_pipeline's run), session 14.
SHARD_FILES = 2
BATCH_FILES = 2
SPEC_FILES = 3
SUMMARY_FILES = 3
FIGURE_FILES = 16
LEADERBOARD_FILES = 13
FINAL_FILES = {"claims": 4, "runtime": 4, "report": 7, "software": 4}
RUN_FILES = 3


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
    return SHARD_BYTES[SHARD_FORMAT][algorithms.get(algo.split("+")[0]).problem]


def bytes_per_run(algo: str, horizon: int) -> float:
    """A run's bytes in a shard in the current shard format (``SHARD_BYTES``), its shard's own aside."""
    per_point, per_run, _ = _shard_bytes(algo)
    return per_point * len(regret_grid(horizon)) + per_run


def bytes_per_shard(algo: str) -> float:
    """A shard's bytes besides its runs' (``SHARD_BYTES``)."""
    return _shard_bytes(algo)[2]


def skipped_datasets(plan) -> set[str]:
    """Optional (network) datasets their probe found unavailable: no figure asks for their cells, so a run
    computes none of their batches. Not probed yet is planned for: this is an estimate of what the run will do,
    and the run probes it first (probes.py: for what a run drew, not probed counts as not run)."""
    return {d for d in plan.catalog.datasets if plan.catalog.is_optional(d)
            and probe_verdict(plan.layout.status_file(d)).state == UNAVAILABLE}


def entries_to_write(plan, touched: set[str], skip: set[str]) -> dict:
    """The stored results a run makes: those whose file does not exist (its name covers what it is made of)
    and those downstream of a cell with shards to compute (Snakemake reruns them: their inputs are newer).
    Existence only, nothing is read: summaries, figures, leaderboards, and which of claims, the run-time table,
    the reports and software.json."""
    st = plan.store
    summaries = {c for c in plan.cell_runs if split_key(c)[0] not in skip
                 and (c in touched or not os.path.exists(plan.summary_of(*split_key(c))))}
    new_summaries = {plan.summary_of(*split_key(c)) for c in summaries}
    figures = [f for f in plan.figures
               if not all(map(os.path.exists, plan.figure_outputs(f)))
               or any(plan.summary_of(p.dataset, p.horizon, a.id) in new_summaries for p in f.panels
                      for a in p.algorithms)]
    upstream = bool(summaries or figures)
    boards = [p for p in leaderboard.papers(plan.figures)
              if upstream or not all(map(os.path.exists, st.leaderboard_outputs(p)))]
    final = {"claims": upstream or not os.path.exists(st.claims_csv),
             "runtime": bool(new_summaries & set(plan.runtime_inputs())) or not os.path.exists(st.runtime_csv),
             "software": not os.path.exists(st.software_json)}
    final["report"] = (upstream or boards or final["runtime"]
                       or not all(map(os.path.exists, (st.report_md, st.reproduction_md))))
    return {"summaries": len(summaries), "figures": len(figures), "leaderboards": len(boards),
            "final": [k for k, v in final.items() if v]}


def estimate(plan) -> dict:
    """Batches still to run, their lengths, CPU-hours, files and bytes of a plan (numbers, for ``report``).
    The batches are the plan's: only missing shards are packed, so each is a job a run starts (those of an
    optional dataset probed unavailable aside, ``skipped_datasets``)."""
    skip = skipped_datasets(plan)
    batches = [b for b in plan.batches if b.dataset not in skip]
    todo = [s for b in batches for s in b.shards]
    runs = sum(b - a + 1 for _, a, b in todo)
    kernels = costs.KernelCosts(plan)
    kernel_seconds = sum((b - a + 1) * kernels.lookup(c)[0] for c, a, b in todo)
    rest_seconds = costs.pipeline_seconds(len(todo), runs)
    data = sum((b - a + 1) * bytes_per_run(split_key(c)[2], split_key(c)[1]) + bytes_per_shard(split_key(c)[2])
               for c, a, b in todo)
    touched = {c for c, _, _ in todo}
    sources = {k: sum(kernels.lookup(c)[1] == k for c in touched) for k in costs.SOURCES}
    made = entries_to_write(plan, touched, skip)
    cluster = plan.config.get("batch_minutes") is not None
    files = (SHARD_FILES * len(todo) + (BATCH_FILES + SPEC_FILES * cluster) * len(batches)
             + SUMMARY_FILES * made["summaries"] + FIGURE_FILES * made["figures"]
             + LEADERBOARD_FILES * made["leaderboards"] + sum(FINAL_FILES[k] for k in made["final"]) + RUN_FILES
             + bool(todo))
    cells = [c for c in plan.cell_shards if split_key(c)[0] not in skip]
    limit = plan.config.get("partition_minutes")
    return {"cells": len(cells), "shards": sum(len(plan.cell_shards[c]) for c in cells),
            "new_shards": len(todo), "new_runs": runs, "batches": len(batches), "cluster": cluster,
            "estimated_minutes": [b.seconds / 60 for b in batches],
            "requested_minutes": [b.minutes(1, limit) for b in batches],
            "cpu_hours": (kernel_seconds + rest_seconds) / 3600, "kernel_cpu_seconds": kernel_seconds,
            "rest_cpu_seconds": rest_seconds, "kernel_sources": sources,
            "summaries": made["summaries"], "figures": made["figures"], "files": files, "bytes": data}


def report(numbers: dict, partition_minutes=None) -> str:
    n = numbers
    lines = [f"cells: {n['cells']:,}; shards: {n['shards']:,}, of which {n['new_shards']:,} to compute "
             f"({n['new_runs']:,} runs)"]
    what = "SLURM submissions" if n["cluster"] else "batches (local run: batch_minutes is not set)"
    if not n["batches"]:
        lines.append(f"{what}: 0 (every shard exists; summaries, figures, claims and the report run on this host)")
    else:
        est, req = n["estimated_minutes"], n["requested_minutes"]
        lines.append(f"{what}: {n['batches']} (one per batch of missing shards; downloads, preparation, "
                     "summaries, figures, claims and the report run on this host)")
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
    if "summaries" in n:
        lines.append(f"summaries to make: {n['summaries']:,}; figures: {n['figures']:,}")
    lines.append(f"writes: about {n['files']:,} files, {n['bytes'] / 1e6:,.0f} MB of shards")
    return "\n".join(lines)


def run(project_info, configfiles=(), overrides=(), profile=None) -> str:
    """``banditrepro estimate``: plan as the workflow does, in the project folder."""
    plan = open_project(project_info, configfiles, overrides, profile)
    return report(estimate(plan), plan.config.get("partition_minutes"))
