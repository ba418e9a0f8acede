"""First run against warm run: what a new user pays before the first figure.

    python benchmarks/bench_first_run.py [--cores 2] [--mirror /path/to/raw-data] [--workdir DIR] [--json out.json]
                                         [--snakemake-args "--config runs=2"] [--keep]

Both runs in one call, on the same machine, in the same copy:

1. **first** — the project's files (``git ls-files``: tracked and untracked-but-not-ignored, i.e. what a fresh
   clone plus the current edits hold) copied into a new folder, an empty cache folder (``XDG_CACHE_HOME``,
   so no compiled kernel is found), no ``data/`` beyond the repository's: every kernel compiles, every
   raw file is fetched (from ``--mirror``, offline) and every dataset prepared;
2. **warm** — ``results/`` and ``.snakemake/`` removed, the same copy run again: kernels cached, data prepared.

Prints wall time, CPU time of all processes and the machine's load average for each, and the ratio
first / warm (issue 31 asks for at most 1.2); then the warm run's CPU against its kernels' (the sidecars'
``kernel_cpu_seconds``; issue 31 point 2 asks for at most 1.25) with the parts beyond them from the job logs.
The copy's own ``src/`` is imported (``PYTHONPATH``), so the first run compiles from a path no earlier run
used. Python's bytecode caches of the copy are not
written beforehand either (a fresh clone has none).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0]) if Path("/proc/loadavg").exists() else float("nan")


def fresh_copy(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def timeline(copy: Path, since: float) -> dict:
    """Seconds from the start to the last log written in each folder of logs/ (a job writes its log when it
    ends): when the data were ready, the shards computed, the figures drawn."""
    out = {}
    for folder in sorted(p for p in (copy / "logs").iterdir() if p.is_dir()):
        times = [f.stat().st_mtime - since for f in folder.rglob("*.log")]
        if times:
            out[folder.name] = {"first": round(min(times), 1), "last": round(max(times), 1), "jobs": len(times)}
    return out


def cpu_parts(copy: Path) -> dict:
    """Where a run's CPU went (issue 31 point 2): the kernels (the sidecars' ``kernel_cpu_seconds``) and each job
    kind's bodies beyond them (the job logs' ``body CPU seconds``); Snakemake and the rest is what remains."""
    kernels = sum(sum(json.loads(f.read_text()).get("kernel_cpu_seconds", ()))
                  for f in (copy / "results/cells").rglob("*.json"))
    bodies: dict[str, float] = {}
    for log in (copy / "logs").rglob("*.log"):
        found = re.findall(r"body CPU seconds:\s*([0-9.]+)", log.read_text(errors="replace"))
        if found:
            kind = log.relative_to(copy / "logs").parts[0].removesuffix(".log")
            bodies[kind] = bodies.get(kind, 0.0) + float(found[-1])
    return {"kernels": round(kernels, 1), "bodies": {k: round(v, 2) for k, v in sorted(bodies.items())}}


def run(copy: Path, env: dict, cores: int, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), *extra]
    load0, cpu0, wall0, since = load(), cpu_children(), time.perf_counter(), time.time()
    proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - wall0, cpu_children() - cpu0
    if proc.returncode:
        sys.exit(f"snakemake failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "load_before": load0, "load_after": load(),
            "timeline": timeline(copy, since), "cpu_parts": cpu_parts(copy)}


# in a new interpreter with an empty kernel cache: the load (= compile) time of every (algorithm, dataset) cell
# of the config at T = 1, in the plan's order; a later cell of an algorithm costs only its new specialisations
_PER_KERNEL = """
import json, sys, time
from pathlib import Path
t0 = time.process_time()
from banditrepro.algorithms import parse_algorithm_id
from banditrepro.cell import run_cells
from banditrepro.datasets.prepared import load_prepared
from banditrepro.manifest import cells, load_manifest
import yaml
root = Path(sys.argv[1])
cfg = yaml.safe_load((root / "config/config.yaml").read_text())
figs = load_manifest(root / cfg["manifest"], papers=cfg["papers"])
out = {"imports": time.process_time() - t0}
for dataset, _, algo in cells(figs):
    name, params = parse_algorithm_id(algo)
    prepared = root / "data/prepared" / f"{dataset}.json"
    if not prepared.is_file():  # an optional dataset (network only) the run left out
        continue
    c0 = time.process_time()
    run_cells(name, params, load_prepared(prepared), 1, [0], 1)
    out[f"{algo} @ {dataset}"] = time.process_time() - c0
print(json.dumps(out))
"""


def per_kernel(copy: Path, env: dict, cache: Path) -> dict:
    env = {**env, "XDG_CACHE_HOME": str(cache)}
    proc = subprocess.run([sys.executable, "-c", _PER_KERNEL, str(copy)], env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"per-kernel compile failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--mirror", type=Path, default=ROOT.parent / "shared/data",
                    help="raw-data mirror (the copy lives elsewhere, so the config's relative mirror misses)")
    ap.add_argument("--workdir", type=Path, help="where the copy goes (default: a new temporary folder)")
    ap.add_argument("--snakemake-args", default="", help="extra arguments, e.g. \"--config runs=2\"")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", action="store_true", help="keep the copy and its caches")
    ap.add_argument("--cache", type=Path, help="an existing cache folder (XDG_CACHE_HOME) instead of an empty one:"
                    " a new clone on a machine that ran the project before, in another folder")
    ap.add_argument("--per-kernel", action="store_true",
                    help="then compile every cell's kernel again into an empty cache, one process, CPU-s each")
    args = ap.parse_args()

    base = Path(tempfile.mkdtemp(prefix="banditrepro-first-", dir=args.workdir))
    copy, cache = base / "project", (args.cache.resolve() if args.cache else base / "cache")
    fresh_copy(copy)
    cache.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(copy / "src"), PYTHONDONTWRITEBYTECODE="")
    extra = shlex.split(args.snakemake_args)
    mirror = ["--config", f"data_mirrors=[{json.dumps(str(args.mirror.resolve()))}]"]
    if "--config" in extra:  # one --config takes several key=value pairs
        i = extra.index("--config")
        extra[i + 1:i + 1] = mirror[1:]
    else:
        extra += mirror
    try:
        first = run(copy, env, args.cores, extra)
        for log in (copy / ".snakemake/log").glob("*.log"):  # every job's finish time, for --keep
            shutil.copy2(log, base / f"first-{log.name}")
        shutil.rmtree(copy / "results")
        shutil.rmtree(copy / ".snakemake")
        shutil.rmtree(copy / "logs")
        warm = run(copy, env, args.cores, extra)
        compiles = per_kernel(copy, env, base / "cache-per-kernel") if args.per_kernel else None
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    out = {"first": first, "warm": warm, "ratio_wall": round(first["wall_s"] / warm["wall_s"], 3),
           "ratio_cpu": round(first["cpu_s"] / warm["cpu_s"], 3), "cores": args.cores, "copy": str(base)}
    for name in ("first", "warm"):
        r = out[name]
        print(f"{name:5s}  {r['wall_s']:7.1f} s wall  {r['cpu_s']:7.1f} CPU-s  "
              f"load {r['load_before']:.2f} -> {r['load_after']:.2f}")
    print(f"first / warm: {out['ratio_wall']:.3f} wall, {out['ratio_cpu']:.3f} CPU")
    parts = warm["cpu_parts"]
    kernels, bodies = parts["kernels"], parts["bodies"]
    if kernels:
        beyond = {k: v - kernels if k == "batches" else v for k, v in bodies.items()}
        rest = warm["cpu_s"] - kernels - sum(beyond.values())
        out["warm_cpu_per_kernel_cpu"] = round(warm["cpu_s"] / kernels, 3)
        print(f"warm: pipeline CPU / kernel CPU {out['warm_cpu_per_kernel_cpu']:.3f} (kernels {kernels:.1f} CPU-s; "
              + ", ".join(f"{'batches beyond the kernels' if k == 'batches' else k} {v:.1f}" for k, v in beyond.items())
              + f", Snakemake and the rest {rest:.1f})")
    for name in ("first", "warm"):
        print(f"{name} timeline (s from start to first/last log of each job kind): " + ", ".join(
            f"{k} {v['first']}-{v['last']} ({v['jobs']})" for k, v in out[name]["timeline"].items()))
    if compiles:
        out["compile_cpu_s"] = {k: round(v, 2) for k, v in compiles.items()}
        print(f"compile CPU-s in one process (empty cache), total {sum(compiles.values()) - compiles['imports']:.1f}"
              f" + imports {compiles['imports']:.1f}:")
        for k, v in sorted(compiles.items(), key=lambda kv: -kv[1]):
            if v >= 0.05:
                print(f"  {v:6.2f}  {k}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
