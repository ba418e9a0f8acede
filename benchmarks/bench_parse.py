"""What planning costs (issue 38, point 5): the parse of `snakemake -n`, and the plan with many shards on disk.

    python benchmarks/bench_parse.py [--runs 1000] [--repeat 3] [--shards 10000] [--workdir /tmp/banditrepro-parse]
                                     [--project DIR] [--no-synthetic] [--json out.json]

Two measurements, each in a scratch working folder (`snakemake --directory`; the project's own results/ and
data/ are never touched), on the project's default config (config/config.yaml):

1. **parse**: `snakemake -n --config runs=RUNS` in an empty folder, ``--repeat`` times after one warm-up
   (Python's bytecode and the OS's file cache warm, as for a user's second command): wall and CPU of the whole
   process, and of ``build_plan`` inside it (the workflow's planning, timed in Snakemake's own process);
2. **synthetic shards** (skipped with ``--no-synthetic``): a results folder holding at least ``--shards``
   empty shard files under their names (every shard of the default config at the smallest ``runs`` that
   has that many: each cell's current key folder, ``runs<a>-<b>.npz``; a dry run never opens one), then
   ``build_plan`` and ``estimate`` in this process and `snakemake -n` at that ``runs``, timed the same way.

File operations are counted, and asserted: in this process by wrapping ``os.listdir``, ``os.scandir``,
``os.stat``, ``os.lstat``, ``os.open`` and ``open`` around ``build_plan`` and ``estimate`` (planning lists
each cell's folder once and opens or stats no shard), and in Snakemake's process with ``strace -f`` where
it is installed (no shard is opened: a dry run stats them, nothing more). Each `snakemake -n` is checked to
write and delete nothing outside Snakemake's own .snakemake/ (the folder's tree, paths, sizes and mtimes,
before and after; what changed in .snakemake/ is printed).

``--project DIR``: another checkout (e.g. ``git archive <commit> | tar -x -C DIR``) for the parse alone: the
numbers before a change, measured by the same code.
"""

from __future__ import annotations

import argparse
import builtins
import io
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Snakemake in this process's interpreter, timing the workflow's build_plan in its own process: the package
# of the project is imported first (the Snakefile would put the same src/ first on sys.path), so the
# Snakefile's `from banditrepro.workflow.plan import build_plan` gets the timed one.
_SNAKEMAKE = """
import atexit, json, pathlib, runpy, sys, time
out, src = pathlib.Path(sys.argv.pop(1)), sys.argv.pop(1)
sys.path.insert(0, src)
import banditrepro.workflow.plan as plan
real, calls = plan.build_plan, []
def timed(*args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        return real(*args, **kwargs)
    finally:
        calls.append([time.perf_counter() - wall, time.process_time() - cpu])
plan.build_plan = timed
atexit.register(lambda: out.write_text(json.dumps(calls)))
sys.argv[0] = "snakemake"
runpy.run_module("snakemake", run_name="__main__")
"""


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``folder`` (hidden ones included) with its size and mtime."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, folder)] = (st.st_size, st.st_mtime_ns)
    return out


def tree_changes(before: dict, after: dict) -> dict[str, list[str]]:
    return {"added": sorted(set(after) - set(before)), "removed": sorted(set(before) - set(after)),
            "changed": sorted(p for p in set(before) & set(after) if before[p] != after[p])}


def job_total(out: str) -> int | None:
    totals = [int(ln.split()[1]) for ln in out.splitlines() if ln.startswith("total ") and ln.split()[1].isdigit()]
    return max(totals) if totals else None


def dry_run(project: Path, workdir: Path, config: list[str], strace: Path | None = None) -> dict:
    """One `snakemake -n` of ``project`` in ``workdir``: wall, CPU, build_plan's wall and CPU, jobs, and what
    it changed in ``workdir``."""
    times = workdir.parent / f"{workdir.name}-build-plan.json"
    cmd = [sys.executable, "-c", _SNAKEMAKE, str(times), str(project / "src"), "-n", "--snakefile",
           str(project / "Snakefile"), "--directory", str(workdir), "--config", *config]
    if strace:
        cmd = ["strace", "-f", "-qq", "-e", "trace=%file,getdents64", "-o", str(strace), *cmd]
    before = tree(workdir)
    cpu0, wall0 = cpu_children(), time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(project / "src")})
    wall, cpu = time.perf_counter() - wall0, cpu_children() - cpu0
    if r.returncode:
        sys.exit(f"snakemake -n failed ({r.returncode}):\n{r.stderr[-3000:]}")
    plans = json.loads(times.read_text())
    times.unlink()
    return {"wall_s": wall, "cpu_s": cpu, "build_plan_wall_s": sum(w for w, _ in plans),
            "build_plan_cpu_s": sum(c for _, c in plans), "build_plans": len(plans),
            "jobs": job_total(r.stdout + r.stderr), "changes": tree_changes(before, tree(workdir))}


def summary(rows: list[dict], key: str) -> dict:
    xs = [r[key] for r in rows]
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}


def show(rows: list[dict]) -> str:
    return ", ".join(f"{k.removesuffix('_s')} {s['median']:.2f} s ({s['min']:.2f}-{s['max']:.2f})"
                     for k in ("wall_s", "cpu_s", "build_plan_wall_s", "build_plan_cpu_s")
                     for s in [summary(rows, k)])


def ours(changes: dict) -> dict:
    """Changes outside Snakemake's own folder (.snakemake/: its locks and records, Snakemake's business)."""
    return {k: [p for p in v if not p.startswith(".snakemake")] for k, v in changes.items()}


def repeated(project: Path, workdir: Path, config: list[str], repeat: int) -> tuple[list[dict], dict]:
    """``repeat`` timed dry runs after a warm-up (bytecode and file caches, as a user's second command has
    them); each checked to change nothing outside .snakemake/. Returns the rows and what each call changed
    in .snakemake/ (Snakemake's: a first dry run in a folder makes the folder, every one rewrites its I/O
    cache), merged."""
    warm = dry_run(project, workdir, config)
    rows = [dry_run(project, workdir, config) for _ in range(repeat)]
    seen: dict[str, set] = {"added": set(), "removed": set(), "changed": set()}
    for r in [warm, *rows]:
        assert r["build_plans"] == 1, f"the workflow planned {r['build_plans']} times in one dry run"
        assert not any(ours(r["changes"]).values()), f"`snakemake -n` changed the folder: {ours(r['changes'])}"
        for k, v in r["changes"].items():
            seen[k].update(v)
    return rows, {k: sorted(v) for k, v in seen.items()}


def said(changes: dict) -> str:
    n = sum(map(len, changes.values()))
    return "wrote and deleted nothing" if not n else (
        "wrote and deleted nothing outside .snakemake/ (there: " + "; ".join(
            f"{k} {', '.join(v[:4])}{' ...' if len(v) > 4 else ''}" for k, v in changes.items() if v) + ")")


# --- file operations of this process ---------------------------------------------------------------------

class FileOps:
    """Counts the file operations of this process (paths under a cells folder apart), while active."""

    NAMES = ("listdir", "scandir", "stat", "lstat", "open")

    def __init__(self, cells: str):
        self.cells = os.path.normpath(cells) + os.sep
        self.calls: list[tuple[str, str]] = []

    def _wrap(self, name, real):
        def wrapped(path=".", *args, **kwargs):
            self.calls.append((name, os.fspath(path) if isinstance(path, (str, bytes, os.PathLike)) else ""))
            return real(path, *args, **kwargs)
        return wrapped

    def __enter__(self):
        self.saved = [(os, n, getattr(os, n)) for n in self.NAMES]
        self.saved += [(builtins, "open", builtins.open), (io, "open", io.open)]
        for mod, name, real in self.saved:
            setattr(mod, name, self._wrap("open" if mod is not os else name, real))
        return self

    def __exit__(self, *exc):
        for mod, name, real in self.saved:
            setattr(mod, name, real)

    def under_cells(self, name: str, suffix: str = "") -> list[str]:
        return [p for n, p in self.calls if n == name and os.path.normpath(p).startswith(self.cells)
                and p.endswith(suffix)]

    def counts(self) -> dict:
        return {"all": len(self.calls), **{n: sum(c == n for c, _ in self.calls) for n in self.NAMES},
                "listdir_cells": len(self.under_cells("listdir")),
                "stat_shards": len(self.under_cells("stat", ".npz")) + len(self.under_cells("lstat", ".npz")),
                "open_shards": len(self.under_cells("open", ".npz")),
                "open_sidecars": len(self.under_cells("open", ".json"))}


def strace_counts(trace: Path, cells_rel: str) -> dict:
    """Syscalls of a `strace -f` log on paths in the cells folder: by syscall, and the opens of shards."""
    line = re.compile(r"^\d+\s+(\w+)\((.*)")
    by_call: dict[str, int] = {}
    opened = total = 0
    for text in trace.read_text(errors="replace").splitlines():
        m = line.match(text)
        if not m:
            continue
        total += 1
        path = re.search(r'"([^"]*)"', m.group(2))
        if not path or f"{cells_rel}/" not in path.group(1) + "/":
            continue
        by_call[m.group(1)] = by_call.get(m.group(1), 0) + 1
        if m.group(1) in ("open", "openat", "openat2") and path.group(1).endswith(".npz"):
            opened += 1
    return {"file_syscalls": total, "on_cells": by_call, "shards_opened": opened}


# --- the synthetic results folder ------------------------------------------------------------------------

def runs_for(n_shards: int) -> tuple[int, object]:
    """The smallest ``runs`` whose default-config plan has at least ``n_shards`` shards (and that plan)."""
    from banditrepro.workflow.config import load_config
    from banditrepro.workflow.plan import build_plan

    def plan(runs):
        return build_plan(load_config(ROOT, overrides=[f"runs={runs}"]), ROOT, scan=False)

    def count(p):
        return sum(map(len, p.cell_shards.values()))

    lo, hi = 1, 1000
    while count(plan(hi)) < n_shards:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # the count grows with runs (more runs per cell, never fewer shards)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if count(plan(mid)) < n_shards else (lo, mid)
    return hi, plan(hi)


def synthetic(workdir: Path, n_shards: int, repeat: int) -> dict:
    from banditrepro.workflow.estimate import estimate, load_config
    from banditrepro.workflow.plan import build_plan

    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    os.chdir(workdir)  # the plan's paths are relative to the folder Snakemake runs in
    runs, plan = runs_for(n_shards)
    shards = plan.all_shards()
    for cell in plan.cell_shards:
        os.makedirs(plan.cell_folder(cell), exist_ok=True)
    for s in shards:
        open(plan.shard(*s), "wb").close()
    config = load_config(ROOT, overrides=[f"runs={runs}"])
    out = {"runs": runs, "shards_on_disk": len(shards), "cells": len(plan.cell_runs)}

    def timed(fn):
        rows = []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            result = fn()
            rows.append({"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu})
        return result, rows

    full, out["build_plan"] = timed(lambda: build_plan(json.loads(json.dumps(config)), ROOT))
    assert not full.missing and not full.batches, "every shard is on disk: nothing to compute"
    _, out["estimate"] = timed(lambda: estimate(full))
    with FileOps(full.layout.cells) as ops:
        build_plan(json.loads(json.dumps(config)), ROOT)
    out["build_plan_ops"] = ops.counts()
    with FileOps(full.layout.cells) as ops:
        numbers = estimate(full)
    out["estimate_ops"] = ops.counts()
    out["estimate_batches"] = numbers["batches"]
    p = out["build_plan_ops"]
    # planning lists each cell's folder once, and opens or stats no shard: its cost does not grow with shards
    assert p["listdir_cells"] == len(full.cell_runs), p
    assert p["stat_shards"] == 0 and p["open_shards"] == 0, p
    e = out["estimate_ops"]
    assert e["open_shards"] == 0 and e["stat_shards"] == 0 and e["listdir_cells"] == 0, e
    smk_config = [f"runs={runs}"]
    out["dry_run"], out["dry_run_first_call_changes"] = repeated(ROOT, workdir, smk_config, repeat)
    if shutil.which("strace"):
        trace = workdir.parent / f"{workdir.name}-strace.txt"
        traced = dry_run(ROOT, workdir, smk_config, strace=trace)
        assert not any(ours(traced["changes"]).values()), traced["changes"]
        out["dry_run_syscalls"] = strace_counts(trace, full.layout.cells)
        assert out["dry_run_syscalls"]["shards_opened"] == 0, out["dry_run_syscalls"]
        trace.unlink()
    os.chdir(ROOT)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shards", type=int, default=10_000)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/banditrepro-parse"))
    ap.add_argument("--project", type=Path, default=ROOT, help="the checkout whose parse is measured (part 1)")
    ap.add_argument("--no-synthetic", action="store_true", help="part 1 only")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = args.workdir.resolve()
    report = {"project": str(args.project.resolve()), "runs": args.runs}

    empty = work / "empty"
    if empty.exists():
        shutil.rmtree(empty)
    empty.mkdir(parents=True)
    rows, first = repeated(args.project.resolve(), empty, [f"runs={args.runs}"], args.repeat)
    report["parse"], report["parse_first_call_changes"] = rows, first
    print(f"snakemake -n, default config, runs={args.runs}, empty folder ({rows[0]['jobs']} jobs), "
          f"{args.repeat} calls after a warm-up: {show(rows)}; {said(first)}")

    if not args.no_synthetic:
        syn = synthetic(work / "synthetic", args.shards, args.repeat)
        report["synthetic"] = syn
        print(f"synthetic results folder: {syn['shards_on_disk']:,} shards on disk over {syn['cells']} cells "
              f"(default config at runs={syn['runs']})")
        for what in ("build_plan", "estimate"):
            rows = syn[what]
            ops = syn[f"{what}_ops"]
            print(f"  {what} in process: " + ", ".join(f"{k.removesuffix('_s')} {s['median']:.3f} s "
                                                       f"({s['min']:.3f}-{s['max']:.3f})"
                                                       for k in ("wall_s", "cpu_s") for s in [summary(rows, k)])
                  + f"; file operations {ops['all']:,}: {ops['listdir_cells']} listings of cell folders, "
                  f"{ops['stat_shards']} stats and {ops['open_shards']} opens of shards, "
                  f"{ops['open_sidecars']} sidecars read, {ops['stat']:,} stats in all")
        rows = syn["dry_run"]
        print(f"  snakemake -n ({rows[0]['jobs']} jobs): {show(rows)}; {said(syn['dry_run_first_call_changes'])}")
        if "dry_run_syscalls" in syn:
            s = syn["dry_run_syscalls"]
            print(f"  snakemake -n under strace -f: {s['file_syscalls']:,} file syscalls, on the cells folder "
                  + ", ".join(f"{k} {v:,}" for k, v in sorted(s["on_cells"].items()))
                  + f"; shards opened: {s['shards_opened']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
