"""Whole-pipeline speed budget: wall time, CPU time, fixed-overhead share, memory, size of results/.

    python benchmarks/bench_pipeline.py [--cores 2] [--workdir /tmp/banditrepro-bench] [--json out.json]
                                        [--data data] [--snakemake-args "--config runs_per_shard=1"]

Run from the project root after one full run (kernels compiled, data prepared); the project's own
results/ are not touched. Two measurements of the same work (the default config):

1. **pipeline** — `snakemake --cores N` (default profile) in a scratch working directory holding a copy of
   the project's data/ (raw, prepared, probe verdicts; mtimes kept, so nothing is fetched or prepared):
   wall time, CPU time of all processes, peak RSS, size of results/, jobs run, lines printed;
2. **plain loop** — every cell, summary, figure, table, the claims and the report computed with
   banditrepro's functions and no Snakemake: the cells by N worker processes (the same parallelism, so
   the same contention of two kernels on two cores), the rest by one loop; CPU time per stage.

*Work* is the plain loop's CPU time without its imports and numba cache loads. *Fixed overhead* is
everything else the pipeline spends: pipeline CPU − work (process starts, imports, numba cache loads,
Snakemake's per-job bookkeeping). The loop's cells are also compared byte for byte with the pipeline's.

The pipeline's CPU is also split without the loop: every in-process job logs its body's thread CPU
(``body CPU seconds:``), Snakemake's main thread reports its own, and the remainder is Snakemake's code in
the worker threads; main thread + remainder is *Snakemake's own share*, which does not inherit the plain
loop's run-to-run noise (this VM: ±10 % and more).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
T0 = time.process_time()


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def du_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


# Snakemake run via runpy so that, at exit, its main thread (DAG, scheduling, job bookkeeping, logging; the
# in-process jobs run in worker threads) reports its own CPU time.
_SNAKEMAKE_MAIN = """
import atexit, pathlib, runpy, sys, time
out = pathlib.Path(sys.argv.pop(1))
atexit.register(lambda: out.write_text(str(time.thread_time())))
sys.argv[0] = "snakemake"
runpy.run_module("snakemake", run_name="__main__")
"""


def run_pipeline(workdir: Path, cores: int, extra: list[str], data: Path) -> dict:
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    # a copy (1-2 MB), not a link: the run must never write into the project's data/
    shutil.copytree(data, workdir / "data", symlinks=True, ignore=shutil.ignore_patterns("*.part"))
    main_cpu = workdir / "main-thread-cpu.txt"
    cmd = [sys.executable, "-c", _SNAKEMAKE_MAIN, str(main_cpu), "--snakefile", str(ROOT / "Snakefile"), "--directory",
           str(workdir), "--workflow-profile", str(ROOT / "profiles/default"), "--cores", str(cores),
           *extra]
    cpu0, wall0 = cpu_children(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - wall0, cpu_children() - cpu0
    if proc.returncode:
        sys.exit(f"snakemake failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    sidecars = [json.loads(p.read_text()) for p in (workdir / "results/cells").rglob("*.json")]
    # each in-process job logs the CPU its body took on its thread: the rest of the run's CPU is Snakemake's
    bodies = [float(ln.split(":")[1]) for p in (workdir / "logs").rglob("*.log")
              for ln in p.read_text().splitlines() if ln.startswith("body CPU seconds:")]
    out = (proc.stdout + proc.stderr).splitlines()
    totals = [int(ln.split()[1]) for ln in out if ln.startswith("total ") and ln.split()[1].isdigit()]
    return {"wall_s": wall, "cpu_s": cpu, "snakemake_main_thread_cpu_s": float(main_cpu.read_text()),
            "jobs": max(totals) if totals else None, "lines_printed": len(out),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            # one sidecar per shard, one entry per run
            "cells": sum(len(s["runs"]) for s in sidecars), "shards": len(sidecars),
            "kernel_s": sum(sum(s["wall_seconds"]) for s in sidecars),
            "kernel_cpu_s": sum(sum(s["kernel_cpu_seconds"]) for s in sidecars),
            "job_bodies_cpu_s": sum(bodies), "job_bodies": len(bodies),
            "numba_load_s": sum(sum(s["load_seconds"]) for s in sidecars),
            "files": sum(1 for _ in workdir.rglob("*") if _.is_file()),
            "results_mb": du_mb(workdir / "results"), "command": shlex.join(cmd)}


def _cells_task(job) -> tuple[float, float, float]:
    """Worker process: one shard of one cell -> (CPU seconds, kernel CPU seconds, numba load seconds)."""
    from banditrepro.cell import simulate_shard

    (dataset, horizon, algo), (first, last), base_seed, prepared, path = job
    cpu = time.process_time()
    results = simulate_shard(algo, prepared, horizon, first, last, base_seed, path)
    kernel = sum(r.meta["kernel_cpu_seconds"] for r in results)
    load = sum(r.meta["load_seconds"] for r in results)
    return time.process_time() - cpu, kernel, load


def _worker_init() -> None:
    import banditrepro.cell  # noqa: F401  (imports are not work)
    import banditrepro.datasets.catalog  # noqa: F401


def run_plain_loop(workdir: Path, cores: int, data: Path) -> dict:
    """The pipeline's work, stage by stage, without Snakemake (CPU seconds per stage)."""
    from concurrent.futures import ProcessPoolExecutor

    import yaml

    t_imports = time.process_time()
    from banditrepro import papers
    from banditrepro.aggregate import write_runtime_table, write_summary
    from banditrepro.claims import write_claims
    from banditrepro.datasets.catalog import load_catalog
    from banditrepro.figures import build_figure, panel_status
    from banditrepro.manifest import cell_runs, load_manifest
    from banditrepro.report import build_report
    from banditrepro.workflow.plan import build_plan, cell_key

    papers.load()
    stages = {"imports": time.process_time() - t_imports}
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    catalog = load_catalog(ROOT / cfg.get("catalog", "config/datasets.yaml"))
    figures = load_manifest(ROOT / cfg.get("manifest", "config/figures"), papers=cfg.get("papers"),
                            max_horizon=cfg.get("max_horizon"), datasets=set(catalog.datasets))
    # the same runs per cell as the workflow: the most any figure asks (manifest `runs:`), at least `runs`
    nruns = cell_runs(figures, cfg["runs"], cfg.get("max_runs"))
    out = workdir / "results"
    if out.exists():
        shutil.rmtree(out)
    # the workflow's plan (nothing existing): its shards and every result's name (cell, data, summary keys), so
    # the loop's files are the pipeline's, by name, in the loop's own folders
    plan = build_plan(dict(cfg), ROOT, scan=False)
    lay = dataclasses.replace(plan.layout, results_dir=str(out), data_dir=str(data))

    todo = [c for c in nruns if panel_status(c[0], lay)[0]]
    files = {}
    for c in todo:
        key = cell_key(*c)
        for a, b in plan.cell_shards[key]:
            files[(c, (a, b))] = lay.shard(*c, plan.names.shards[key], a, b)
    jobs = [(c, ab, plan.config["base_seed"], lay.prepared_file(c[0]), path) for (c, ab), path in files.items()]
    with ProcessPoolExecutor(cores, initializer=_worker_init) as pool:
        cpu, kernel, load = (sum(x) for x in zip(*pool.map(_cells_task, jobs, chunksize=4)))
    stages.update({"kernels": kernel, "numba_load": load, "cell_files_and_setup": cpu - kernel - load})

    t = time.process_time()
    summaries = []
    for dataset, horizon, algo in todo:
        summaries.append(lay.summary(dataset, horizon, algo))
        write_summary([p for (c, _), p in files.items() if c == (dataset, horizon, algo)], summaries[-1],
                      nruns[(dataset, horizon, algo)])
    stages["summaries"] = time.process_time() - t

    t = time.process_time()
    for fig in figures:
        build_figure(fig, lay, *lay.figure_outputs(fig.paper, fig.id)[:3])
    stages["figures_and_tables"] = time.process_time() - t
    t = time.process_time()
    write_runtime_table(summaries, lay.runtime_csv)
    write_claims(figures, lay, lay.claims_csv)
    build_report(figures, lay, lay.claims_csv, lay.runtime_csv, lay.report_md)
    stages["claims_and_report"] = time.process_time() - t
    return {"stages_cpu_s": stages, "cells": sum(nruns[c] for c in todo)}


def same_cells(a: Path, b: Path) -> tuple[int, int]:
    files = sorted(p.relative_to(a) for p in a.rglob("*.npz"))
    return sum((a / f).read_bytes() == (b / f).read_bytes() for f in files), len(files)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/banditrepro-bench"))
    ap.add_argument("--snakemake-args", default="", help="extra arguments, e.g. \"--config runs_per_shard=1\"")
    ap.add_argument("--data", type=Path, default=ROOT / "data",
                    help="a data/ folder after one full run (raw, prepared, status); copied, never written")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not (args.data / "prepared").is_dir():
        sys.exit(f"run the pipeline once first ({args.data}/prepared/ missing; kernels uncompiled)")
    data = args.data.resolve()

    pipe = run_pipeline(args.workdir / "pipeline", args.cores, shlex.split(args.snakemake_args), data)
    loop = run_plain_loop(args.workdir / "loop", args.cores, data)
    st = loop["stages_cpu_s"]
    work = sum(v for k, v in st.items() if k not in ("imports", "numba_load"))
    overhead = pipe["cpu_s"] - work
    same, n = same_cells(args.workdir / "loop/results/cells", args.workdir / "pipeline/results/cells")
    report = {"pipeline": pipe, "plain_loop": loop, "work_cpu_s": work, "fixed_overhead_cpu_s": overhead,
              "fixed_overhead_share": overhead / pipe["cpu_s"], "identical_cells": f"{same}/{n}",
              # the issue-21 measure: all the pipeline's CPU per CPU second its kernels spend simulating
              "pipeline_cpu_per_kernel_cpu": pipe["cpu_s"] / pipe["kernel_cpu_s"]}

    print(f"pipeline CPU / kernel CPU: {report['pipeline_cpu_per_kernel_cpu']:.2f}; {pipe['files']} files written")
    print(f"pipeline: {pipe['cells']} cells in {pipe['shards']} shards, {pipe['jobs']} jobs, "
          f"{pipe['wall_s']:.0f} s wall, "
          f"{pipe['cpu_s']:.0f} CPU-s, {pipe['lines_printed']} lines printed, "
          f"peak RSS {pipe['peak_rss_mb']:.0f} MB, results/ {pipe['results_mb']:.0f} MB "
          f"(kernels {pipe['kernel_s']:.0f} s wall, {pipe['kernel_cpu_s']:.0f} CPU-s; numba loads "
          f"{pipe['numba_load_s']:.1f} s; {pipe['job_bodies']} job bodies {pipe['job_bodies_cpu_s']:.0f} CPU-s); "
          f"Snakemake's main thread "
          f"{pipe['snakemake_main_thread_cpu_s']:.0f} CPU-s")
    print("work (plain loop, CPU-s): " + ", ".join(f"{k} {v:.1f}" for k, v in st.items())
          + f" -> work {work:.0f} CPU-s")
    wrappers = pipe["cpu_s"] - pipe["snakemake_main_thread_cpu_s"] - pipe["job_bodies_cpu_s"]
    report["snakemake_in_worker_threads_cpu_s"] = wrappers
    print(f"where the pipeline's CPU went: job bodies {pipe['job_bodies_cpu_s']:.0f} (the plain loop's work: "
          f"{work:.0f}), Snakemake's main thread {pipe['snakemake_main_thread_cpu_s']:.0f}, Snakemake in the "
          f"worker threads (CPU - main thread - bodies) {wrappers:.0f} CPU-s")
    own = pipe["snakemake_main_thread_cpu_s"] + wrappers
    report["snakemake_own_share"] = own / pipe["cpu_s"]
    print(f"Snakemake's own share: {own:.0f} of {pipe['cpu_s']:.0f} CPU-s = {100 * own / pipe['cpu_s']:.0f} % "
          "(independent of the plain loop, hence of its run-to-run noise)")
    print(f"fixed overhead: {overhead:.0f} of {pipe['cpu_s']:.0f} CPU-s = {100 * overhead / pipe['cpu_s']:.0f} %"
          f" (target <= 25 %); cells identical to the pipeline's: {same}/{n}")
    if pipe["numba_load_s"] > 20:
        print(f"WARNING: the pipeline spent {pipe['numba_load_s']:.0f} s loading kernels: the numba cache was cold "
              "(first run after an edit of a kernel); run the benchmark again for the steady state")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if same == n else 1


if __name__ == "__main__":
    sys.exit(main())
