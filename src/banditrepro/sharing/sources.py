"""A results folder or a bundle, opened for reading: the one way verify, merge, compare and bundle read a source.

A *folder* is a config's results folder (``results/``, ``results/test`` …) of this project or of another
checkout: its prepared files are the project's (``data/prepared``, shared by every config). A *bundle*
(``banditrepro bundle``, banditrepro/sharing/bundle.py) is a gzipped tar holding ``results/`` and
``data/`` of one run; it is unpacked into a temporary folder for as long as the source is open (nothing in
the project is written). Either way it is checked whole before it is used (banditrepro/sharing/received.py:
names, file types, sizes, checksums, records, every shard's description against its path), its config is the
one its ``published.json`` records, and its shards are the files of its checked listing under ``cells/``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from banditrepro.filehash import file_sha256
from banditrepro.layout import parse_shard_rel, shard_rel, sidecar_of
from banditrepro.sharing import settled
from banditrepro.sharing.received import (
    BUNDLE_SUFFIXES,
    MAX_MEMBER_BYTES,
    MAX_SIDECAR_BYTES,
    BadSource,
    check_published,
    check_shard,
    read_record,
    walk_folder,
)
from banditrepro.sharing.unpack import unpack_bundle

__all__ = ["BUNDLE_SUFFIXES", "BadSource", "Source", "StoredShard", "is_bundle", "open_source", "published_record"]


@dataclass(frozen=True)
class StoredShard:
    cell: str  # <dataset>/T<horizon>/<algo>
    key: str  # the shards' key its folder carries (names.shards_key of the machine that computed it)
    first: int
    last: int
    path: Path

    @property
    def rel(self) -> str:
        """Its path under the results folder (layout.shard_rel)."""
        return shard_rel(self.cell, self.key, self.first, self.last)


@dataclass
class Source:
    given: str  # as the user named it
    results: Path  # the results folder
    data: Path  # the data folder whose prepared/ and status/ its figures drew
    published: dict = field(default_factory=dict)  # its published.json, validated ({} if it has none)
    bundle_sha256: str | None = None  # a bundle's, else None
    files: dict = field(default_factory=dict)  # every checked file under the results folder -> its size

    @property
    def config(self) -> dict:
        """The config its results were made with (published.json), or ReproError if it records none."""
        found = self.published.get("config")
        if not isinstance(found, dict):
            raise BadSource(f"{self.given}: no config recorded (published.json missing or written before "
                            "results recorded theirs): run snakemake on it once, then try again")
        return dict(found)

    @property
    def cells(self) -> dict:
        """cell -> its record (published.json: key, runs, summary key, what the key covers); {} if none."""
        found = self.published.get("cells")
        return found if isinstance(found, dict) else {}

    def shards(self) -> list[StoredShard]:
        """Every shard file under ``cells/`` (any key), sorted by cell, key and first run."""
        out = [StoredShard(*found, self.results / rel) for rel in self.files if (found := parse_shard_rel(rel))]
        return sorted(out, key=lambda s: (s.cell, s.key, s.first, s.last))

    def sidecar(self, shard: StoredShard) -> Path | None:
        """A shard's ``.json`` sidecar if the source holds one."""
        rel = sidecar_of(shard.rel)
        return self.results / rel if rel in self.files else None

    def read_bytes(self, path) -> bytes:
        """The bytes of a checked file of the source (never through a link, never more than its limit)."""
        path = Path(path)
        rel = path.relative_to(self.results).as_posix() if path.is_absolute() else str(path)
        if rel not in self.files:
            raise BadSource(f"{self.given}: {rel} is not a file of the source")
        fd = os.open(self.results / rel, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise BadSource(f"{self.given}: {rel} is no longer a regular file")
            data = f.read(MAX_MEMBER_BYTES + 1)
        if len(data) != self.files[rel]:
            raise BadSource(f"{self.given}: {rel} changed since it was checked")
        return data

    def probe(self, dataset: str):
        """The probe verdict of an optional dataset in the source's data folder (banditrepro/probes.py)."""
        from banditrepro.probes import probe_verdict

        return probe_verdict(self.data / "status" / f"{dataset}.json")

    def plan(self, project_root, scan: bool = True):
        """The plan this checkout builds for the source's config, reading and naming the source's files (its
        results folder, its prepared files): ``build_plan`` with ``where``."""
        from banditrepro.workflow.config import recorded_config
        from banditrepro.workflow.plan import build_plan

        return build_plan(recorded_config(self.config), Path(project_root), scan=scan, where=(self.results, self.data))


def is_bundle(path) -> bool:
    return str(path).endswith(BUNDLE_SUFFIXES)


def published_record(results: Path, given: str) -> dict:
    """A results folder's published.json, validated ({} if it has none); BadSource if it is not one."""
    return check_published(read_record(Path(results) / "published.json", "published", given, missing={}), given)


def _checked(given: str, results: Path, data: Path, files: dict, sha: str | None) -> Source:
    """The Source of a walked folder or an unpacked bundle, once its records and shards were checked."""
    from banditrepro.probes import BadProbe, probe_verdict

    published = published_record(results, given)
    for kind in ("received", "verification"):  # shown by reports: read as records, never as what they claim
        read_record(results / f"{kind}.json", kind, given)
    status = data / "status"
    if sha is not None and status.is_dir():  # a bundle's probe verdicts (a folder's data are the project's)
        for path in sorted(status.iterdir()):
            try:
                probe_verdict(path)
            except BadProbe as exc:
                raise BadSource(f"{given}: {exc}") from None
    src = Source(given, results, data, published, sha, files)
    settled.check(src)  # claims-settled.csv, settle/ (sharing/settled.py)
    cells = src.cells
    for shard in src.shards():
        rec = cells.get(shard.cell)
        seed = rec.get("base_seed") if isinstance(rec, dict) and rec.get("key") == shard.key else None
        check_shard(shard.path, shard.rel, src.sidecar(shard), given, seed)
    return src


@contextlib.contextmanager
def open_source(path, data_dir="data"):
    """The source at ``path`` (a results folder, or a bundle unpacked into a temporary folder removed on exit),
    checked whole. ``data_dir``: the project's data folder, a folder source's prepared files. BadSource on
    anything refused (one line)."""
    given = str(path)
    p = Path(path)
    if is_bundle(p):
        if not p.is_file():
            raise BadSource(f"{given}: no such bundle")
        sha = file_sha256(p)
        with tempfile.TemporaryDirectory(prefix="banditrepro-bundle-") as tmp:
            members = unpack_bundle(p, Path(tmp), given)
            results, data = Path(tmp) / "results", Path(tmp) / "data"
            if not results.is_dir():
                raise BadSource(f"{given}: not a bundle of banditrepro (no results/ inside)")
            files = {n.removeprefix("results/"): s for n, s in members.items() if n.startswith("results/")}
            yield _checked(given, results, data, files, sha)
        return
    if not p.is_dir():
        raise BadSource(f"{given}: neither a results folder nor a bundle ({', '.join(BUNDLE_SUFFIXES)})")
    if not (os.path.lexists(p / "published.json") or os.path.lexists(p / "cells")):
        raise BadSource(f"{given}: not a results folder (no published.json, no cells/)")
    try:
        files = walk_folder(p, given)
    except OSError as exc:
        raise BadSource(f"{given}: cannot be read ({exc})") from None
    yield _checked(given, p, Path(data_dir), files, None)


def read_sidecar(path: Path, given: str) -> dict:
    """A shard's sidecar, size-capped and validated (received.read_record)."""
    return read_record(Path(path), "sidecar", given, MAX_SIDECAR_BYTES)


