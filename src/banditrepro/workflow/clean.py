"""``banditrepro clean``: the shard folders of code digests a config's plan no longer uses, and their size.

An edit of a cell's code (docs/decisions.md#code-digests) gives its shards a new folder,
``<results>/cells/seed<s>/<dataset>/T<h>/<algo>/<code>/``; the old folder is never rewritten nor read again.
This lists, for every cell of the current config's plan, the sibling code folders other than the plan's, and
deletes them only when asked (``--remove``). Nothing else is touched: not the plan's folders, not the cells of
other configs (other papers, datasets, base seeds), not a folder holding anything but shard files.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from banditrepro import ReproError

# what the workflow writes in a code folder: shards, their sidecars, an interrupted atomic write's leftover
SHARD_FILE = re.compile(r"runs\d+-\d+\.(npz|json)|\.runs\d+-\d+\.(npz|json)\.\w+\.part")
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


def report(found, removed: bool, cells: str) -> str:
    if not found:
        return f"nothing to clean: every code folder of this config's cells under {cells} is in use"
    total = sum(size for _, _, size in found)
    width = max(len(folder) for folder, _, _ in found)
    lines = [f"{folder:{width}}  {n:5d} files  {size_text(size):>9}" for folder, n, size in found]
    if removed:
        return "\n".join([*lines, f"removed {len(found)} shard folders of code this config no longer uses "
                                  f"({size_text(total)})"])
    return "\n".join([f"{len(found)} shard folders of code this config no longer uses ({size_text(total)}):", *lines,
                      "remove them with: banditrepro clean --remove (same config options)"])


def run(project_info, configfiles=(), overrides=(), profile=None, remove: bool = False) -> str:
    """List (and with ``remove`` delete) the stale code folders of the config's plan, in the project folder."""
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
    found = stale_folders(plan)  # every check first: a refusal removes nothing
    if remove:
        for folder, _, _ in found:
            shutil.rmtree(folder)
    return report(found, remove, plan.layout.cells)
