"""Helpers of the workflow tests: run Snakemake on this checkout or on a copy of it, read its output."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIRROR = ROOT.parent / "shared" / "data"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TEST_CONFIG = ".test/config/config.yaml"
TEST_RESULTS = "results/test"  # results_dir of the test config
TEST_CELLS = f"{TEST_RESULTS}/cells"  # <dataset>/T<h>/<algo>/<cell key>/runs<a>-<b>.npz below
MIRROR_ARG = ["--config", f"data_mirrors=['{MIRROR}']"]  # a project copy is not beside ../shared/data
PROJECT_FILES = ("Snakefile", "workflow", "config", "profiles", "src", "envs", ".test")


def smk(*args, cwd=ROOT, snakefile=None, timeout=1500, env=None, runner=None):
    """Snakemake (``runner``: another command line that takes Snakemake's arguments) on ``snakefile``."""
    snakefile = Path(snakefile or Path(cwd) / "Snakefile")
    # shell jobs (python -m banditrepro) use the same checkout as the rules
    env = {**os.environ, "PYTHONPATH": str(snakefile.parent / "src"), **(env or {})}
    command = [*(runner or SNAKEMAKE), "-s", str(snakefile), *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


# The test config narrowed to its smallest paper at a short horizon (Winner Stays, T <= 500: 46 shards, about
# 30 s a run on 2 cores): the session's narrowed reference (tests/conftest.py) and the runs compared with it.
SUBSET = [*MIRROR_ARG[1:], "papers=[winner-stays]", "max_horizon=500"]
NARROWED_SHARDS = 46


def run_narrowed(proj: Path, *config: str, args=(), results: str = TEST_RESULTS, env=None):
    """The narrowed test config in ``proj`` (``config``: more KEY=VALUE), asserted to succeed."""
    r = smk("--configfile", TEST_CONFIG, "--cores", "2", *args, "--config", *SUBSET, f"results_dir={results}",
            *config, cwd=proj, env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r


def job_counts(out: str) -> dict[str, int]:
    """The job-stats table of a run or a dry run: rule -> count, and "total" (only the table's rows: a job's
    block, `--quiet host`, has two-word lines too, such as "jobid: 0")."""
    counts, inside = {}, False
    for ln in out.splitlines():
        words = ln.split()
        if words == ["job", "count"]:
            inside = True
        elif inside and len(words) == 2 and words[1].isdigit():
            counts[words[0]] = int(words[1])
            inside = words[0] != "total"
        elif inside and words and not set(ln.strip()) <= set("- "):
            inside = False
    return counts


def error_lines(r) -> list[str]:
    """What a user sees on a failed parse, minus Snakemake's two start-up notices."""
    return [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip() and not ln.startswith(
        ("Using workflow specific profile", "Config file "))]


def copy_project(dest: Path) -> Path:
    """Code, config and profiles of this checkout (no results, no data) in ``dest``."""
    dest.mkdir(parents=True)
    for name in PROJECT_FILES:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / name)
    return dest


def clone(folder: Path, dest: Path) -> Path:
    """A `cp -a` copy (mtimes kept) of a project folder."""
    subprocess.run(["cp", "-a", str(folder), str(dest)], check=True)
    return dest


def tree_digest(folder: Path, skip: str | None = None) -> dict[str, tuple[int, str]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.rglob("*")) if p.is_file() and not (skip and str(p).startswith(skip))}


def edit_function(path: Path, name: str) -> None:
    """Add a statement to the body of function ``name`` in the source file ``path`` (a code edit that
    changes no behaviour, which a digest must still see)."""
    import ast

    text = Path(path).read_text()
    node = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name)
    first = node.body[-1]
    lines = text.splitlines(keepends=True)
    indent = " " * first.col_offset
    lines.insert(first.lineno - 1, f"{indent}pass  # edited by a test\n")
    Path(path).write_text("".join(lines))


# The plan Snakemake builds for a config, built by the project's own code (its src/, which a test may have
# edited) in the project folder, from the config Snakemake would build (workflow/config.py load_config: the
# default profile, config/config.yaml, each --configfile, then --config). Paths are relative to the project.
_PLAN = """
import json, sys
from pathlib import Path
from banditrepro import leaderboard
from banditrepro.workflow import digests, publish
from banditrepro.workflow.config import load_config
from banditrepro.workflow.plan import build_plan, split_key

cfg = load_config(Path.cwd(), [Path(f).resolve() for f in json.loads(sys.argv[1])], json.loads(sys.argv[2]))
p = build_plan(cfg, ".")
cells = {c: {"key": p.names.shards[c], "folder": p.cell_folder(c), "summary": p.summary_of(*split_key(c)),
             "shards": [p.shard(c, a, b) for a, b in p.cell_shards[c]],
             "missing": [p.shard(c, a, b) for a, b in p.cell_shards[c] if (c, a, b) in p.missing]}
         for c in p.cell_runs}
figures = {f.stem: {"drawn": sorted({f"{q.dataset}/T{q.horizon}/{a.id}" for q in f.panels for a in q.algorithms}),
                    "store": p.figure_outputs(f), "published": p.layout.figure_outputs(f.paper, f.id),
                    "key": p.names.figure[(f.paper, f.id)], "code": digests.figure_code(f.kind)}
           for f in p.figures}
print(json.dumps({"cells": cells, "figures": figures, "runtime": p.runtime_inputs(),
                  "batches": {b.name: [p.shard(*s) for s in b.shards] for b in p.batches},
                  "prepared": {d: p.layout.prepared_file(d) for d in p.names.data},
                  "leaderboards": leaderboard.papers(p.figures),
                  "optional": sorted(d for d in p.names.data if p.catalog.is_optional(d)),
                  "published": {dest: src for src, dest, _ in publish.pairs(p)},
                  "results": p.layout.results_dir, "shards_log": p.layout.shards_log}))
"""


def plan_of(project: Path, *configfiles: str, env=None, **config) -> dict:
    """What the plan of ``project`` for that config says (``_PLAN``): per cell its key, folder, summary, shards
    and the shards missing now; per figure the cells it draws, its store and published files, its key and
    its drawing code's digest; the batches of missing shards; every published path with its store entry.
    ``config``: as ``--config`` sets it."""
    env = {**os.environ, "PYTHONPATH": str(Path(project) / "src"), **(env or {})}
    overrides = [f"{k}={json.dumps(v)}" for k, v in config.items()]  # as `--config k=v`: YAML values
    r = subprocess.run([sys.executable, "-c", _PLAN, json.dumps(list(configfiles)), json.dumps(overrides)],
                       cwd=project, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def scheduled_cells(out: str, plan: dict) -> set[str]:
    """Cells of the shards in the batches a dry run with `--quiet host` lists (one block per job), as the
    project's own plan (``plan_of``) packs them: only missing shards (docs/decisions.md#content-addressing)."""
    names = set(re.findall(r"wildcards: batch=([^,\s]+)", out))
    folders = {c["folder"]: cell for cell, c in plan["cells"].items()}
    return {folders[str(Path(s).parent)] for b in names for s in plan["batches"][b]}


def computed(project: Path, results: str = TEST_RESULTS) -> list[str]:
    """The shards the runs of that results folder computed, in order, as paths under it."""
    return shards_computed(Path(project) / results)


def shards_computed(results: Path) -> list[str]:
    """The shards computed in the results folder ``results`` so far, in order, as paths under it
    (<results>/logs/shards-computed.log: one line per shard written: path, host, pid, SLURM job)."""
    log = Path(results) / "logs/shards-computed.log"
    return [ln.split()[0] for ln in log.read_text().splitlines()] if log.exists() else []


def shard_files(results: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every shard file and sidecar: inode, mtime and bytes (a rewrite, even of the same bytes, changes the first
    two)."""
    return {str(p.relative_to(results)): (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted((Path(results) / "cells").rglob("*")) if p.is_file()}


def mtimes(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` with its mtime (ns): what a run that rewrites nothing leaves as it was."""
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def only_all(out: str) -> bool:
    """Whether the job table of a run or a dry run lists exactly one job, rule `all` (a complete folder:
    rule all has a body and no output, so it runs on every invocation, docs/decisions.md#content-addressing)."""
    return job_counts(out) == {"all": 1, "total": 1}


def by_hand_folder(project: Path, plan: dict, dest: Path) -> tuple[Path, Path]:
    """The workflow's results of ``plan`` as a folder made by hand reads them (a Layout without names keeps
    the flat paths, banditrepro/layout.py): ``dest/results`` with every existing summary of the plan at
    summaries/<dataset>/T<h>/<algo>.npz and the published tables and leaderboards, ``dest/data`` with the
    prepared files at prepared/<dataset>.json and the probes' status files. Returns (results, data)."""
    project = Path(project)
    results, data = dest / "results", dest / "data"
    for cell, c in plan["cells"].items():
        if (project / c["summary"]).exists():
            (results / "summaries" / f"{cell}.npz").parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(project / c["summary"], results / "summaries" / f"{cell}.npz")
    for sub in ("tables", "leaderboards"):
        if (project / plan["results"] / sub).is_dir():
            shutil.copytree(project / plan["results"] / sub, results / sub)
    (data / "prepared").mkdir(parents=True)
    for dataset, path in plan["prepared"].items():
        if (project / path).exists():
            shutil.copy2(project / path, data / "prepared" / f"{dataset}.json")
    shutil.copytree(project / "data/status", data / "status")
    return results, data


def test_config_dict(**extra) -> dict:
    """The config Snakemake builds for `--configfile .test/config/config.yaml` (config/config.yaml under it), with
    ``extra`` as `--config` would add it."""
    import yaml

    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    cfg.update(yaml.safe_load((ROOT / TEST_CONFIG).read_text()))
    cfg.update(extra)
    return cfg


test_config_dict.__test__ = False  # a helper, not a test (its name starts with test_)
