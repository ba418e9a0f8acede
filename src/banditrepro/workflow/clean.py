"""``banditrepro clean``: what a config's results folder stores that its plan does not name, and its size;
with ``--shards [ALGO]``, the plan's own shards, to compute them again (docs/decisions.md#recompute-on-request).

Every stored result is named by everything its bytes depend on (docs/decisions.md#content-addressing), so an
edit, an upgrade or another seed writes new names beside the old, which no run reads again. ``clean`` lists,
one line per kind, what the config's plan (built as the workflow builds it, shards scanned) does not name:

    shards     <results>/cells/<dataset>/T<h>/<algo>/<key>/ of another key than the plan's cell key, cells the
               plan has not, and the old layout's cells/seed<s>/ trees
    summaries  <results>/summaries/<dataset>/T<h>/<algo>/<key>.npz of another key (and the old flat <algo>.npz)
    store      <results>/store/<kind>/.../<key>/ entries of figures, tables, claims, leaderboards, reports,
               run-time tables and software stacks of other names
    batches    <results>/batches/<batch>.json and .done of batches the plan does not hold: cluster specs, end
               markers a stopped run left, the old layout's receipts

and deletes them only when asked (``--remove``). "Not named by this config" is what it means: results of
another config sharing the results folder (another base seed, other papers) are listed too, so the listing
says how many folders, files and bytes each kind holds before anything goes; and the plan's shards are named
for the numerics stack of the environment clean runs in, which must be the runs' (an upgrade names new shards).
Never touched: the fixed paths a run publishes (figures/, tables/, claims.csv, report.md ..., published.json),
logs, and data/ (prepared files are shared by every config and checkout using that folder: no one config can
tell which are unused). A folder holding a file the workflow does not write (or a symlink) is refused with
one line, before anything is removed.

``--shards`` is the one way to recompute on request (e.g. to check a numpy or numba build without a version
change): it lists (and with ``--remove`` deletes) the shards and sidecars in the plan's current folders of its
cells (all, an algorithm id's, or every parameter set of an algorithm name), the cells' summaries, the store
entries of the figures drawing them and the end markers of the batches the next run plans for them. Snakemake
reruns no job whose outputs exist, and regenerates a missing file only for a job that must run: with only
the shards gone nothing reruns, with the summaries gone too the figures still stand (measured, see the
decisions). So the chain up to the figures goes; claims, tables, leaderboards and the report follow from the
figures rerun. ``--forcerun simulate`` cannot: a batch finds its shards complete.
"""

from __future__ import annotations

import os
import re
import shutil
from copy import copy
from dataclasses import dataclass
from pathlib import Path, PurePath

from banditrepro import ReproError
from banditrepro.layout import (
    FIGURE_SUFFIXES,
    LEADERBOARD_SUFFIXES,
    SHARD_STEM,
    SHARD_SUFFIX,
    SIDECAR_SUFFIX,
    SINGLE_FILES,
    sidecar_of,
)
from banditrepro.workflow.batches import NAME_PATTERN
from banditrepro.workflow.cells import algorithm_of, cell_key, kernel_of, split_key
from banditrepro.workflow.config import UnreadableConfig
from banditrepro.workflow.names import numerics_stack
from banditrepro.workflow.plan import open_project, pack_batches, plan_shards, shard_size
from banditrepro.workflow.publish import pairs

# what the workflow writes in a cell's folder: shards (run<k>: the per-run files of before session 6) and
# their sidecars; in the old layout also the retired shard leases' claims, their stale copies and probes
_SUFFIXES = rf"(?:{re.escape(SHARD_SUFFIX)}|{re.escape(SIDECAR_SUFFIX)})"
SHARD_FILE = re.compile(rf"(?:{SHARD_STEM.pattern}|run\d+){_SUFFIXES}")
_CLAIM = rf"{SHARD_STEM.pattern}{re.escape(SHARD_SUFFIX)}\.claim(?:\.(?:stale|now)-[^/]+)?"
CELL_FILE = re.compile(rf"{SHARD_FILE.pattern}|{_CLAIM}")
COMPUTED = re.compile(rf"{SHARD_STEM.pattern}{_SUFFIXES}")  # a shard and its sidecar (what --shards deletes)
BATCH_FILE = re.compile(rf"{NAME_PATTERN}\.(?:json|done)")
PART = re.compile(r"\.(.+)\.\w+\.part")  # an interrupted atomic write of <name> (banditrepro/atomic.py)
KINDS = ("shards", "summaries", "store", "batches")


def size_text(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError  # unreachable


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def _written_name(name: str) -> str:
    """A file's name, or the name an interrupted atomic write of it was writing."""
    m = PART.fullmatch(name)
    return m.group(1) if m else name


def _cell_file(rel: PurePath) -> bool:
    return bool(CELL_FILE.fullmatch(_written_name(rel.name)))


def _summary_file(rel: PurePath) -> bool:
    name = _written_name(rel.name)
    return name.endswith((SHARD_SUFFIX, SIDECAR_SUFFIX)) and not name.startswith(".")  # a summary, its sidecar


def _batch_file(rel: PurePath) -> bool:
    return len(rel.parts) == 1 and bool(BATCH_FILE.fullmatch(_written_name(rel.name)))


def _store_file(rel: PurePath) -> bool:
    """figures/<paper>/<figure>/<key>/<figure>.<suffix>, leaderboards/<paper>/<key>/<paper>.<suffix>,
    <kind>/<key>/<its file> (Layout.figure_pattern, leaderboard_pattern, single_pattern; the store's kinds and
    their files: layout.py)."""
    parts, name = rel.parts, _written_name(rel.name)
    stem, _, suffix = name.rpartition(".")
    if parts[0] == "figures" and len(parts) == 5:
        return stem == parts[2] and suffix in FIGURE_SUFFIXES
    if parts[0] == "leaderboards" and len(parts) == 4:
        return stem == parts[1] and suffix in LEADERBOARD_SUFFIXES
    return len(parts) == 3 and name in SINGLE_FILES.get(parts[0], ())


@dataclass(frozen=True)
class Unit:
    """What clean removes in one go: a folder holding nothing the plan names, or a file."""

    path: str
    folder: bool
    files: int
    size: int


def _refuse(path, why: str = "is not a file this workflow writes") -> ReproError:
    return ReproError(f"{path} {why}; nothing removed")


def _files_of(folder: str, root: str, written) -> list[str]:
    """Every file under ``folder``, each checked to be one the workflow writes (no symlinks followed)."""
    out = []
    for top, dirs, files in os.walk(folder):
        for d in dirs:
            if os.path.islink(os.path.join(top, d)):
                raise _refuse(os.path.join(top, d), "is a symbolic link")
        for f in sorted(files):
            path = os.path.join(top, f)
            if os.path.islink(path) or not written(PurePath(os.path.relpath(path, root))):
                raise _refuse(path)
            out.append(path)
    return out


def unnamed(root: str, keep, written) -> list[Unit]:
    """The largest folders under ``root`` holding no path of ``keep``, and the loose files not in ``keep``,
    sorted; ReproError (nothing listed) for a file ``written(path under root)`` does not know."""
    if not os.path.lexists(root):
        return []
    if os.path.islink(root) or not os.path.isdir(root):
        raise _refuse(root, "is not a folder of this workflow")
    root = os.path.normpath(root)
    keep = {os.path.normpath(p) for p in keep}
    inside = set()  # the folders holding a kept path
    for p in keep:
        while (p := os.path.dirname(p)) and p not in inside:
            inside.add(p)
    units = []

    def visit(folder):
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                path = os.path.normpath(entry.path)
                if path in keep:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if path in inside:
                        visit(path)
                    else:
                        files = _files_of(path, root, written)
                        units.append(Unit(path, True, len(files), sum(os.lstat(f).st_size for f in files)))
                elif entry.is_symlink() or not written(PurePath(os.path.relpath(path, root))):
                    raise _refuse(path)
                else:
                    units.append(Unit(path, False, 1, entry.stat(follow_symlinks=False).st_size))

    visit(root)
    return units


def named(plan) -> dict[str, tuple[str, set[str], object]]:
    """kind -> (its folder, the paths the plan names there, the check of a file the workflow writes there)."""
    lay = plan.layout
    cells = {plan.cell_folder(c) for c in plan.names.shards}
    summaries = {p for cell in plan.names.summary for p in _with_sidecar(lay.summary(*cell))}
    entries = {os.path.dirname(src) for src, _, _ in pairs(plan)}
    batches = {p for b in plan.batches for p in (lay.batch_spec(b.name), lay.batch_done(b.name))}
    return {"shards": (lay.cells, cells, _cell_file), "summaries": (lay.summaries, summaries, _summary_file),
            "store": (lay.store_dir, entries, _store_file), "batches": (lay.batches, batches, _batch_file)}


def stale(plan) -> dict[str, list[Unit]]:
    """kind -> what the results folder stores there that the plan does not name; every check first, so a
    refusal (one line) lists and removes nothing."""
    kinds = named(plan)
    if not any(os.path.lexists(folder) for folder, _, _ in kinds.values()):
        raise ReproError(f"{plan.layout.results_dir} has no cells/, summaries/, store/ or batches/ folder: not a "
                         f"results folder of this workflow (or nothing computed yet); nothing removed")
    return {kind: unnamed(folder, keep, written) for kind, (folder, keep, written) in kinds.items()}


def _kind_line(kind: str, units: list[Unit]) -> str:
    folders = sum(u.folder for u in units)
    files = sum(u.files for u in units)
    return (f"  {kind:10} {_count(folders, 'folder'):>11}, {_count(files, 'file'):>11}, "
            f"{size_text(sum(u.size for u in units)):>9}")


def report(found: dict[str, list[Unit]], removed: bool, results: str, stack: str) -> str:
    units = [u for kind in KINDS for u in found[kind]]
    if not units:
        return f"nothing to clean: every stored result under {results} is named by this config's plan"
    total = size_text(sum(u.size for u in units))
    width = max(len(u.path) for u in units)
    listed = [f"{u.path + ('/' if u.folder else ''):{width + 1}}  {_count(u.files, 'file'):>11}  "
              f"{size_text(u.size):>9}" for u in units]
    kinds = [_kind_line(kind, found[kind]) for kind in KINDS]
    if removed:
        return "\n".join([*listed, f"removed from {results} what this config's plan does not name ({total}):",
                          *kinds])
    return "\n".join([
        f"{results} stores {total} this config's plan does not name (results of other configs sharing this "
        f"folder count as such; shards are named for {stack}):", *kinds, *listed,
        "remove them with: banditrepro clean --remove (same config options); data/ is never touched"])


# --- --shards: recompute on request ------------------------------------------------------------------------


@dataclass
class Recompute:
    """What ``--shards`` deletes so that the next run computes the chosen cells' shards again."""

    cells: list[str]  # the chosen cells with something to delete
    shards: list[Path]  # shards and sidecars, whatever shard sizes computed them
    summaries: list[str]
    figures: list[str]  # the store entries' files of the figures drawing those cells
    ends: list[str]  # end markers (.done) of the batches the next run plans for them


def _next_batches(plan, cells) -> list:
    """The batches the next run plans once ``cells``' shards are gone (as build_plan would then pack them)."""
    after = copy(plan)
    after.cell_shards, after.missing = dict(plan.cell_shards), set(plan.missing)
    for c in cells:
        n = plan.cell_runs[c]
        after.cell_shards[c] = plan_shards(n, shard_size(c, n, plan.config), {})
        after.missing.update((c, a, b) for a, b in after.cell_shards[c])
    chosen = set(cells)
    return [b for b in pack_batches(after, plan.config) if any(s[0] in chosen for s in b.shards)]


def current_shards(plan, algo: str | None) -> Recompute:
    """``--shards [ALGO]``: see the module docstring. ReproError for an algorithm the plan does not have."""
    cells = sorted(plan.cell_shards)
    if algo is not None:
        known = sorted({kernel_of(c) for c in cells})
        cells = [c for c in cells if algo in (algorithm_of(c), kernel_of(c))]
        if not cells:
            raise ReproError(f"--shards: no cell of this config runs algorithm {algo!r} (its algorithms: "
                             f"{', '.join(known)}); nothing removed")
    shards = {c: sorted(p for p in Path(plan.cell_folder(c)).iterdir() if p.is_file() and COMPUTED.fullmatch(p.name))
              if os.path.isdir(plan.cell_folder(c)) else [] for c in cells}
    summaries = {c: plan.layout.summary(*split_key(c)) for c in cells}
    # a cell whose summary stands without its shards (deleted by hand) recomputes only if the summary goes too
    cells = [c for c in cells if shards[c] or os.path.isfile(summaries[c])]
    chosen = set(cells)
    figures = [f for f in plan.figures
               if any(cell_key(p.dataset, p.horizon, a.id) in chosen for p in f.panels for a in p.algorithms)]
    ends = [plan.layout.batch_done(b.name) for b in _next_batches(plan, cells)]
    return Recompute(cells, [p for c in cells for p in shards[c]],
                     [summaries[c] for c in cells if os.path.isfile(summaries[c])],
                     [t for f in figures for t in plan.figure_outputs(f) if os.path.isfile(t)],
                     [e for e in ends if os.path.isfile(e)])


def _with_sidecar(summary: str) -> tuple[str, str]:
    return summary, sidecar_of(summary)


def remove_recompute(todo: Recompute) -> None:
    """The figures' entries first, the shards last: an interrupted removal leaves figures to redraw or a
    summary without its shards, which the same command then lists and removes (current_shards)."""
    summaries = [p for s in todo.summaries for p in _with_sidecar(s)]
    for path in [*todo.figures, *summaries, *todo.ends, *todo.shards]:
        Path(path).unlink(missing_ok=True)
    for folder in sorted({os.path.dirname(f) for f in todo.figures}):
        try:
            os.rmdir(folder)  # the entry's folder, now empty (one a user added a file to stays)
        except OSError:
            pass


def shards_report(todo: Recompute, removed: bool, algo: str | None) -> str:
    which = f"algorithm {algo}" if algo else "every algorithm"
    if not todo.cells:
        return f"nothing to clean: no shard of {'algorithm ' + algo if algo else 'this config'} is computed yet"
    shards = sum(p.name.endswith(SHARD_SUFFIX) for p in todo.shards)
    entries = len({os.path.dirname(f) for f in todo.figures})
    fed = (f"{_count(len(todo.summaries), 'summary', 'summaries')} and "
           f"{_count(entries, 'figure')}' store entries that read them, "
           f"{_count(len(todo.ends), 'batch end marker')}")
    files = _count(len(todo.shards), "file")
    if removed:
        return (f"removed {_count(shards, 'shard')} of {which} ({files}), {fed}: the next run computes the shards "
                f"again and redraws those figures")
    size = size_text(sum(p.stat().st_size for p in todo.shards))
    return (f"{_count(shards, 'shard')} of {which} ({files}, {size}), {fed}; remove them with: banditrepro clean "
            f"--shards{' ' + algo if algo else ''} --remove (same config options), and the next run computes the "
            f"shards again")


def run(project_info, configfiles=(), overrides=(), profile=None, remove: bool = False, shards=None) -> str:
    """List (and with ``remove`` delete) what the config's results folder stores that its plan does not name,
    in the project folder; ``shards`` ("" for all, or an algorithm): the plan's current shards instead."""
    if project_info.root is None:
        raise ReproError(f"no project folder here ({project_info.hint()})")
    try:
        plan = open_project(project_info, configfiles, overrides, profile)  # shards scanned: the next run's batches
    except UnreadableConfig as exc:  # Snakemake's parsing of the config files and --config entries
        raise ReproError(f"configuration error: {exc}; nothing removed") from None
    except ReproError as exc:
        raise ReproError(f"{exc}; nothing removed") from None
    if shards is not None:
        algo = shards or None
        todo = current_shards(plan, algo)
        if remove:
            remove_recompute(todo)
        return shards_report(todo, remove, algo)
    found = stale(plan)  # every check first: a refusal removes nothing
    if remove:
        for kind in ("batches", "store", "summaries", "shards"):
            for unit in found[kind]:
                (shutil.rmtree if unit.folder else os.unlink)(unit.path)
    stack = ", ".join(f"{k} {v}" for k, v in numerics_stack().items())
    return report(found, remove, plan.layout.results_dir, stack)
