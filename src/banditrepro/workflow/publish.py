"""The fixed paths a reader opens, brought up to date from the store by the last step of every run.

Figures, tables, claims.csv, the reports, the run-time table, the leaderboards and software.json are made into
the store (``<results>/store/…/<key>/``, named by what they derive from, banditrepro/workflow/names.py) and
copied from there to ``<results>/figures/…``, ``<results>/claims.csv`` and so on by ``publish``, the body of
rule ``all``: a rule with a body and no output runs on every invocation that is not a dry run, after every
target, whatever ``--rerun-triggers`` or Snakemake's metadata say. It compares bytes, so a run with nothing new
rewrites nothing, and a config switched back and forth shows its own numbers each time.

``<results>/published.json`` lists what the last publication put where, with the key of each file, for
readers (and the removal of files a config no longer makes: a fresh folder would not have them). It is never
trusted to say a file is current: the bytes are compared every time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from banditrepro.atomic import write_bytes, write_text
from banditrepro.workflow.config import results_config


def pairs(plan) -> list[tuple[str, str, str]]:
    """(store entry, fixed path, key) of every file this plan publishes."""
    from banditrepro import leaderboard

    st, pub, names = plan.store, plan.layout, plan.names
    out = []
    for fig in plan.figures:
        key = names.figure[(fig.paper, fig.id)]
        stored, fixed = st.figure_outputs(fig.paper, fig.id), pub.figure_outputs(fig.paper, fig.id)
        out += [(a, b, key) for a, b in zip(stored, fixed)]
    for paper in leaderboard.papers(plan.figures):
        key = names.leaderboard[paper]
        out += [(a, b, key) for a, b in zip(st.leaderboard_outputs(paper), pub.leaderboard_outputs(paper))]
    out += [(st.claims_csv, pub.claims_csv, names.claims), (st.runtime_csv, pub.runtime_csv, names.runtime),
            (st.report_md, pub.report_md, names.report), (st.reproduction_md, pub.reproduction_md, names.report),
            (st.software_json, pub.software_json, names.software)]
    return out


def cell_records(plan) -> dict:
    """cell -> its shards' key, what the key covers (names.cell_parts), its runs and its summary's key: what
    verify, merge and compare read of a folder to find its shards and to say why another machine names them
    otherwise. A record for readers: a shard is found and checked by its name, never trusted from here."""
    from banditrepro.workflow import digests, names
    from banditrepro.workflow.cells import split_key

    out = {}
    for cell in sorted(plan.cell_names):
        dataset, horizon, algo = split_key(cell)
        parts = names.cell_parts(algo, digests.cell_code(algo), plan.names.data[dataset], horizon,
                                 plan.config["base_seed"])
        out[cell] = {"key": plan.cell_names[cell], "runs": plan.cell_runs[cell],
                     "summary": plan.names.summary[(dataset, horizon, algo)], **parts}
    return out


def _same(a: str, b: str) -> bool:
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        return Path(a).read_bytes() == Path(b).read_bytes()
    except OSError:
        return False


def published_before(path) -> dict:
    try:
        found = json.loads(Path(path).read_text())
        return found.get("files", {}) if isinstance(found, dict) else {}
    except (OSError, ValueError):
        return {}


def publish(plan) -> str:
    """Copy each store entry whose fixed path holds other bytes (or none), remove the files an earlier
    publication put there that this plan does not make, and write published.json. Returns the log's text."""
    from banditrepro.challengers import remove_stale_leaderboards

    lay = plan.layout
    if plan.partial:
        return (f"first_run {plan.config['first_run']}: shards only, nothing published "
                "(banditrepro merge pools them with the other runs)\n")
    todo = pairs(plan)
    copied = []
    for src, dest, _ in todo:
        if not _same(src, dest):
            write_bytes(dest, Path(src).read_bytes())
            copied.append(dest)
    keep = {dest for _, dest, _ in todo}
    removed = [p for p in published_before(lay.published_json) if p not in keep and os.path.isfile(p)]
    for path in removed:
        Path(path).unlink(missing_ok=True)
    # results folders published before published.json existed: leaderboards of challengers no longer configured
    removed += [p for p in remove_stale_leaderboards(plan.figures, lay) if p not in removed]
    record = {"results_dir": lay.results_dir, "base_seed": plan.config["base_seed"],
              "files": {dest: {"key": key, "from": src} for src, dest, key in todo},
              "config": results_config(plan.config), "cells": cell_records(plan)}
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"
    if not (os.path.isfile(lay.published_json) and Path(lay.published_json).read_text() == text):
        write_text(lay.published_json, text)
    return (f"published {len(todo)} files: {len(copied)} copied, {len(todo) - len(copied)} already current\n"
            + "".join(f"copied {p}\n" for p in copied) + "".join(f"removed {p}\n" for p in removed))
