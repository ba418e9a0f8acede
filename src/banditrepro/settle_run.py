"""``banditrepro settle``: rounds of runs that extend only the cells of claims not yet decided, until every claim
is decided, its cells reach ``max_runs``, or a CPU budget is spent (issue 45, point 1; docs/settle.md#the-runner).

Each round is one ordinary ``python -m snakemake`` of the project's Snakefile (its output streamed), with ``runs``
the first round's runs and the config key ``cell_runs`` raising the cells of undecided claims: shards are
content-addressed, so a raised cell computes only its new runs, and the folder left is an ordinary results folder
(bundle, verify, merge work on it). After a round, every claim's parts are read as per-run paired statistics
(``banditrepro.settle_claims``) and each part's confidence sequence is looked at on a grid fixed before any run
(first round, 2×, 4×, …, max_runs), so a resumed, or a merged, settle reads the same sequences. The state
(rounds, per-cell runs, per-claim decisions) is written atomically to ``<results>/settle/state.json`` after every
round: a killed settle resumes from its last finished round. ``--workflow-profile`` is passed to snakemake (the
SLURM profile: each round a handful of submissions sized as any run).

CPU: the CPU time of this process and of the snakemake processes it waited for (``getrusage``); under a cluster
profile the jobs' CPU is spent on other machines and is not counted (the budget then bounds only local work).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from banditrepro import ReproError
from banditrepro import verdicts as vd
from banditrepro.atomic import write_text

STATE_VERSION = 1
DEFAULT_MAX_RUNS = 1280  # the last round of settle_statistic.ROUNDS: where the measured widths stop


def add_arguments(p) -> None:
    p.add_argument("--configfile", action="extend", nargs="+", help="config file(s), as snakemake --configfile")
    p.add_argument("--config", nargs="*", metavar="KEY=VALUE", help="as snakemake --config (settle sets runs, "
                   "max_runs and cell_runs itself)")
    p.add_argument("--workflow-profile", metavar="DIR", help="passed to snakemake (profiles/slurm: on SLURM)")
    p.add_argument("--cores", default="2", help="passed to snakemake (default 2)")
    p.add_argument("--first-round", type=int, default=20, help="runs of every cell in the first round (default 20)")
    p.add_argument("--max-runs", type=int, help="no cell beyond this many runs (default: the config's max_runs, "
                   f"else {DEFAULT_MAX_RUNS})")
    p.add_argument("--cpu-hours", type=float, help="stop after the round that spends this much CPU in all")
    p.add_argument("--rounds", type=int, help="run at most this many rounds now (a later settle resumes)")


def _cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _check(args, config) -> tuple[int, int]:
    if any(str(kv).split("=", 1)[0].strip() == "cell_runs" for kv in args.config or ()):
        raise ReproError("settle: --config cell_runs=...: settle sets cell_runs itself (its rounds' cells)")
    first = args.first_round
    cap = args.max_runs or config.get("max_runs") or DEFAULT_MAX_RUNS
    if first < 1:
        raise ReproError(f"settle: --first-round must be >= 1, got {first}")
    if cap < first:
        raise ReproError(f"settle: max runs ({cap}) below the first round ({first})")
    if args.cpu_hours is not None and not args.cpu_hours > 0:
        raise ReproError(f"settle: --cpu-hours must be > 0, got {args.cpu_hours}")
    if args.rounds is not None and args.rounds < 1:
        raise ReproError(f"settle: --rounds must be >= 1, got {args.rounds}")
    return first, int(cap)


def load_state(path: Path, first: int, cap: int) -> dict:
    if not path.exists():
        return {"version": STATE_VERSION, "first_round": first, "max_runs": cap, "rounds": [], "cell_runs": {},
                "cpu_seconds": 0.0, "alpha": {}, "claims": {}, "stopped": None}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"version {state.get('version')!r}")
    except (ValueError, OSError) as exc:
        raise ReproError(f"settle: {path} is unreadable ({exc}); delete it to start over") from None
    if (state["first_round"], state["max_runs"]) != (first, cap):
        raise ReproError(f"settle: {path} was started with --first-round {state['first_round']} and max runs "
                         f"{state['max_runs']}, not {first} and {cap}: resume with those, or delete it")
    return state


def snakemake(root: Path, configfiles, overrides, round_file: Path | None, profile, cores) -> int:
    """One round: the project's workflow, its output streamed to this terminal."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(root / "Snakefile"), "--cores", str(cores)]
    if profile:
        cmd += ["--workflow-profile", str(profile)]
    files = [*configfiles, *([round_file] if round_file else [])]
    if files:
        cmd += ["--configfile", *map(str, files)]
    cmd += ["--config", *overrides]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(x for x in (str(root / "src"), os.environ.get("PYTHONPATH"))
                                                       if x)}
    print(f"banditrepro settle: {' '.join(cmd[1:])}", flush=True)
    return subprocess.run(cmd, cwd=root, env=env).returncode


def next_targets(traced, decisions, grid, runs_now: dict[str, int]) -> dict[str, int]:
    """Runs each cell of an undecided claim needs next: the next look above its claim's runs (a cell shared by
    several undecided claims takes the most); only cells that grow are listed."""
    want: dict[str, int] = {}
    for t in traced:
        d = decisions.get(t.key)
        if d is None or d.verdict != vd.INCONCLUSIVE:
            continue
        above = [g for g in grid if g > t.runs]
        for cell in t.cells if above else ():
            want[cell] = max(want.get(cell, 0), above[0])
    return {c: n for c, n in sorted(want.items()) if n > runs_now.get(c, 0)}


def run(args) -> int:
    from banditrepro import settle_claims as sc
    from banditrepro import settle_report
    from banditrepro.workflow.config import load_config
    from banditrepro.workflow.plan import open_project

    info = args.project_info
    if info.root is None:
        raise ReproError(f"no project folder here ({info.hint()})")
    root = Path(info.root).resolve()
    configfiles = [Path(f).resolve() for f in args.configfile or ()]
    profile = Path(args.workflow_profile).resolve() if args.workflow_profile else None
    base = list(args.config or ())
    config = load_config(root, configfiles, base, profile)
    first, cap = _check(args, config)
    results = root / config.get("results_dir", "results")
    folder = results / "settle"
    state_path = folder / "state.json"
    state = load_state(state_path, first, cap)
    if state["stopped"]:
        print(f"banditrepro settle: already finished ({state['stopped']}); see {folder / 'settle.md'}")
        return 0
    grid = sc.looks(first, cap)
    overrides = [*base, f"runs={first}", f"max_runs={cap}"]
    done_now = 0
    while args.rounds is None or done_now < args.rounds:
        round_file = None
        if state["cell_runs"]:
            round_file = folder / "cell_runs.yaml"
            write_text(round_file, json.dumps({"cell_runs": state["cell_runs"]}, indent=1, sort_keys=True) + "\n")
        start = _cpu_seconds()
        rc = snakemake(root, configfiles, overrides, round_file, profile, args.cores)
        if rc != 0:
            print(f"banditrepro settle: snakemake failed in round {len(state['rounds']) + 1} (exit {rc}); the "
                  f"state of the finished rounds is kept: run settle again to resume (if snakemake says the folder "
                  f"is locked by a killed round: the round's command above with --unlock first)", file=sys.stderr)
            return 1
        here = os.getcwd()
        try:
            files = configfiles + ([round_file] if round_file else [])
            plan = open_project(info, files, overrides, profile, scan=False)
        finally:
            os.chdir(here)
        traced = sc.trace_all(plan.figures, plan.store.under(root))
        alpha = state["alpha"] or sc.alphas(traced)  # split once, at the first round, then held
        decisions = sc.decide_all(traced, alpha, grid)
        grow = next_targets(traced, decisions, grid, plan.cell_runs)
        state["cpu_seconds"] += _cpu_seconds() - start
        undecided = sorted(k for k, d in decisions.items() if d.verdict == vd.INCONCLUSIVE)
        state["alpha"] = alpha
        state["rounds"].append({"round": len(state["rounds"]) + 1, "cell_runs": dict(sorted(plan.cell_runs.items())),
                                "cpu_seconds": round(_cpu_seconds() - start, 3), "undecided": undecided})
        state["claims"] = {t.key: {"method": "fixed" if t.key not in decisions else "asymptotic",
                                   "verdict": decisions[t.key].verdict if t.key in decisions else t.row["verdict"],
                                   "decided_at": decisions[t.key].decided_at if t.key in decisions else None,
                                   "runs": t.runs, "cells": sorted(t.cells)} for t in traced}
        state["cell_runs"] = {**state["cell_runs"], **grow}
        budget = args.cpu_hours is not None and state["cpu_seconds"] >= args.cpu_hours * 3600
        state["stopped"] = ("every claim decided" if not undecided else
                            "max runs reached by every undecided claim's cells" if not grow else
                            "CPU budget spent" if budget else None)
        settle_report.write(results, folder, traced, decisions, alpha, state)
        write_text(state_path, json.dumps(state, indent=1, sort_keys=True) + "\n")  # atomic: a kill keeps a round
        done_now += 1
        print(f"banditrepro settle: round {len(state['rounds'])}: {len(undecided)} claim(s) undecided, "
              f"{len(grow)} cell(s) to extend" + (f"; stopped: {state['stopped']}" if state["stopped"] else ""),
              flush=True)
        if state["stopped"]:
            break
    return 0
