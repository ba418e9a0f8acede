"""Where a machine's very first run spends its compile, and the least it could be (docs/decisions.md#kernel-cache).

    python benchmarks/bench_compile.py [--config config/config.yaml] [--warm-s 54.5] [--clone-ratio 1.01]

Compiles every algorithm id of the config's cells (``warmup.algorithm_ids`` of its plan, challengers included)
in one new interpreter with an empty kernel cache, as the warm-up does (one step on a 3-arm instance), and
times each numba compilation through numba's ``numba:compile`` events, its nested compilations subtracted, so
every CPU-second is counted once. It prints:

- the total, and the number of compiled functions: the kernels (compiled from Python), the helpers they call,
  and numba's own library code (the ``np.random.Generator`` distributions, ``np.empty`` and friends);
- the cost of compiling a small function (a loop over an array, called from Python, with its wrappers and its
  cache entry): the most a function could cost beyond its code, i.e. an upper bound of the per-function part;
- hence a lower bound of the compile of the kernels' code as written: the total less every function's
  per-function part, as if all 165-odd functions were merged into a few with nothing retyped;
- with ``--warm-s`` (a warm run's wall time) and ``--clone-ratio`` (first / warm of a new clone whose kernels are
  cached, i.e. a first run with data but no compile; ``bench_first_run.py --cache``): the compile CPU that a
  first run of at most 1.2× a warm run can spend, at the CPU-to-wall rate of a first run on 2 busy cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# runs in a new interpreter: an empty cache and nothing compiled or imported before
_COMPILE = r"""
import collections, json, sys, time
from pathlib import Path
from numba.core import event
from banditrepro.workflow import warmup
from banditrepro.workflow.config import load_config
from banditrepro.workflow.plan import build_plan

# the algorithm ids the warm-up compiles for this config (challengers included), in its order
root, config = Path(sys.argv[1]), Path(sys.argv[2])
algos = warmup.algorithm_ids(build_plan(load_config(root, configfiles=[config]), root, scan=False))
stack, rows = [], []

class Timer(event.Listener):
    def on_start(self, ev):
        stack.append([time.process_time(), 0.0])

    def on_end(self, ev):
        t0, nested = stack.pop()
        total = time.process_time() - t0
        if stack:
            stack[-1][1] += total
        f = getattr(ev.data["dispatcher"], "py_func", None)
        name = f"{f.__module__}.{f.__qualname__}" if f else str(ev.data["dispatcher"])
        kind = "library" if not name.startswith("banditrepro") else "kernel" if not stack else "helper"
        rows.append((kind, name, total - nested))

event.register("numba:compile", Timer())
t0 = time.process_time()
for algo in algos:
    warmup.compile_algorithm(algo)
total = time.process_time() - t0
by_kind = collections.defaultdict(lambda: [0, 0.0])
for kind, _, cpu in rows:
    by_kind[kind][0] += 1
    by_kind[kind][1] += cpu
print(json.dumps({"algorithms": len(algos), "total": total, "by_kind": by_kind,
                  "top": sorted(rows, key=lambda r: -r[2])[:15]}))
"""

# a module of small functions, each compiled from Python into an empty cache: the per-function part
_SMALL = """
import numpy as np
from numba import njit
""" + "".join(
    f"""

@njit(cache=True, nogil=True)
def f{i}(x, a):
    s = 0.0
    for k in range(a.shape[0]):
        s += a[k] * x
    return s
"""
    for i in range(21)
)

_SMALL_RUN = r"""
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import small
a = np.ones(3)
small.f0(1.0, a)  # numba's own first-compile set-up, not a per-function cost
t0 = time.process_time()
for i in range(1, 21):
    getattr(small, f"f{i}")(1.0, a)
print((time.process_time() - t0) / 20)
"""


def run_python(code: str, *args: str, cache: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"compile measurement failed:\n{proc.stderr[-3000:]}")
    return proc.stdout.splitlines()[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, default=ROOT / "config/config.yaml")
    ap.add_argument("--warm-s", type=float, help="a warm run's wall time on this machine (bench_first_run.py)")
    ap.add_argument("--clone-ratio", type=float, help="first / warm of a new clone with its kernels cached")
    ap.add_argument(
        "--cpu-per-wall",
        type=float,
        default=1.8,
        help="CPU-s a first run spends per second of wall time (2 busy cores: 1.8 measured)",
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="banditrepro-compile-") as tmp:
        tmp = Path(tmp)
        out = json.loads(run_python(_COMPILE, str(ROOT), str(args.config.resolve()), cache=tmp / "cache"))
        (tmp / "small").mkdir()
        (tmp / "small/small.py").write_text(_SMALL)
        per_function = float(run_python(_SMALL_RUN, str(tmp / "small"), cache=tmp / "cache-small"))
    n = sum(count for count, _ in out["by_kind"].values())
    floor = out["total"] - n * per_function
    out.update(per_function=per_function, functions=n, code_floor=floor)
    print(
        f"compile of {out['algorithms']} algorithm ids in one process (empty cache): {out['total']:.1f} CPU-s, "
        f"{n} functions"
    )
    for kind in ("kernel", "helper", "library"):
        count, cpu = out["by_kind"].get(kind, (0, 0.0))
        print(f"  {kind:8s} {count:4d} functions  {cpu:6.2f} CPU-s")
    print(
        f"a small function costs {per_function:.3f} CPU-s; without that part for every function, the code "
        f"itself: at least {floor:.1f} CPU-s"
    )
    print("largest:")
    for kind, name, cpu in out["top"]:
        print(f"  {cpu:5.2f}  {kind:8s} {name}")
    if args.warm_s and args.clone_ratio:
        budget = (1.2 - args.clone_ratio) * args.warm_s * args.cpu_per_wall
        out["budget"] = budget
        print(
            f"a first run of at most 1.2x a {args.warm_s:.1f} s warm run can spend about {budget:.1f} CPU-s on "
            f"compiling and the warm-up processes ((1.2 - {args.clone_ratio}) x {args.warm_s} s x "
            f"{args.cpu_per_wall} CPU-s/s); the code alone needs {floor:.1f}"
        )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
