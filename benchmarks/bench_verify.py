"""What ``banditrepro verify --sample 20`` of a default run costs (issue 39, point 1), with a warm and with a cold
kernel cache.

    python benchmarks/bench_verify.py [RESULTS_DIR] [--sample 20] [--seed 0] [--repeat 1] [--json out.json]

RESULTS_DIR (default: the project's results/) must hold a finished default run (`snakemake --cores all`). Each
call is a whole `banditrepro verify` process, timed by wall clock and by its children's user + system CPU:

- *warm*: the kernel cache the run left (the user's NUMBA_CACHE_DIR, else ~/.cache/banditrepro/numba), one
  untimed call first so that every kernel of the sample is compiled;
- *cold*: NUMBA_CACHE_DIR an empty temporary folder, new for every call: each recomputing process compiles the
  kernels of its shard (what a reviewer's first check on a new laptop costs).

Every call must pass (exit 0): a benchmark of a failing verification measures nothing. The goal (issue 39) is
under 2 minutes warm on 2 cores; the figures go into docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def verify(results: Path, sample: int, seed: int, env: dict) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process and its children, its last line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "banditrepro", "verify", str(results), "--sample", str(sample),
                        "--seed", str(seed), "--project", str(ROOT)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"verify failed (exit {r.returncode}): {(r.stdout + r.stderr)[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r.stdout.strip().splitlines()[-1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="?", default=str(ROOT / "results"))
    p.add_argument("--sample", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1, help="timed calls of each kind (the median is reported)")
    p.add_argument("--json", help="write the figures here as well")
    args = p.parse_args(argv)
    results = Path(args.results).resolve()
    if not (results / "published.json").is_file():
        sys.exit(f"{results}: no published.json; run `snakemake --cores all` first")
    out = {"sample": args.sample, "seed": args.seed, "cores": os.cpu_count()}
    warm_env = dict(os.environ)
    verify(results, args.sample, args.seed, warm_env)  # compile what the sample needs into the warm cache
    for kind in ("warm", "cold"):
        walls, cpus = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="bench-verify-cache-") as cache:
                env = warm_env if kind == "warm" else {**warm_env, "NUMBA_CACHE_DIR": cache}
                wall, cpu, last = verify(results, args.sample, args.seed, env)
            walls.append(wall)
            cpus.append(cpu)
            print(f"{kind}: {wall:.1f} s wall, {cpu:.1f} CPU-s: {last}", flush=True)
        out[kind] = {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus), "walls": walls}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
