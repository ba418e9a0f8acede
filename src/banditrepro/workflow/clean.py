"""``banditrepro clean``: the shard folders of code digests a config's plan no longer uses, and their size;
with ``--shards [ALGO]``, the plan's own shards (docs/decisions.md#recompute-on-request).

An edit of a cell's code (docs/decisions.md#code-digests) gives its shards a new folder,
``<results>/cells/seed<s>/<dataset>/T<h>/<algo>/<code>/``; the old folder is never rewritten nor read again.
This lists, for every cell of the current config's plan, the sibling code folders other than the plan's, and
deletes them only when asked (``--remove``), with the receipts (``<results>/batches/*.json``) of the batches
whose shards they held: a receipt left behind would make an undone edit look computed, and its reverted cells
fail in their summaries. Nothing else is touched: not the plan's folders, not the cells of other configs
(other papers, datasets, base seeds), not a folder holding anything but files the workflow writes.

``--shards`` is the one way to recompute on request: it lists (and with ``--remove`` deletes) the shards of
the plan's current cells, all or one algorithm's, with their sidecars and their batches' receipts, so the
next run computes them again (e.g. after a numpy or numba upgrade; ``--forcerun simulate`` cannot, as the
shards are not Snakemake outputs).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from banditrepro import ReproError
from banditrepro.workflow.shard_claims import CLAIM_SUFFIX, PROBE_INFIX, STALE_INFIX

# what the workflow writes in a code folder: shards, their sidecars, an interrupted atomic write's leftover,
# and a shard's claim with its stale copies and probe files (named by workflow/shard_claims.py's constants)
_CLAIM = re.escape(CLAIM_SUFFIX)
SHARD_FILE = re.compile(rf"runs\d+-\d+\.(npz|json)|\.runs\d+-\d+\.(npz|json|npz{_CLAIM})\.\w+\.part"
                        rf"|runs\d+-\d+\.npz{_CLAIM}(({re.escape(STALE_INFIX)}|{re.escape(PROBE_INFIX)})[^/]+)?")
COMPUTED = re.compile(r"runs\d+-\d+\.(npz|json)")  # a shard and its sidecar
CODE_FOLDER = re.compile(r"[0-9a-f]{6,64}")


def size_text(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError  # unreachable


def stale_folders(plan) -> list[tuple[str, int, int]]:
    """(folder, files, bytes) of every code folder beside a cell's current one, sorted; ReproError (nothing
    listed) when the results folder is not one this workflow wrote or a folder holds other files."""
    cells = Path(plan.layout.cells).parent  # <results>/cells
    if not cells.is_dir():
        raise ReproError(f"{plan.layout.results_dir} has no cells/ folder: not a results folder of this "
                         f"workflow (or nothing computed yet); nothing removed")
    found = []
    for cell in sorted(plan.codes):
        used = Path(plan.cell_folder(cell))
        if not used.parent.is_dir():
            continue
        for folder in sorted(used.parent.iterdir()):
            if folder.name == used.name:
                continue
            if not folder.is_dir() or not CODE_FOLDER.fullmatch(folder.name):
                raise ReproError(f"{folder} is not a shard folder of this workflow; nothing removed")
            files = [p for p in folder.rglob("*")]
            other = [p for p in files if not (p.is_file() and SHARD_FILE.fullmatch(p.name))]
            if other:
                raise ReproError(f"{other[0]} is not a file this workflow writes; nothing removed")
            found.append((str(folder), len(files), sum(p.stat().st_size for p in files)))
    return found


def _receipt_shards(path: Path) -> list[str] | None:
    import json

    try:
        shards = json.loads(path.read_text())["shards"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not a receipt this workflow wrote (or half-written): left alone
    return [str(s) for s in shards] if isinstance(shards, list) else None


def receipts_of(plan, folders) -> list[str]:
    """The receipts in ``<results>/batches/`` listing a shard inside one of ``folders`` (sorted). A receipt's
    shard path is taken relative to the cells folder (what batches.receipt writes) or as it stands."""
    batches = Path(plan.layout.receipts)
    if not folders or not batches.is_dir():
        return []
    gone = {os.path.normpath(f) for f in folders}
    cells = plan.layout.cells
    found = []
    for path in sorted(batches.glob("*.json")):
        shards = _receipt_shards(path) or []
        parents = {os.path.normpath(os.path.dirname(p)) for s in shards for p in (os.path.join(cells, s), s)}
        if parents & gone:
            found.append(str(path))
    return found


def report(found, removed: bool, cells: str, receipts=()) -> str:
    if not found:
        return f"nothing to clean: every code folder of this config's cells under {cells} is in use"
    total = sum(size for _, _, size in found)
    width = max(len(folder) for folder, _, _ in found)
    lines = [f"{folder:{width}}  {n:5d} files  {size_text(size):>9}" for folder, n, size in found]
    also = f", and {len(receipts)} receipts of their batches" if receipts else ""
    if removed:
        return "\n".join([*lines, f"removed {len(found)} shard folders of code this config no longer uses "
                                  f"({size_text(total)}){also}"])
    return "\n".join([f"{len(found)} shard folders of code this config no longer uses ({size_text(total)}){also}:",
                      *lines, "remove them with: banditrepro clean --remove (same config options)"])


def current_shards(plan, algo: str | None) -> tuple[list[Path], list[str], list[str]]:
    """``--shards [ALGO]``: the shards and sidecars in the plan's current cell folders, all cells' or those
    of one algorithm (its id, or its name for every parameter set), the receipts of their batches, and what
    they feed: the cells' summaries and the outputs of the figures drawing them. Snakemake does not rerun a
    job whose output is missing while what it feeds is there, so the chain up to the figures goes; claims,
    tables and report follow from the newer figures. ReproError for an algorithm the plan does not have."""
    from banditrepro.workflow.plan import cell_key, kernel_of, split_key

    cells = sorted(plan.cell_shards)
    if algo is not None:
        known = sorted({kernel_of(c) for c in cells})
        cells = [c for c in cells if algo in (split_key(c)[2], kernel_of(c))]
        if not cells:
            raise ReproError(f"--shards: no cell of this config runs algorithm {algo!r} (its algorithms: "
                             f"{', '.join(known)}); nothing removed")
    folders = [plan.cell_folder(c) for c in cells]
    files = sorted(p for f in folders if Path(f).is_dir() for p in Path(f).iterdir()
                   if p.is_file() and COMPUTED.fullmatch(p.name))  # whatever shard sizes computed them
    receipts = {r for c in cells for r in map(plan.receipt, plan.cell_batches.get(c, ())) if Path(r).is_file()}
    receipts.update(receipts_of(plan, folders))
    chosen = set(cells)
    figures = [f for f in plan.figures
               if any(cell_key(p.dataset, p.horizon, a.id) in chosen for p in f.panels for a in p.algorithms)]
    derived = [plan.layout.summary(*split_key(c)) for c in cells] + [t for f in figures for t in plan.figure_outputs(f)]
    return files, sorted(receipts), [d for d in derived if Path(d).is_file()]


def shards_report(files, receipts, summaries, removed: bool, algo: str | None) -> str:
    which = f"algorithm {algo}" if algo else "every algorithm"
    if not files and not receipts and not summaries:
        return f"nothing to clean: no shard of {'algorithm ' + algo if algo else 'this config'} is computed yet"
    size = size_text(sum(p.stat().st_size for p in files)) if not removed else None
    shards = sum(p.suffix == ".npz" for p in files)
    if removed:
        return (f"removed {shards} shards of {which} ({len(files)} files), {len(receipts)} receipts of their "
                f"batches, {len(summaries)} summaries and figure files: the next run computes them again")
    return (f"{shards} shards of {which} ({len(files)} files, {size}), {len(receipts)} receipts of their "
            f"batches, {len(summaries)} summaries and figure files; remove them with: banditrepro clean --shards"
            f"{' ' + algo if algo else ''} --remove (same config options), and the next run computes them again")


def run(project_info, configfiles=(), overrides=(), profile=None, remove: bool = False, shards=None) -> str:
    """List (and with ``remove`` delete) the stale code folders of the config's plan and their receipts, in
    the project folder; ``shards`` ("" for all, or an algorithm): the plan's current shards instead."""
    import yaml

    from banditrepro.workflow.estimate import load_config
    from banditrepro.workflow.plan import build_plan

    if project_info.root is None:
        raise ReproError(f"no project folder here ({project_info.hint()})")
    files = [Path(f).resolve() for f in configfiles]
    try:
        config = load_config(project_info.root, files, overrides, profile and Path(profile).resolve())
    except yaml.YAMLError as exc:
        message = " ".join(str(exc).split())
        raise ReproError(f"configuration error: unreadable YAML ({message}); nothing removed") from None
    except ReproError as exc:  # Snakemake's parsing of the config files and --config entries
        raise ReproError(f"configuration error: {exc}; nothing removed") from None
    os.chdir(project_info.root)  # the plan's paths are relative to the project, as in the workflow
    try:
        plan = build_plan(config, project_info.root, scan=False)
    except ReproError as exc:
        raise ReproError(f"{exc}; nothing removed") from None
    if shards is not None:
        algo = shards or None
        files, receipts, summaries = current_shards(plan, algo)
        if remove:  # what they feed and the receipts first: an interrupted removal still reruns
            for path in [*map(Path, summaries), *map(Path, receipts), *files]:
                path.unlink(missing_ok=True)
        return shards_report(files, receipts, summaries, remove, algo)
    found = stale_folders(plan)  # every check first: a refusal removes nothing
    receipts = receipts_of(plan, [folder for folder, _, _ in found])
    if remove:
        for path in receipts:  # first: a receipt never outlives its shards
            Path(path).unlink(missing_ok=True)
        for folder, _, _ in found:
            shutil.rmtree(folder)
    return report(found, remove, plan.layout.cells, receipts)
