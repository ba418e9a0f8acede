"""The name of every stored result: a digest of everything its bytes depend on (docs/decisions.md#content-addressing).

A result stored under its name is complete (every write is atomic) and correct for that name; nothing else
(Snakemake's metadata, a receipt, a lock) is trusted to say that a file is current. Keys are computed at parse
time from the config, the catalog, the manifest and the sources, never from a file's content or age, except
the bytes of a user's own matrix file and the probe of an optional dataset (both read, never written):

    data       catalog entry, raw sources' entries (their sha256), the fallback's data key, a user file's
               sha256, the preparation code's closure             -> data/prepared/<dataset>/<data>.json
    cell       algorithm id, cell code (kernel closure + cell.py), data key, horizon, base seed, shard
               format, numerics stack                             -> <results>/cells/.../<cell>/runs<a>-<b>.npz
    summary    shards key, runs kept, the summary code            -> <results>/summaries/.../<summary>.npz
    figure     its manifest entry and drawing code, the names of the summaries and prepared files it draws,
               an optional dataset's probe, the drawing stack     -> <results>/store/figures/<paper>/<id>/<key>/
    claims     the claim entries and tests, the figures' keys, the drawing stack
                                                                  -> <results>/store/claims/<key>/claims.csv
    runtime    summary code, every summary's name, the drawing stack
    report     its code, the deviations, the figures, summaries, claims, run times, leaderboards, software, the
               drawing stack, and the verification and merged sources recorded for these store entries
               (verification.json, received.json: banditrepro/records.py; a record of other entries is not shown)
    leaderboard: likewise from what it reads, with the drawing stack; software: the full environment

The fixed paths a reader opens (``<results>/figures/…``, ``claims.csv``, ``report.md`` …) are copies of store
entries, brought up to date by the last step of every run (banditrepro/workflow/publish.py).
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from pathlib import Path

from banditrepro import closure
from banditrepro.filehash import file_sha256
from banditrepro.layout import KEY_CHARS, split_key
from banditrepro.workflow import digests

# What preparation runs (cli.py prepare): the catalog's derivations and the instance checks; an edit gives every
# dataset a new name, so its prepared file and every shard drawn from it are made anew
PREPARE_CODE = ("banditrepro.datasets.catalog", "banditrepro.datasets.derive", "banditrepro.instances")


def key(*parts) -> str:
    """The name of a result from what its bytes depend on (JSON-able parts, dict keys sorted)."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_CHARS]


@functools.cache
def numerics_stack() -> dict:
    """The versions a shard's numbers may depend on besides our code: numpy's Generator and numba's compiled
    distributions and arithmetic (docs/decisions.md#stack-in-the-name). Read from the installed metadata, so
    planning imports neither (numba alone takes ~0.4 s)."""
    from importlib import metadata

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {"numpy": version("numpy"), "numba": version("numba"),
            "python": ".".join(platform.python_version_tuple()[:2])}


# What writes a figure's, table's or claim's bytes above the kernels (docs/decisions.md#drawing-stack-in-the-names):
# the drawing and its PDF writer, the PNG encoder and the PDF font subsetter it calls, the tables, the intervals
DRAWING = ("matplotlib", "pillow", "fonttools", "seaborn", "pandas", "scipy")


@functools.cache
def drawing_stack() -> dict:
    """The versions of ``DRAWING`` as installed (None: not installed), read like ``numerics_stack`` without
    importing them (matplotlib, pandas and scipy take seconds): an upgrade renames every figure, table, claim
    and report, and no shard or summary."""
    from importlib import metadata

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {d: version(d) for d in DRAWING}


@functools.cache
def prepare_code() -> str:
    return digests.source_digest(PREPARE_CODE)


def data_key(catalog, dataset: str, _seen=()) -> str:
    """A dataset's name: what its prepared file derives from. A user's matrix file is named by its bytes (read
    here: the only input outside the catalog); a missing one gets "absent", and its preparation fails."""
    if dataset in _seen:
        from banditrepro import ReproError

        raise ReproError(f"dataset {dataset!r} is its own fallback")
    user = catalog.user_file(dataset)
    user_sha = None if user is None else _user_file_sha(dataset, user)
    return key("data", catalog.dataset(dataset), [_holds(catalog.source(s)) for s in catalog.raw_inputs(dataset)],
               [data_key(catalog, d, (*_seen, dataset)) for d in catalog.dataset_inputs(dataset)], user_sha,
               prepare_code())


# a source entry's keys that say who may receive its derived files, never what they hold (banditrepro bundle)
PASSING_ON = ("redistribute",)


def _holds(source: dict) -> dict:
    return {k: v for k, v in source.items() if k not in PASSING_ON}


def _user_file_sha(dataset: str, path: Path) -> str:
    """A user matrix file's sha256; "absent" if it does not exist (its preparation then fails naming it). An I/O
    error (ESTALE, EIO on a network file system) stops the parse with one line: a name must not be guessed."""
    from banditrepro import ReproError

    try:
        return file_sha256(path)
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        raise ReproError(f"dataset {dataset!r}: cannot read {path} ({exc.strerror or exc}); run again") from None


# what a cell's shards' key covers, part by part, as ``cell_parts`` gives them and published.json records them
PARTS = ("algorithm", "code", "data", "horizon", "base_seed", "format", "stack")


def cell_parts(algo: str, code: str, data: str, horizon: int, base_seed: int) -> dict:
    """What a cell's shards' name covers, part by part (``PARTS``; published.json records them, so that verify,
    merge and compare can say which part differs between two machines)."""
    from banditrepro.shardformat import SHARD_FORMAT

    return {"algorithm": algo, "code": code, "data": data, "horizon": int(horizon), "base_seed": int(base_seed),
            "format": SHARD_FORMAT, "stack": numerics_stack()}


def key_of_parts(parts: dict) -> str:
    """The shards' key of ``cell_parts``' record (also of one read back from another machine's published.json)."""
    return key("cell", *(parts[p] for p in PARTS))


def shards_key(algo: str, code: str, data: str, horizon: int, base_seed: int) -> str:
    """A cell's shards' folder: everything a run's bytes depend on but the run index (in the shard's name)."""
    return key_of_parts(cell_parts(algo, code, data, horizon, base_seed))


def summary_key(cell: str, runs: int, code: str) -> str:
    """A summary of runs 0..runs-1 of a cell: the same whatever shards hold them."""
    return key("summary", cell, int(runs), code)


def probe_state(path) -> str:
    """An optional dataset's probe as a figure's name sees it: the status file's bytes, or "unprobed"."""
    p = Path(path)
    try:
        return hashlib.sha256(p.read_bytes()).hexdigest()[:KEY_CHARS]
    except OSError:
        return "unprobed"


def name_plan(plan) -> None:
    """Every name of ``plan`` (``plan.names``), from its config, catalog and figures: each cell's shards' key
    with the parts it covers (what publishing, verify, merge and compare read), every other key."""
    cfg, cat, n = plan.config, plan.catalog, plan.names
    # every dataset of the catalog, not only those a figure draws: `snakemake <its prepared file>` prepares any
    for d in sorted(cat.datasets):
        n.data[d] = data_key(cat, d)
    summary_code = digests.summary_code()
    for cell, runs in plan.cell_runs.items():
        dataset, horizon, algo = split_key(cell)
        n.parts[cell] = cell_parts(algo, digests.cell_code(algo), n.data[dataset], horizon, cfg["base_seed"])
        n.shards[cell] = key_of_parts(n.parts[cell])
        n.summary[(dataset, horizon, algo)] = summary_key(n.shards[cell], runs, summary_code)
    name_outputs(plan)


def probes_of(plan) -> dict:
    """The probe state (``probe_state``) of every optional dataset a figure draws."""
    used = {p.dataset for f in plan.figures for p in f.panels}
    return {d: probe_state(plan.layout.status_file(d)) for d in sorted(used) if plan.catalog.is_optional(d)}


def name_outputs(plan) -> None:
    """The names of the figures and of everything that reads them, from the summaries' names and the probes of
    the optional datasets (the status files' bytes: a figure's table shows the probe's reason). Called again
    once a first run's probes have run (the Snakefile's rule ``all``), so a store entry is never named by a
    probe it did not see."""
    from banditrepro import challengers, leaderboard
    from banditrepro.workflow import software

    n = plan.names
    probes = probes_of(plan)
    n.probes = probes
    summary_code = digests.summary_code()
    for fig in plan.figures:
        drawn = sorted({(p.dataset, p.horizon, a.id) for p in fig.panels for a in p.algorithms})
        datasets = sorted({p.dataset for p in fig.panels})
        n.figure[(fig.paper, fig.id)] = key(
            "figure", digests.figure_digest(fig), [n.summary[c] for c in drawn], [n.data[d] for d in datasets],
            [probes[d] for d in datasets if d in probes], drawing_stack())
    every_summary = sorted(n.summary.values())
    every_figure = [n.figure[(f.paper, f.id)] for f in plan.figures]
    drawing = drawing_stack()
    n.claims = key("claims", digests.claims_digest(plan.figures), every_figure, every_summary, drawing)
    for paper in leaderboard.papers(plan.figures):  # the papers a challenger joined
        arena = challengers.arena_figures(plan.figures, paper)
        n.leaderboard[paper] = key("leaderboard", digests.leaderboard_digest(arena), every_figure, every_summary,
                                   drawing)
    n.runtime = key("runtime", summary_code, sorted(plan.runtime_inputs()), drawing)
    n.software = key("software", software.stack())
    n.report = key("report", digests.report_code(), closure.bytes_digest(plan.deviations_file()), every_figure,
                   every_summary, n.claims, n.runtime, sorted(n.leaderboard.items()), n.software, drawing,
                   provenance(plan))


def provenance(plan) -> list:
    """What the report shows of a recorded verification and the sources merged in: only the records that
    describe this plan's store entries (banditrepro/records.py), so a record of another config's numbers
    renames no report of this one. Read, never written, here."""
    from dataclasses import replace

    from banditrepro.records import shown

    check, merged = shown(replace(plan.layout, names=plan.names))
    return [check, merged]
