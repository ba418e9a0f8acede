"""``banditrepro merge SOURCE... --into RESULTS_DIR``: pool runs computed elsewhere (results folders, bundles) into a
results folder of this project, so that the next Snakemake run computes only what no source holds.

1. *Ours or foreign.* A shard is ours when its folder carries the key this checkout's plan gives its cell
   (``plan.names.shards``; the plan of ``--configfile``/``--config`` with ``results_dir`` the ``--into`` folder).
   Any other is foreign (other code, data, seed, format or numerics stack, or a cell this config does not draw):
   refused, one line each saying which part of its name differs where the source's published.json records it;
   with ``--keep-foreign`` stored untouched under its own name (for ``verify``), where this config never reads.
2. *Every run held twice agrees* (banditrepro/sharing/agreement.py). A run in two places (two sources, or a
   source and the ``--into`` folder), in whatever shards, must agree byte for byte: every per-run array's slice
   of that run (dtype and bytes) and the shared arrays. Every shard is also checked against its name (its runs,
   horizon, base seed). On any disagreement nothing is written and the lines name both places, the cell, the
   run and the array.
3. *All or nothing.* Every source is checked whole before anything else (sharing/sources.py: names, links,
   sizes, checksums, records, each shard's description against its path: a bad source is exit 2). A refused
   foreign shard (without ``--keep-foreign``) or a disagreement writes nothing (exit 1). Otherwise every shard
   not in the folder yet is staged in ``<into>/.merge-<random>/`` (same file system), synced, then moved to
   its path (``os.replace``: sidecar first, ``.npz`` last, the file that makes a shard complete), the folders
   synced; ``received.json`` is written last, naming what was moved in. A merge killed while staging leaves
   the folder as it was; killed while moving, a subset of checked, complete shards and no ``received.json``
   line: the same command again completes it. A stale staging folder is removed by the next merge; nothing
   else reads it (plans and ``clean`` look in cells/, summaries/, store/, batches/ only).

Runs split across machines combine because a shard's bytes do not depend on which shard holds its runs (each
run draws from its own stream) and the plan follows a cell's shards from run 0, taking the longest file at
each start (banditrepro/workflow/plan.py).

Exit status: 0 when every shard was merged (or already there), 1 when one was refused or two copies of a run
disagree (then nothing is written), 2 on bad input.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from banditrepro import ReproError
from banditrepro.layout import shard_file, shard_rel, shard_runs, shards_rel, sidecar_of
from banditrepro.sharing.agreement import check_runs

RECEIVED = "received.json"


def add_arguments(p) -> None:
    p.add_argument("sources", nargs="*", metavar="SOURCE", help="results folders or bundles (.tar.gz) to merge")
    p.add_argument("--into", metavar="RESULTS_DIR", help="the results folder of this project to merge into (the "
                   "config's results_dir; created if missing)")
    p.add_argument("--keep-foreign", action="store_true", help="store shards named otherwise than this config "
                   "names them under their own names (for verify); this config never reads them")
    p.add_argument("--configfile", action="extend", nargs="+", help="the config whose shards to merge (as "
                   "snakemake --configfile)")
    p.add_argument("--config", nargs="*", metavar="KEY=VALUE", help="as snakemake --config")
    p.add_argument("--profile", metavar="DIR", help="workflow profile whose config: entries apply")


def run(args) -> int:
    from banditrepro.workflow.plan import open_project

    root = args.project_info.root
    if root is None:
        raise ReproError(f"no project folder here ({args.project_info.hint()})")
    if not args.sources:
        raise ReproError("merge: no SOURCE given (results folders or bundles to merge)")
    if not args.into:
        raise ReproError("merge: --into RESULTS_DIR is required (the results folder of this project to merge into)")
    root = Path(root).resolve()
    into = target_folder(args.into, root)
    given = [(s, Path(s).resolve()) for s in args.sources]  # before the plan moves to the project folder
    rel = into.relative_to(root).as_posix()
    overrides = list(args.config or ())
    for item in overrides:
        k, _, v = item.partition("=")
        if k.strip() == "results_dir" and v.strip().strip("'\"").rstrip("/") != rel:
            raise ReproError(f"--config results_dir={v} is not the --into folder {args.into}: give one of them")
    with contextlib.ExitStack() as stack:
        sources = open_sources(given, into, root, stack)  # bad input first: the plan takes seconds
        plan = open_project(args.project_info, args.configfile or (), [*overrides, f"results_dir={rel}"],
                            args.profile and Path(args.profile).resolve(), scan=False)
        outcome = merge(sources, into, plan, keep_foreign=args.keep_foreign)
    for line in outcome.lines:
        print(line)
    return 0 if outcome.ok else 1


def target_folder(text: str, root: Path) -> Path:
    """The ``--into`` folder, absolute: inside the project (not the project itself), a folder or nothing yet."""
    into = Path(text).resolve()
    try:
        inside = into != root and into.relative_to(root) is not None
    except ValueError:
        inside = False
    if not inside:
        raise ReproError(f"--into {text}: not a folder of this project ({root}): the results folder must be inside it")
    if into.exists() and not into.is_dir():
        raise ReproError(f"--into {text}: exists and is not a folder")
    return into


def open_sources(given, into: Path, root: Path, stack) -> list:
    """Every source opened (sources.open_source; bundles unpacked until ``stack`` closes); bad input: one line."""
    from banditrepro.sharing.sources import open_source

    seen, out = {}, []
    for text, path in given:
        if path == into:
            raise ReproError(f"{text}: is the --into folder itself")
        if path in seen:
            raise ReproError(f"{text}: named twice (as {seen[path]})")
        seen[path] = text
        src = stack.enter_context(open_source(path, data_dir=root / "data"))
        src.given = text
        out.append(src)
    return out


# --- what is merged ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Held:
    """A shard file in one place: a source's, or the --into folder's (``source`` None)."""
    origin: str  # how the lines name that place
    cell: str
    key: str
    first: int
    last: int
    path: Path
    source: object = field(default=None, compare=False)  # its sources.Source (None: the --into folder)

    @property
    def rel(self) -> str:
        return shard_rel(self.cell, self.key, self.first, self.last)


@dataclass
class Outcome:
    lines: list = field(default_factory=list)
    refused: int = 0
    disagree: int = 0

    @property
    def ok(self) -> bool:
        return not (self.refused or self.disagree)


def merge(sources: list, into: Path, plan, keep_foreign: bool = False) -> Outcome:
    """Merge the shards of ``sources`` (sources.Source) into the results folder ``into`` as ``plan`` names them;
    nothing is written unless every run held twice agrees."""
    out = Outcome()
    chosen, foreign = [], set()
    for src in sources:
        for s in src.shards():
            held = Held(src.given, s.cell, s.key, s.first, s.last, s.path, src)
            if plan.names.shards.get(s.cell) == s.key:
                chosen.append(held)
                continue
            why = why_foreign(s.cell, s.key, plan, src)
            if keep_foreign:
                chosen.append(held)
                foreign.add(held)
            else:
                out.refused += 1
                out.lines.append(f"refused {held.rel} from {src.given}: {why}")
    groups: dict = {}
    for h in chosen:
        groups.setdefault((h.cell, h.key), []).append(h)
    foreign_cells = {(h.cell, h.key) for h in foreign}
    for (cell, key), held in sorted(groups.items()):
        folder = into / shards_rel(cell, key)
        here = [Held(f"the --into folder {into}", cell, key, a, b, folder / shard_file(a, b))
                for a, b in stored_shards(folder)]
        seed = None if (cell, key) in foreign_cells else plan.config["base_seed"]
        for line in check_runs(cell, [*here, *held], seed):
            out.disagree += 1
            out.lines.append(line)
    if out.disagree:
        out.lines.append(f"nothing merged: {_n(out.disagree, 'disagreement')} (every run held twice must agree "
                         f"byte for byte); nothing written into {into}")
        return out
    if out.refused:
        out.lines.append(f"nothing merged: {_n(out.refused, 'shard')} named otherwise than this config's "
                         f"(--keep-foreign stores them under their own names); nothing written into {into}")
        return out
    _copy(sources, chosen, foreign, into, out, _describes(plan))
    return out


def _describes(plan) -> dict:
    """What received.json's new sources are about: this config's summaries (banditrepro/records.py), so only a
    report of them names the sources."""
    from banditrepro.records import describes

    return describes(plan.names, claims=False)


def stored_shards(folder: Path) -> list[tuple[int, int]]:
    """(first, last) of every shard file in ``folder``, sorted (each file, not only the longest at a start)."""
    try:
        found = [shard_runs(p.name) for p in folder.iterdir()]
    except OSError:  # no folder yet
        return []
    return sorted(r for r in found if r)


def why_foreign(cell: str, key: str, plan, src) -> str:
    """Why a shard's name is not the one this config gives its cell: the parts that differ, where the source's
    published.json records the cell under that key."""
    ours = plan.names.shards.get(cell)
    if ours is None:
        return "its cell is not one of this config's (other papers, challengers or horizons)"
    rec = src.cells.get(cell)
    if not isinstance(rec, dict) or rec.get("key") != key or _key_of(rec) != key:
        return (f"its name ({key}) is not this config's ({ours}) and {src.given} records no parts for it (a "
                "folder computed with first_run, or left from other code or config)")
    parts = plan.names.parts[cell]
    differs = [k for k in parts if rec.get(k) != parts[k]]
    shown = "; ".join(f"{k} {_part(k, rec.get(k), parts[k])}" for k in differs)
    return f"its name covers other {', '.join(differs)} than this config's ({shown})"


def _key_of(rec: dict) -> str | None:
    from banditrepro.workflow.names import key_of_parts

    try:
        return key_of_parts(rec)
    except (KeyError, TypeError):
        return None


def _part(name: str, theirs, ours) -> str:
    if isinstance(theirs, dict) and isinstance(ours, dict):
        keys = [k for k in sorted(set(theirs) | set(ours)) if theirs.get(k) != ours.get(k)]
        return ", ".join(f"{k} {theirs.get(k)} here {ours.get(k)}" for k in keys)
    if isinstance(theirs, str) and isinstance(ours, str) and len(theirs) > 16:
        return f"{theirs[:12]}… here {ours[:12]}…"
    return f"{theirs} here {ours}"


# --- copying -----------------------------------------------------------------------------------------------


STAGING = ".merge-"  # <into>/.merge-<random>/: what a merge stages before moving it in (removed after)


def _copy(sources: list, chosen: list, foreign: set, into: Path, out: Outcome, describes: dict) -> None:
    """Stage every chosen shard not in ``into`` yet, move them in, then record the sources that gave shards in
    received.json; one line per source and a last line."""
    import shutil
    import tempfile

    previous = received_sources(into)  # checked before anything is written: a bad record is bad input
    into.mkdir(parents=True, exist_ok=True)
    for stale in into.glob(f"{STAGING}*"):  # a killed merge's staging: ours by its name, never read
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale)
    staging = Path(tempfile.mkdtemp(prefix=STAGING, dir=into))
    try:
        moves, lines, received = _stage(sources, chosen, foreign, into, staging, describes)
        _move_in(moves, into)
        if received:
            _record(into, previous + received)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    out.lines += lines


def _stage(sources: list, chosen: list, foreign: set, into: Path, staging: Path, describes: dict):
    """Write the shards to move into ``staging`` (synced); (their (staged, destination) pairs, sidecars first,
    the lines saying what each source gives, the received.json entries)."""
    from banditrepro.atomic import write_bytes

    moves, lines, received, done = [], [], [], set()
    copied_total = present_total = 0
    for src in sources:
        copied, kept, present = [], 0, 0
        for h in (h for h in chosen if h.source is src):
            if h.rel in done or (into / h.rel).is_file():
                present += 1
                continue
            side = src.sidecar(src_shard(h))
            pairs = ([(side, sidecar_of(h.rel))] if side is not None else []) + [(h.path, h.rel)]
            for path, rel in pairs:
                write_bytes(staging / rel, src.read_bytes(path), durable=True, sync_dir=False)
                moves.append((staging / rel, into / rel))
            done.add(h.rel)
            if h in foreign:
                kept += 1
            else:
                copied.append(h)
        line = f"merged {_n(len(copied), 'shard')}{_runs_text(copied)} from {src.given}"
        if kept:
            line += f"; kept {_n(kept, 'foreign shard')} under their own names (for verify; never read here)"
        lines.append(line + (f"; {present} already there" if present else ""))
        copied_total += len(copied) + kept
        present_total += present
        if copied or kept:
            received.append({"source": src.given, "bundle_sha256": src.bundle_sha256, "shards": len(copied) + kept,
                             "describes": describes})
    lines.append(f"into {into}: {_n(copied_total, 'shard')} copied, {present_total} already there; snakemake "
                 "with this config computes only the runs no source held")
    return moves, lines, received


def src_shard(h: Held):
    from banditrepro.sharing.sources import StoredShard

    return StoredShard(h.cell, h.key, h.first, h.last, h.path)


def _move_in(moves: list, into: Path) -> None:
    """``os.replace`` each staged file to its destination (same file system), in order, then sync the folders."""
    from banditrepro.atomic import fsync_dir

    folders = []
    for staged, dest in moves:
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, dest)
        if dest.parent not in folders:
            folders.append(dest.parent)
    for folder in folders:
        fsync_dir(folder)


def _runs_text(copied: list) -> str:
    """`` (runs 0-1 of 6 cells)``: the runs copied per cell, cells with the same runs counted together."""
    if not copied:
        return ""
    per_cell: dict = {}
    for h in copied:
        per_cell.setdefault(h.cell, set()).update(range(h.first, h.last + 1))
    counts: dict = {}
    for runs in per_cell.values():
        text = _ranges(sorted(runs))
        counts[text] = counts.get(text, 0) + 1
    parts = [f"runs {t} of {_n(n, 'cell')}" for t, n in sorted(counts.items(), key=lambda x: -x[1])]
    return f" ({', '.join(parts)})"


def _n(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _ranges(runs: list) -> str:
    """Sorted run indices as ranges: ``0-3``, ``0-1,5``."""
    spans = []
    for r in runs:
        if spans and r == spans[-1][1] + 1:
            spans[-1][1] = r
        else:
            spans.append([r, r])
    return ",".join(f"{a}-{b}" if b != a else f"{a}" for a, b in spans)


def received_sources(into: Path) -> list:
    """The sources ``<into>/received.json`` records ([] if none), read as a received record (validated)."""
    from banditrepro.sharing.received import read_record

    return read_record(into / RECEIVED, "received", f"--into {into}", missing={"sources": []})["sources"]


def _record(into: Path, sources: list) -> None:
    """``<into>/received.json``: every source merged in (report.md's "Merged in" lines; part of the report's
    name), written last, once the shards it names are in place."""
    from banditrepro.atomic import write_json

    write_json(into / RECEIVED, {"sources": sources}, durable=True)
