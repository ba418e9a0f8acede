"""Cost of ``banditrepro settle`` against the fixed design, measured on the TEST config (issue 45, point 4).

In two fresh copies of the project (code, config, no results): the fixed design (``snakemake`` with runs=20, every
cell 20 runs) and ``banditrepro settle --first-round 20 --max-runs M`` (default 80), both on
``.test/config/config.yaml``; CPU seconds of each (this process's children: snakemake and its jobs, getrusage),
runs per cell, and how many claims each decides. Then the forecast for the default config from ``banditrepro
estimate`` at runs=20, runs=1000, and with the per-cell runs settle chose on the test config carried to the default
config's cells of the same (dataset, algorithm) — a forecast, not a measurement (the default config at runs=1000
is about 1 CPU-hour: not run here). Markdown on stdout.

Usage: PYTHONPATH=src python benchmarks/bench_settle.py [MAX_RUNS]
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "data"
TEST_CONFIG = ".test/config/config.yaml"
FILES = ("Snakefile", "workflow", "config", "profiles", "src", "envs", ".test")
UNDECIDED = "inconclusive"


def copy(dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in FILES:
        subprocess.run(["cp", "-a", str(ROOT / name), str(dest / name)], check=True)
    return dest


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(cwd / "src")}
    start = children_cpu()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_settle: {' '.join(cmd[:5])} failed:\n{(r.stdout + r.stderr)[-2000:]}")
    return children_cpu() - start


def forecast(proj: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(proj / "src")}
    r = subprocess.run([sys.executable, "-m", "banditrepro", "estimate", "--project", str(proj), *args], cwd=proj,
                       env=env, capture_output=True, text=True)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("CPU forecast")), r.stderr.strip()[-300:])
    return re.sub(r"\s+", " ", line)


def main(max_runs: int = 80) -> None:
    mirror = f"data_mirrors=['{MIRROR}']"
    with tempfile.TemporaryDirectory(prefix="bench-settle-") as tmp:
        fixed, settled = copy(Path(tmp) / "fixed"), copy(Path(tmp) / "settle")
        cpu_fixed = timed([sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", TEST_CONFIG, "--config",
                           mirror, "runs=20", "max_runs=20"], fixed)
        cpu_settle = timed([sys.executable, "-m", "banditrepro", "settle", "--project", str(settled), "--configfile",
                            TEST_CONFIG, "--config", mirror, "--first-round", "20", "--max-runs", str(max_runs)],
                           settled)
        res = "results/test"
        state = json.loads((settled / res / "settle/state.json").read_text())
        runs = state["rounds"][-1]["cell_runs"]
        claims_fixed = pd.read_csv(fixed / res / "claims.csv")
        claims_settle = pd.read_csv(settled / res / "claims-settled.csv", keep_default_na=False)
        # the runs settle chose, carried to the default config's cells of the same (dataset, algorithm)
        chosen = {(c.split("/")[0], c.split("/")[2]): n for c, n in runs.items() if n > 20}
        from banditrepro.project import find_project
        from banditrepro.workflow.plan import open_project  # the default config's cells

        here = os.getcwd()
        plan = open_project(find_project(str(settled)), (), [mirror], scan=False)
        os.chdir(here)
        carried = {c: chosen[(c.split("/")[0], c.split("/")[2])] for c in plan.cell_runs
                   if (c.split("/")[0], c.split("/")[2]) in chosen}
        carry_file = Path(tmp) / "carried.yaml"
        carry_file.write_text(json.dumps({"cell_runs": carried}))
        f20 = forecast(settled, "--config", "runs=20")
        f1000 = forecast(settled, "--config", "runs=1000")
        fset = forecast(settled, "--configfile", str(carry_file), "--config", "runs=20")
    hist = Counter(runs.values())
    first = state["rounds"][0]["cell_runs"]
    grown = {c: n - first[c] for c, n in runs.items() if n > first[c]}
    both = claims_fixed.merge(claims_settle[["claim_id", "figure", "verdict", "method"]], on=["figure", "claim_id"],
                              suffixes=("_fixed", "_settled"))
    moved = both[(both.method != "fixed") & (both.verdict_fixed != both.verdict_settled)]
    changes = [f"{r.claim_id}: {r.verdict_fixed} → {r.verdict_settled}" for r in moved.itertuples()]
    print(f"## Settle on the test config (first round 20, max runs {max_runs}), measured\n")
    print("| design | CPU-s (snakemake + jobs + settle) | runs per cell (cells) | claims decided / settled | "
          "rounds |\n|---|---|---|---|---|")
    dec_fixed = int((claims_fixed.verdict.isin(["reproduced", "not reproduced"])).sum())
    print(f"| fixed runs=20 | {cpu_fixed:.1f} | 20 ({len(runs)}) | {dec_fixed} of {len(claims_fixed)} decided "
          "(bootstrap, one look) | 1 |")
    s = claims_settle[claims_settle.method != "fixed"]
    dec_settle = int((s.verdict != UNDECIDED).sum())
    print(f"| settle | {cpu_settle:.1f} | " + ", ".join(f"{n} ({k})" for n, k in sorted(hist.items())) +
          f" | {dec_settle} of {len(s)} settled claims decided ({len(claims_settle) - len(s)} keep the fixed "
          f"verdict); stopped: {state['stopped']} | {len(state['rounds'])} |")
    print(f"\nRound 1 ran every cell at 20 runs, or at a figure's own `runs` capped by max runs "
          f"({sum(n > 20 for n in first.values())} cells at {max(first.values())}); settle then extended "
          f"{len(grown)} cells by {sum(grown.values())} runs in all (runs in all: fixed {20 * len(runs)}, settle "
          f"{sum(runs.values())}). Settled claims whose verdict differs from the fixed design's at 20 runs: "
          f"{len(moved)} ({', '.join(changes)})."
          f" CPU per round (settle): {', '.join(str(r['cpu_seconds']) for r in state['rounds'])} s.")
    print("\n## Forecast for the default config (`banditrepro estimate`; not run)\n")
    print(f"- runs=20: {f20}\n- runs=1000: {f1000}\n- the runs settle chose on the test config, carried to the "
          f"default config's {len(carried)} cells of the same (dataset, algorithm), the rest at 20: {fset}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
