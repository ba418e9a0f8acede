"""A results folder or a bundle, opened for reading: what verify, merge and compare take as a source.

A *folder* is a config's results folder (``results/``, ``results/test`` …) of this project or of another
checkout: its prepared files are the project's (``data/prepared``, shared by every config). A *bundle*
(``banditrepro bundle``, banditrepro/sharing/bundle.py) is a gzipped tar holding ``results/`` and
``data/`` of one run; it is unpacked into a temporary folder for as long as the source is open (nothing in
the project is written). Either way the source's config is the one its ``published.json`` records
(workflow/publish.py: the keys that name results), and its shards are found by listing ``cells/``: a file
is trusted for nothing but its bytes, and checked against its name.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from banditrepro import ReproError
from banditrepro.workflow.cells import cell_key

BUNDLE_SUFFIXES = (".tar.gz", ".tgz")
SHARD_FILE = re.compile(r"runs(\d+)-(\d+)\.npz")
KEY = re.compile(r"[0-9a-f]{16}")


class BadSource(ReproError):
    """A path that is neither a results folder nor a bundle (exit status 2: bad input)."""


@dataclass(frozen=True)
class StoredShard:
    cell: str  # <dataset>/T<horizon>/<algo>
    key: str  # the cell key its folder carries (names.cell_key of the machine that computed it)
    first: int
    last: int
    path: Path

    @property
    def rel(self) -> str:
        """Its path under the results folder (``cells/<cell>/<key>/runs<a>-<b>.npz``)."""
        return f"cells/{self.cell}/{self.key}/runs{self.first}-{self.last}.npz"


@dataclass
class Source:
    given: str  # as the user named it
    results: Path  # the results folder
    data: Path  # the data folder whose prepared/ and status/ its figures drew
    published: dict = field(default_factory=dict)  # its published.json ({} if it has none)
    bundle_sha256: str | None = None  # a bundle's, else None

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
        out = []
        top = self.results / "cells"
        for folder, _dirs, files in os.walk(top):
            rel = Path(folder).relative_to(top).parts
            if len(rel) != 4 or not KEY.fullmatch(rel[3]):
                continue
            for name in files:
                m = SHARD_FILE.fullmatch(name)
                if m and int(m.group(2)) >= int(m.group(1)):
                    out.append(StoredShard(cell_key(rel[0], int(rel[1][1:]), rel[2]) if rel[1][1:].isdigit()
                                           else "/".join(rel[:3]), rel[3], int(m.group(1)), int(m.group(2)),
                                           Path(folder) / name))
        return sorted(out, key=lambda s: (s.cell, s.key, s.first, s.last))

    def plan(self, project_root, scan: bool = True):
        """The plan this checkout builds for the source's config, reading and naming the source's files (its
        results folder, its prepared files): ``build_plan`` with ``where``."""
        from banditrepro.workflow.plan import build_plan

        config = self.config
        config["results_dir"] = "results"  # a placeholder the schema accepts; ``where`` puts the folder
        return build_plan(config, Path(project_root), scan=scan, where=(self.results, self.data))


def _published(results: Path) -> dict:
    try:
        found = json.loads((results / "published.json").read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise BadSource(f"{results}/published.json cannot be read ({exc})") from None
    return found if isinstance(found, dict) else {}


def is_bundle(path) -> bool:
    return str(path).endswith(BUNDLE_SUFFIXES)


@contextlib.contextmanager
def open_source(path, data_dir="data"):
    """The source at ``path`` (a results folder, or a bundle unpacked into a temporary folder removed on exit).
    ``data_dir``: the project's data folder, a folder source's prepared files. BadSource on anything else."""
    given = str(path)
    p = Path(path)
    if is_bundle(p):
        if not p.is_file():
            raise BadSource(f"{given}: no such bundle")
        from banditrepro.workflow.names import file_sha256

        sha = file_sha256(p)
        with tempfile.TemporaryDirectory(prefix="banditrepro-bundle-") as tmp:
            _unpack(p, Path(tmp))
            results, data = Path(tmp) / "results", Path(tmp) / "data"
            if not results.is_dir():
                raise BadSource(f"{given}: not a bundle of banditrepro (no results/ inside)")
            yield Source(given, results, data, _published(results), sha)
        return
    if not p.is_dir():
        raise BadSource(f"{given}: neither a results folder nor a bundle ({', '.join(BUNDLE_SUFFIXES)})")
    if not ((p / "published.json").is_file() or (p / "cells").is_dir()):
        raise BadSource(f"{given}: not a results folder (no published.json, no cells/)")
    yield Source(given, p, Path(data_dir), _published(p))


def _unpack(archive: Path, into: Path) -> None:
    """Extract ``archive``: regular files and folders only, inside ``into`` (tarfile's "data" filter)."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BadSource(f"{archive}: cannot be unpacked ({exc})") from None
