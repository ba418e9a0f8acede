"""``banditrepro bundle``: one archive of a finished run that anyone can check, verify, merge or compare without
this checkout, described as a Workflow Run RO-Crate (https://w3id.org/ro/wfrun/workflow/0.5).

The gzipped tar (what sharing/sources.py opens) holds ``results/`` (published.json, each published file and the
store entry it was copied from, each summary a cell of published.json names and, unless ``--no-shards``, the cells'
shards, with their sidecars), ``data/`` (the prepared file of each dataset drawn, its probe verdict if any), the
Snakefile (the crate's main entity), README.md, ro-crate-metadata.json and checksums.sha256. What goes in is named
by published.json, never found by walking the folder (which also holds shards of other configs, logs, batches). A
dataset drawn from a raw source whose catalog entry says ``redistribute: false``, directly or through the datasets
it derives from, is withheld: only its sha256 is given, so whoever obtains it under its licence can check it.

The same results give the same bytes: members sorted, one fixed time, owner 0 without names, modes 0644/0755, a
gzip header without time or name, the crate with sorted keys. Nothing comes from the clock or from file times: the
one date a crate must carry (datePublished), and the members' time, is $SOURCE_DATE_EPOCH (the reproducible-builds
convention), else the Unix epoch. Written atomically, after every input was read and hashed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import io
import json
import os
import re
import tarfile
from collections import namedtuple
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from banditrepro import ReproError
from banditrepro.filehash import file_sha256
from banditrepro.layout import KEY, parse_cell, shard_runs, sidecar_of
from banditrepro.sharing import settled
from banditrepro.sharing.crate import (  # noqa: F401 (the crate: sharing/crate.py; names tests read here)
    CRATE,
    PROFILES,
    README,
    WORKFLOW,
    _run_name,
    _why,
    crate_document,
    derived_from,
    raw_sources,
)
from banditrepro.sharing.received import BUNDLE_SUFFIXES as SUFFIXES  # what sources.open_source reads
from banditrepro.sharing.received import CHECKSUMS

NAME_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+=,-]*")  # a dataset or an algorithm id: one path part, never ".."


def add_arguments(p) -> None:
    p.add_argument("results", nargs="?", metavar="RESULTS_DIR", help="a finished run (default <project>/results)")
    p.add_argument("-o", "--output", required=True, type=_archive_path, metavar="FILE",
                   help=f"the archive to write ({' or '.join(SUFFIXES)})")
    p.add_argument("--no-shards", action="store_true", help="leave out the shards (cells/): such a bundle can be "
                                                            "read and compared, not verified or merged")


def _archive_path(text: str) -> str:
    if not text.endswith(SUFFIXES) or Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"expected a {' or '.join(SUFFIXES)} file, got {text!r}")
    return text


def run(args) -> int:
    root = args.project_info.root
    if root is None:
        raise ReproError(f"no project folder here ({args.project_info.hint()})")
    published_at, epoch = bundle_date(os.environ.get("SOURCE_DATE_EPOCH"))
    contents = collect(Path(args.results) if args.results else root / "results", root, shards=not args.no_shards)
    sha, size = write_bundle(contents, args.output, published_at, epoch)
    print(contents.summary(args.output, size, sha))
    return 0


def bundle_date(source_date_epoch: str | None) -> tuple[str, int]:
    """(the crate's datePublished, the members' mtime): a results folder records no date, so none is made up."""
    try:
        seconds = max(0, int(source_date_epoch or 0))
    except ValueError:
        raise ReproError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970, got {source_date_epoch!r}") from None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds"), seconds


# a member: its path in the archive, where it is read (None: made here, ``data``), its size and sha256
Member = namedtuple("Member", "name path size sha256 data", defaults=(None,))
# a prepared file not passed on: the path it would have, its sha256, the (raw source, licence) that forbid it
Withheld = namedtuple("Withheld", "dataset name sha256 sources")



@dataclass
class Contents:
    """What a bundle holds, read and hashed before anything is written."""

    published: dict
    catalog: object | None
    with_shards: bool = True
    members: dict = field(default_factory=dict)  # archive name -> Member
    withheld: list = field(default_factory=list)  # Withheld, by dataset
    prepared: dict = field(default_factory=dict)  # dataset -> archive name of its prepared file (passed on)
    status: dict = field(default_factory=dict)  # dataset -> archive name of its probe verdict
    summaries: list = field(default_factory=list)  # archive names of the summaries (.npz)
    shards: list = field(default_factory=list)  # archive names of the shards (.npz)
    unrun: list = field(default_factory=list)  # optional datasets their probe found unavailable: never computed

    def add(self, name: str, path: Path | None, data: bytes | None = None) -> Member:
        if name not in self.members:
            found = (len(data), hashlib.sha256(data).hexdigest()) if path is None else _hash(path)
            self.members[name] = Member(name, path, *found, data)
        return self.members[name]

    def rel(self, path: str, what: str) -> str:
        """A path published.json names, relative to the results folder; one outside it is refused, never read."""
        top = PurePosixPath(str(self.published.get("results_dir") or "."))
        if self.published.get("version") == 2:  # paths relative to the results folder (workflow/publish.py)
            top = PurePosixPath()
        try:
            rel = PurePosixPath(path).relative_to(top)
        except ValueError:
            raise ReproError(f"published.json: {what} {path!r} is not under its results folder {str(top)!r}") from None
        if not rel.parts or ".." in rel.parts or rel.is_absolute():
            raise ReproError(f"published.json: {what} {path!r} leaves its results folder")
        return rel.as_posix()

    def summary(self, output, size: int, sha: str) -> str:
        withheld = "; ".join(f"{w.dataset} ({_why(w)})" for w in self.withheld) or "none"
        shards = f"{len(self.shards)} shards" if self.with_shards else "no shards (--no-shards)"
        tables = sum(n.startswith("results/tables/") for n in self.members)
        return (f"bundled {len(self.members)} files ({shards}, {len(self.summaries)} summaries, {tables} tables) "
                f"into {output} ({size / 2 ** 20:.1f} MiB, sha256 {sha[:12]}); withheld: {withheld}"
                + (f"; not run (unavailable): {', '.join(self.unrun)}" if self.unrun else ""))


def _hash(path: Path) -> tuple[int, str]:
    """(size, sha256) of a file the bundle takes, or why it cannot."""
    try:
        return os.path.getsize(path), file_sha256(path)
    except FileNotFoundError:
        raise ReproError(f"{path} is missing: run snakemake first, so that the run is whole") from None


def _published(results: Path) -> dict:
    """The folder's published.json, read by the one reader of results folders (sharing/sources.py)."""
    from banditrepro.sharing.sources import published_record

    if not results.is_dir():
        raise ReproError(f"{results}: no such results folder")
    found = published_record(results, str(results))
    if not found:
        raise ReproError(f"{results}: no published.json, not a finished run (run snakemake first)")
    if not all(isinstance(found.get(k), dict) for k in ("files", "config", "cells")):
        raise ReproError(f"{results}/published.json records no files, config or cells (written before results "
                         "recorded theirs): run snakemake on it once, then bundle it")
    return found


def _cell_parts(cell: str, record) -> tuple[str, int, str]:
    """A cell of published.json as (dataset, horizon, algorithm), each a name, never a path; its keys hex."""
    parts = parse_cell(cell)
    keys = [record.get(k) for k in ("key", "summary", "data")] if isinstance(record, dict) else [None]
    if not (parts and NAME_PART.fullmatch(parts[0]) and NAME_PART.fullmatch(parts[2])
            and all(isinstance(k, str) and KEY.fullmatch(k) for k in keys)):
        raise ReproError(f"published.json: cell {cell!r} has a malformed name or record")
    return parts


def _ran(catalog, dataset: str, lay) -> bool:
    """Whether the run drew ``dataset`` (probes.dataset_ran: an optional one only if its probe found it)."""
    from banditrepro.probes import dataset_ran

    optional = catalog is not None and dataset in catalog.datasets and catalog.is_optional(dataset)
    return dataset_ran(lay.status_file(dataset), optional)


def withholding_sources(catalog, dataset: str) -> list[tuple[str, str]]:
    """(raw source, licence) of every source that forbids passing ``dataset``'s prepared file on (``redistribute:
    false``); [] if it may be passed on. Fails closed: a dataset or source the catalog does not know, or a matrix
    file of the config's (``path:``, no licence recorded), is withheld; a flag not a boolean is an error."""
    if catalog is None or dataset not in catalog.datasets:
        return [("(not in the catalog)", "unknown")]
    out = [(str(catalog.dataset(d)["path"]), "a matrix file of the config (no licence recorded)")
           for d in derived_from(catalog, dataset) if catalog.user_file(d) is not None]
    for rel in raw_sources(catalog, dataset):
        src = catalog.sources.get(rel)
        flag = False if src is None else src.get("redistribute", True)
        if not isinstance(flag, bool):
            raise ReproError(f"dataset catalog: source {rel!r}: redistribute must be true or false, got {flag!r}")
        if not flag:
            out.append((rel, str(src.get("licence", "none stated")) if src else "unknown (not in the catalog)"))
    return out


def collect(results, root, shards: bool = True) -> Contents:
    """Every member of the bundle of ``results`` (its prepared files from the project ``root``'s data folder),
    hashed; ReproError on anything missing, malformed or changed since its publication."""
    from banditrepro.datasets.catalog import load_catalog
    from banditrepro.layout import Layout, Names
    from banditrepro.workflow.config import recorded_config, shape_config

    results, root = Path(results), Path(root)
    published = _published(results)
    try:  # the catalog it names, with the datasets the config declared (None: withhold all)
        config = shape_config(recorded_config(published["config"]), root)
    except ReproError as exc:
        raise ReproError(f"{results}/published.json: its config: {exc}") from None
    catalog = root / config["catalog"]
    catalog = load_catalog(catalog, dict(config["datasets"]), root=root) if catalog.is_file() else None
    out = Contents(published, catalog, with_shards=shards)
    out.add("results/published.json", results / "published.json")
    for fixed, entry in sorted(published["files"].items()):  # published files, and the store entries they copy
        if not isinstance(entry, dict) or not isinstance(entry.get("from"), str):
            raise ReproError(f"published.json: {fixed!r} records no store entry")
        a, b = (out.add(f"results/{rel}", results / rel)
                for rel in (out.rel(fixed, "file"), out.rel(entry["from"], "store entry")))
        if a.sha256 != b.sha256:
            raise ReproError(f"{a.path} differs from its store entry {b.path} (edited after publication?): run "
                             "snakemake to publish again, then bundle")
    cells = [(*_cell_parts(cell, rec), rec) for cell, rec in sorted(published["cells"].items())]
    names = Names(data={d: rec["data"] for d, _, _, rec in cells},
                  summary={(d, h, a): rec["summary"] for d, h, a, rec in cells})
    lay = Layout(str(results), data_dir=str(root / "data"), names=names)  # every path as the run's layout spells it
    out.unrun = sorted(d for d in names.data if not _ran(out.catalog, d, lay))
    for dataset, horizon, algo, rec in cells:
        if dataset in out.unrun:  # planned, never computed: its panels and claims say "not run"
            continue
        npz = Path(lay.summary(dataset, horizon, algo))
        out.summaries.append(out.add(f"results/{npz.relative_to(results).as_posix()}", npz).name)
        side = Path(sidecar_of(str(npz)))
        if side.is_file():  # its measured times (a summary made before them has none)
            out.add(sidecar_of(out.summaries[-1]), side)
        if shards:
            out.shards += _cell_shards(out, results, Path(lay.cell_dir(dataset, horizon, algo)) / rec["key"])
    for dataset in sorted(names.data):
        prepared, status = Path(lay.prepared_file(dataset)), Path(lay.status_file(dataset))
        name = f"data/{prepared.relative_to(root / 'data').as_posix()}"
        forbid = withholding_sources(out.catalog, dataset)
        if forbid and dataset not in out.unrun:
            out.withheld.append(Withheld(dataset, name, _hash(prepared)[1], tuple(forbid)))
        elif dataset not in out.unrun:  # one its probe found unavailable was never prepared
            out.prepared[dataset] = out.add(name, prepared).name
        if status.is_file():
            out.status[dataset] = out.add(f"data/{status.relative_to(root / 'data').as_posix()}", status).name
    settled.add_to_bundle(out, results)  # claims-settled.csv, settle/ when they settle these runs
    out.add(WORKFLOW, root / "Snakefile")
    return out


def _cell_shards(out: Contents, results: Path, folder: Path) -> list[str]:
    """The shards (and sidecars) of one cell under its key: what its summary was computed from."""
    found = []
    for name in sorted(os.listdir(folder)) if folder.is_dir() else []:
        if shard_runs(name):
            rel = (folder / name).relative_to(results).as_posix()
            found.append(out.add(f"results/{rel}", folder / name).name)
            if (folder / sidecar_of(name)).is_file():
                out.add(f"results/{sidecar_of(rel)}", folder / sidecar_of(name))
    if not found:
        raise ReproError(f"{folder}: no shards (removed after summarising?): bundle with --no-shards, or run "
                         "snakemake to compute them again")
    return found


def checksums_text(members, withheld) -> str:
    """``sha256sum`` lines of every member (sorted), then the withheld files' as comments: ``sha256sum -c`` checks the
    unpacked bundle and skips them; whoever obtained such a file elsewhere uncomments its line to check it."""
    lines = [f"{m.sha256}  {m.name}" for m in sorted(members, key=lambda m: m.name)]
    if withheld:
        lines.append("# withheld: prepared files not in this bundle, as their raw sources' licences forbid passing "
                     "them on (config/datasets.yaml: redistribute: false); the sha256 of the file the run drew:")
    for w in withheld:
        lines += [f"# {w.dataset}: {_why(w)}", f"# {w.sha256}  {w.name}"]
    return "\n".join(lines) + "\n"


def readme_text(c: Contents) -> str:
    """What a person who unpacks the bundle reads first: what it holds, how to check it, what is withheld."""
    shards = f", {len(c.shards)} shards (cells/)" if c.with_shards else " (no shards)"
    text = [f"# {_run_name(c)}", "", f"One run of the banditrepro workflow, described in `{CRATE}` as a Workflow Run "
            f"Crate. `results/`: what the run published, the store, {len(c.summaries)} summaries{shards}; `data/`: the "
            f"prepared instances it drew; `{WORKFLOW}`: the workflow.", "", f"Check every file: `sha256sum -c "
            f"{CHECKSUMS}`. In a banditrepro checkout, `banditrepro verify`, `merge` and `compare` take the bundle."]
    if c.withheld:
        text += ["", f"Withheld (their raw sources' licences; their sha256 in `{CHECKSUMS}`): prepare them under "
                 "their own licence (`banditrepro prepare`: the same data key names the same file) to verify their "
                 "cells.", "", *(f"- {w.dataset}: `{w.name}` ({_why(w)})" for w in c.withheld)]
    return "\n".join(text) + "\n"


def write_bundle(c: Contents, output, published_at: str, epoch: int) -> tuple[str, int]:
    """Write the archive atomically; (its sha256, its size). ReproError if a member changed since it was hashed."""
    from banditrepro.atomic import atomic_path

    c.add(README, None, readme_text(c).encode("utf-8"))
    crate = crate_document(c, published_at)
    c.add(CRATE, None, (json.dumps(crate, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
    c.add(CHECKSUMS, None, checksums_text(c.members.values(), c.withheld).encode("utf-8"))
    folders = {str(p) for n in c.members for p in PurePosixPath(n).parents if str(p) != "."}
    with atomic_path(output) as tmp:
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz, \
                tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted({*c.members, *folders}):
                m = c.members.get(name)
                if m is None:
                    tar.addfile(_info(name, 0, epoch, folder=True))
                elif m.data is not None:
                    tar.addfile(_info(name, m.size, epoch), io.BytesIO(m.data))
                else:
                    _add_member(tar, m, epoch)
        size, sha = _hash(tmp)
    return sha, size


def _info(name: str, size: int, epoch: int, folder: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size = (tarfile.DIRTYPE, 0o755, 0) if folder else (tarfile.REGTYPE, 0o644, size)
    info.mtime, info.uid, info.gid, info.uname, info.gname = epoch, 0, 0, "", ""
    return info


class _Hashed:  # a member's file, hashed as tarfile reads it: what goes in must be what the checksums list
    def __init__(self, f):
        self.f, self.h = f, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.h.update(data)
        return data


def _add_member(tar: tarfile.TarFile, m: Member, epoch: int) -> None:
    try:
        with open(m.path, "rb") as f:
            reader = _Hashed(f)
            tar.addfile(_info(m.name, m.size, epoch), reader)
            same = reader.h.hexdigest() == m.sha256 and not f.read(1)
    except OSError as exc:  # removed, or shorter than when it was hashed (tarfile: "unexpected end of data")
        if not (isinstance(exc, FileNotFoundError) or "unexpected end of data" in str(exc)):
            raise
        same = False
    if not same:
        raise ReproError(f"{m.path} changed while it was bundled (a run writing into the folder?); nothing written: "
                         "bundle again once the run is over")
