"""Every name a config's plan gives, and the code digests and import closures under them, as one JSON file: run it
at two commits and compare, to show that a change renames nothing (or exactly what it should).

    PYTHONPATH=src python benchmarks/dump_names.py . names-after.json
    python benchmarks/dump_names.py --diff names-before.json names-after.json

The plans: the default config, the test config (.test/config/config.yaml over it), and each with the challenger
``uniform-pairs`` (so leaderboards are named too); planned with ``scan=False`` in an empty folder (no shard,
probe or record is read). Beside the names: each algorithm's cell code, each figure kind's code, the claims',
summary's, report's and preparation code, the closures of the cells (as digested) and of the kernels (as the numba
cache keys them), the numba cache's key of every kernel module and of a stand-in plugin file.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def _jsonable(x):
    if isinstance(x, dict):
        return {k if isinstance(k, str) else json.dumps(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def dump(root: Path) -> dict:
    import yaml

    from banditrepro import algorithms, challengers, closure, kernel_cache, papers
    from banditrepro.figures.registry import DRAWERS
    from banditrepro.workflow import digests, names
    from banditrepro.workflow.plan import build_plan

    def config(test=False, **extra):
        c = yaml.safe_load((root / "config/config.yaml").read_text())
        if test:
            c.update(yaml.safe_load((root / ".test/config/config.yaml").read_text()))
        return {**c, **extra}

    out = {}
    os.chdir(tempfile.mkdtemp())  # results/ and data/ empty: nothing scanned, no probe, no record
    for label, cfg in {"default": config(), "test": config(True),
                       "default+challengers": config(challengers=["uniform-pairs"]),
                       "test+challengers": config(True, challengers=["uniform-pairs"])}.items():
        plan = build_plan(cfg, root, scan=False)
        n = plan.names
        out[label] = _jsonable({
            "cells": plan.names.shards, "data": n.data, "summary": n.summary, "figure": n.figure,
            "leaderboard": n.leaderboard, "claims": n.claims, "runtime": n.runtime, "report": n.report,
            "software": n.software, "probes": n.probes,
            "leaderboard_code": {p: digests.leaderboard_digest(challengers.arena_figures(plan.figures, p))
                                 for p in challengers.papers_with_challengers(plan.figures)}})
    papers.load()
    kernels = sorted({f"banditrepro.algorithms.{m}" for m in algorithms.MODULES.values()})
    plugin = Path(tempfile.mkdtemp()) / "plugin.py"  # a stand-in plugin kernel that imports the recorder
    plugin.write_text("from banditrepro.recorder import record\n\n\ndef run():\n    return 1\n")
    out["code"] = {
        "cell": {a: digests.cell_code(a) for a in algorithms.names()},
        "figure": {k: digests.figure_code(k) for k in sorted(DRAWERS)},
        "claims": digests.claims_code(), "summary": digests.summary_code(), "report": digests.report_code(),
        "prepare": names.prepare_code(), "claim_modules": digests.claim_modules()}
    out["closures"] = {
        "cell": {m: closure.closure([digests.CELL, m], skip=digests.NO_NUMBERS) for m in kernels},
        "numba": {m: [x for x, _ in closure.closure_files((m,), closure.ROOT)] for m in kernels},
        "entries": {m: closure.closure([m], skip=digests.NO_NUMBERS)
                    for m in (digests.FIGURES, digests.CLAIMS, digests.SUMMARY, digests.REPORT, digests.LEADERBOARD,
                              *names.PREPARE_CODE)}}
    out["numba_keys"] = {m: kernel_cache.source_digest(m, closure.module_file(m)) for m in kernels}
    out["numba_keys"]["plugin"] = kernel_cache.outside_digest([("plugin.py", plugin)])
    return out


def differences(a, b, path="") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [line for k in sorted(a.keys() | b.keys())
                for line in (differences(a[k], b[k], f"{path}/{k}") if k in a and k in b
                             else [f"{path}/{k}: only in {'the first' if k in a else 'the second'}"])]
    return [] if a == b else [f"{path}: {json.dumps(a)} -> {json.dumps(b)}"]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--diff"]:
        found = differences(*(json.loads(Path(p).read_text()) for p in argv[1:3]))
        print(*found, f"{len(found)} differences", sep="\n")
        return 1 if found else 0
    root, target = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    target.write_text(json.dumps(dump(root), indent=1, sort_keys=True) + "\n")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
