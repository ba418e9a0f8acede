"""The fixed paths a reader opens, brought up to date from the store by the last step of every run.

Figures, tables, claims.csv, the reports, the run-time table, the leaderboards and software.json are made into
the store (``<results>/store/…/<key>/``, named by what they derive from, banditrepro/workflow/names.py) and
copied from there to ``<results>/figures/…``, ``<results>/claims.csv`` and so on by ``publish``, the body of
rule ``all``: a rule with a body and no output runs on every invocation that is not a dry run, after every
target, whatever ``--rerun-triggers`` or Snakemake's metadata say. It compares bytes, so a run with nothing new
rewrites nothing, and a config switched back and forth shows its own numbers each time.

``<results>/published.json`` lists what the last publication put where: each fixed path relative to its
results folder, with the key, store entry (also relative) and sha256 of what was written there. It is never
trusted to say a file is current (the bytes are compared every time), nor to name a path outside its folder.

Publishing touches only what it wrote (docs/decisions.md#content-addressing, "The fixed paths"): a fixed path is
overwritten or removed only if its bytes are what publishing wrote there (the sha256 published.json records, or
those of a store entry of that path: a folder copied with `cp -a`, whose record names another folder) and it
resolves inside this results folder. A record whose ``results_dir`` is not this folder's is ignored (that is
how a copy once deleted its original's files), and every path it names is checked before it is used. All the
fixed paths show one config: if any of them holds bytes publishing did not write (a file edited by hand),
nothing is published, and published.json, the log and Snakemake's output say STALE: which config the files
still show and why.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

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
    """cell -> its shards' key, its runs, its summary's key and what the shards' key covers (``plan.names``: the
    keys and parts names.name_plan computed): what verify, merge and compare read of a folder to find its shards
    and to say why another machine names them otherwise. A record for readers: a shard is found and checked by
    its name, never trusted from here."""
    from banditrepro.layout import split_key

    n = plan.names
    return {cell: {"key": n.shards[cell], "runs": plan.cell_runs[cell], "summary": n.summary[split_key(cell)],
                   **n.parts[cell]} for cell in sorted(n.shards)}


VERSION = 2  # paths relative to the results folder, each file's sha256; before: project-relative, no sha256


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path) -> bytes | None:
    """A regular file's bytes; None for anything else (missing, a folder, a FIFO, unreadable)."""
    try:
        return Path(path).read_bytes() if os.path.isfile(path) else None
    except OSError:
        return None


@dataclass(frozen=True)
class Folder:
    """A results folder: every path publishing reads from a record, or writes, is checked to lie inside it."""

    results_dir: str

    def path(self, rel: str) -> str:
        return str(PurePosixPath(self.results_dir) / rel)

    def rel(self, path: str) -> str:
        """A path this checkout's layout spells (under results_dir) as the record keeps it: relative."""
        return PurePosixPath(path).relative_to(PurePosixPath(self.results_dir)).as_posix()

    def inside(self, rel) -> str | None:
        """``rel`` as a path under the folder, or None if it is not a plain relative name (absolute, ``..``,
        empty) or resolves, through any link, outside the folder."""
        if not isinstance(rel, str) or not rel or "\0" in rel:
            return None
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or not pure.parts:
            return None
        root = os.path.realpath(self.results_dir)
        found = os.path.realpath(self.path(pure.as_posix()))
        return self.path(pure.as_posix()) if found.startswith(root + os.sep) else None


@dataclass
class Before:
    """What published.json says an earlier publication put in this folder: fixed path (relative) -> its store
    entry (relative) and the sha256 written; the record itself for the STALE line; paths refused."""

    files: dict = field(default_factory=dict)
    record: dict | None = None
    refused: list = field(default_factory=list)


def published_before(lay) -> Before:
    """The checked record of this folder's last publication; empty if there is none or it cannot be read. A
    record written for another folder (a `cp -a` copy's names its original) is not trusted: its sha256s and
    config are dropped, and the paths it names, taken relative to the folder it names, count only as files a
    store entry of this folder proves ours (``_ours``). A path outside the folder is refused, never used."""
    folder, out = Folder(lay.results_dir), Before()
    try:
        found = json.loads(Path(lay.published_json).read_text())
    except (OSError, ValueError):
        return out
    if not isinstance(found, dict) or not isinstance(found.get("files"), dict):
        return out
    own = found.get("results_dir") == lay.results_dir
    out.record = found if own else None
    # before version 2 the paths were the project-relative ones, under the record's own results_dir
    legacy = Folder(str(found.get("results_dir"))) if found.get("version") != VERSION else None
    for name, entry in sorted(found["files"].items()):
        entry = entry if isinstance(entry, dict) else {}
        rel, src = (_legacy_rel(legacy, x) for x in (name, entry.get("from"))) if legacy else (name, entry.get("from"))
        if folder.inside(rel) is None:
            out.refused.append(str(name))
            continue
        sha = entry.get("sha256") if own and isinstance(entry.get("sha256"), str) else None
        out.files[rel] = {"from": src if folder.inside(src) else None, "sha256": sha,
                          "key": entry.get("key") if isinstance(entry.get("key"), str) else None}
    return out


def _legacy_rel(folder: Folder, path) -> str | None:
    try:
        return folder.rel(path) if isinstance(path, str) else None
    except ValueError:
        return None


def _store_shas(folder: Folder, src: str, key: str) -> set[str]:
    """The sha256 of every store entry of the fixed path whose entry under ``key`` is ``src`` (any key): bytes
    publishing writes there for some config."""
    parts = PurePosixPath(folder.rel(src)).parts
    if key not in parts:
        return set()
    return _globbed_shas(folder, "/".join("*" if p == key else p for p in parts))


@dataclass
class Decision:
    """What a publication does, decided for every path before any is touched."""

    write: list = field(default_factory=list)  # (fixed path, bytes)
    current: int = 0
    remove: list = field(default_factory=list)  # fixed paths (real, under results_dir)
    blocked: list = field(default_factory=list)  # "path: why"
    files: dict = field(default_factory=dict)  # the new record's files


def _ours(folder, rel, data, before: Before, store_shas=()) -> bool:
    """Whether ``data``, found at ``rel``, is what publishing wrote there: the sha256 the record keeps, or that
    of the store entry it names, or of any store entry of that path (``store_shas``)."""
    sha = _sha(data)
    entry = before.files.get(rel, {})
    if entry.get("sha256") == sha:
        return True
    src = entry.get("from") and folder.inside(entry["from"])
    if src and entry.get("sha256") is None and (found := _read(src)) is not None and _sha(found) == sha:
        return True
    return sha in store_shas


def decide(plan, todo, before: Before) -> Decision:
    folder, out = Folder(plan.layout.results_dir), Decision()
    for src, dest, key in todo:
        rel = folder.rel(dest)
        new = Path(src).read_bytes()
        out.files[rel] = {"key": key, "from": folder.rel(src), "sha256": _sha(new)}
        cur = _read(dest)
        if cur == new:
            out.current += 1
        elif folder.inside(rel) is None:
            out.blocked.append(f"{dest}: lies outside {folder.results_dir} (a link?)")
        elif cur is None and os.path.lexists(dest):
            out.blocked.append(f"{dest}: not a regular file")
        elif cur is None or _ours(folder, rel, cur, before, _store_shas(folder, src, key)):
            out.write.append((dest, new))
        else:
            out.blocked.append(f"{dest}: edited since it was published")
    for rel in sorted(set(before.files) - set(out.files)):  # a file a former config made, this one does not
        path = folder.inside(rel)
        cur = _read(path) if path else None
        if path is None or (cur is None and not os.path.lexists(path)):
            continue  # deleted by hand meanwhile, or now behind a link out of the folder: not ours to touch
        if cur is not None and _ours(folder, rel, cur, before):
            out.remove.append(path)
        else:
            out.blocked.append(f"{path}: edited since it was published (a former config's file)")
    return out


def _record(plan, files: dict, stale: dict | None = None) -> str:
    lay = plan.layout
    record = {"version": VERSION, "results_dir": lay.results_dir, "base_seed": plan.config["base_seed"],
              "files": files, "config": results_config(plan.config), "cells": cell_records(plan)}
    if stale:
        record["stale"] = stale
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def _write_record(lay, text: str) -> None:
    if not (os.path.isfile(lay.published_json) and Path(lay.published_json).read_text() == text):
        write_text(lay.published_json, text)


def shows(before: Before) -> str:
    """Which config a folder's fixed paths show, as its record says."""
    rec = before.record
    if not rec:
        return "no config published.json records (none, unreadable, or written for another folder)"
    return f"the config published.json records (base_seed {rec.get('base_seed')})"


def _mark(plan, before: Before, stale: dict) -> None:
    """published.json as the earlier publication wrote it (its files are still what the fixed paths show),
    marked STALE."""
    lay = plan.layout
    record = {**(before.record or {}), "version": VERSION, "results_dir": lay.results_dir,
              "files": before_files(before), "stale": stale}
    _write_record(lay, json.dumps(record, indent=1, sort_keys=True) + "\n")


def before_files(before: Before) -> dict:
    return {rel: {k: v for k, v in e.items() if v is not None} for rel, e in before.files.items()}


def _stale(plan, before: Before, why: list[str]) -> str:
    """Publish nothing: the previous record kept, marked STALE with one line. Returns the line."""
    lay = plan.layout
    line = (f"STALE: {lay.results_dir}: the fixed paths still show {shows(before)}, not this config (base_seed "
            f"{plan.config['base_seed']}): {len(why)} file(s) hold bytes publishing did not write, and none is "
            f"overwritten or removed: {'; '.join(why[:3])}{' …' if len(why) > 3 else ''}; move them away and run "
            "again")
    _mark(plan, before, {"line": line, "blocked": why, "wanted_base_seed": plan.config["base_seed"]})
    return line


def publish(plan) -> str:
    """Bring every fixed path to this plan's store entries, or none (STALE); remove the files an earlier
    publication put there that this plan does not make; write published.json. Returns the log's text."""
    from banditrepro.challengers import remove_stale_leaderboards

    lay = plan.layout
    if plan.partial:
        return (f"first_run {plan.config['first_run']}: shards only, nothing published "
                "(banditrepro merge pools them with the other runs)\n")
    todo = pairs(plan)
    before = published_before(lay)
    decision = decide(plan, todo, before)
    notes = "".join(f"refused {p}: published.json names it outside {lay.results_dir}; not touched\n"
                    for p in before.refused)
    if decision.blocked:
        return _stale(plan, before, decision.blocked) + "\n" + notes
    if decision.write or decision.remove:  # a crash between two copies leaves a folder that says so
        _mark(plan, before, {"line": f"STALE: {lay.results_dir}: publication of base_seed {plan.config['base_seed']} "
                             "interrupted: the fixed paths may show a mix of two configs; run again"})
    for dest, data in decision.write:
        write_bytes(dest, data)
    for path in decision.remove:
        Path(path).unlink(missing_ok=True)
    removed = [str(p) for p in decision.remove]
    # results folders published before published.json existed: leaderboards of challengers no longer configured
    removed += [p for p in remove_stale_leaderboards(plan.figures, lay, _leaderboard_ours(plan)) if p not in removed]
    _write_record(lay, _record(plan, decision.files))
    return (f"published {len(todo)} files: {len(decision.write)} copied, {decision.current} already current\n"
            + "".join(f"copied {p}\n" for p, _ in decision.write) + "".join(f"removed {p}\n" for p in removed)
            + notes)


def _leaderboard_ours(plan):
    """Whether a leaderboard file (named by no record: a folder published before published.json existed)
    holds the bytes of a store entry of its paper and name, i.e. what publishing wrote there."""
    folder = Folder(plan.layout.results_dir)

    def ours(path: str) -> bool:
        name = PurePosixPath(path)
        pattern = plan.layout.leaderboard_pattern(name.suffix[1:]).format(paper=name.stem, key="*")
        data = _read(path) if folder.inside(folder.rel(path)) else None
        return data is not None and _sha(data) in _globbed_shas(folder, folder.rel(pattern))

    return ours


def _globbed_shas(folder: Folder, pattern: str) -> set[str]:
    """The sha256 of every regular file inside the folder matching ``pattern`` (relative to it)."""
    out = set()
    for found in Path(folder.results_dir).glob(pattern):
        rel = found.relative_to(folder.results_dir).as_posix()
        data = _read(found) if folder.inside(rel) else None
        if data is not None:
            out.add(_sha(data))
    return out


# --- a run that fails before rule all -------------------------------------------------------------------------


def failed_line(plan) -> str:
    """What a failed run's last line says of the fixed paths: not updated, and which config they show."""
    lay = plan.layout
    if plan.partial:
        return f"banditrepro: run failed; first_run set: shards only, nothing in {lay.results_dir} is published"
    before = published_before(lay)
    if before.record is None:
        return (f"banditrepro: run failed before rule all: nothing was published in {lay.results_dir} (no "
                "claims.csv, report.md or figures of this config); fix the error above and run again")
    stale = " (marked STALE)" if before.record.get("stale") else ""
    return (f"banditrepro: run failed before rule all: the fixed paths in {lay.results_dir} (claims.csv, "
            f"report.md, figures, tables) still show the previous publication, {shows(before)}{stale}; this "
            f"config (base_seed {plan.config['base_seed']}) is not published")


def on_error(plan, stream=None) -> None:
    """Snakemake's ``onerror``: print ``failed_line`` as the very last line, after Snakemake's own closing lines
    (its log hint and "At least one job did not complete successfully." come after this hook returns)."""
    import atexit

    line = failed_line(plan)
    atexit.register(lambda: print(last_line(line), file=stream or sys.stderr, flush=True))


def last_line(failed: str) -> str:
    """A failed run's last line; after Ctrl-C or SIGTERM it says first how to resume (what a user needs most,
    banditrepro/workflow/progress.py prints the same words when the interrupt arrives), then what the fixed
    paths show."""
    from banditrepro.workflow import stop
    from banditrepro.workflow.progress import INTERRUPTED, PREFIX

    if not stop.requested():
        return failed
    return f"{PREFIX}{INTERRUPTED}; {failed.removeprefix(PREFIX).replace('run failed', 'the run stopped', 1)}"


def announce(text: str, stream=None) -> None:
    """The publish job's STALE line on Snakemake's output too (the log alone is rarely read)."""
    for line in text.splitlines():
        if line.startswith("STALE:"):
            print(f"banditrepro: {line}", file=stream or sys.stderr, flush=True)
