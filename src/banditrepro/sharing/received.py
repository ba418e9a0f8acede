"""The one reader of what crosses the boundary: a results folder or a bundle received from elsewhere (or this
project's own, read as if it were not), for ``verify``, ``merge``, ``compare`` and ``bundle``.

Nothing in it is used before all of it is checked (docs/sharing.md has the limits and why):

* *A folder* is walked with ``lstat`` (never following a link): the known top files (``published.json``,
  ``claims.csv`` ...) and everything under the allow-listed folders (cells/, summaries/, store/, figures/,
  tables/, leaderboards/) must be regular files with portable names, one link each, within the size and count
  limits. Anything else at its top (logs/, batches/, another config's folder) is not read; a link anywhere
  read is refused, and so is a device, a FIFO or a socket.
* *A bundle* is read as a stream (banditrepro/sharing/unpack.py): gzip through a counter that stops at
  ``MAX_TOTAL_BYTES`` or ``MAX_RATIO`` times the archive's size (gzip bombs), every tar header checked there
  (tarfile's ``filter="data"`` is not relied on: it has known bypasses before Python 3.11.13): regular files
  and folders only, allow-listed names, no duplicates. Files are written by that module into a fresh temporary
  folder (``O_EXCL``, ``O_NOFOLLOW``, folders made there) and hashed as they are written; ``checksums.sha256``
  must then list every file exactly once with its sha256. The folder is removed when the source is closed,
  whatever happened.
* *Records*: ``published.json``, ``received.json``, ``verification.json`` (size-capped, validated against
  workflow/schemas/), probe verdicts (banditrepro/probes.py), shards (each shard's own description, its
  arrays and its sidecar: algorithm, parameters, instance, horizon, runs, base seed, against its path).

A source that fails any check is ``BadSource``: one line, exit status 2, nothing written.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import stat
from pathlib import Path

from banditrepro import ReproError, yamlfile
from banditrepro.layout import parse_cell, parse_shard_rel
from banditrepro.sharing import settled
from banditrepro.sharing.refusal import BadSource  # noqa: F401 (the reader's error; its users import it here)

BUNDLE_SUFFIXES = (".tar.gz", ".tgz")
CHECKSUMS = "checksums.sha256"

# --- limits (docs/sharing.md states each with its reason) --------------------------------------------------
MAX_MEMBERS = 50_000  # files and folders: the default run's bundle has ~600, a runs=1000 cluster run ~10,000
MAX_MEMBER_BYTES = 2 * 2**30  # one file: the largest shard of the default config is ~2 MiB
MAX_TOTAL_BYTES = 16 * 2**30  # everything unpacked: a runs=1000 default run is ~0.5 GiB
MAX_RATIO = 100  # unpacked bytes per archive byte (+ RATIO_SLACK): npz and text deflate ~2-10x; zeros ~1000x
RATIO_SLACK = 64 * 2**20
MAX_RECORD_BYTES = 16 * 2**20  # published.json / received.json / verification.json (default run: ~100 KiB)
MAX_SIDECAR_BYTES = 2**20  # a shard's .json sidecar (per-run times: ~10 KiB for 100 runs)
MAX_CHECKSUMS_BYTES = 16 * 2**20  # one ~100-byte line per member: MAX_MEMBERS lines are 5 MiB
MAX_NPZ_ENTRIES, MAX_NPZ_BYTES = 256, 8 * 2**30  # arrays in a shard, and their unpacked bytes (zip bombs)
MAX_NAME_CHARS, MAX_PART_CHARS = 1024, 255

# a path part: the portable file name characters and the ones algorithm ids use (+ = ,); no leading dot, so
# no "." or "..", no hidden file, and no NUL, control character, space, separator or non-ASCII letter
PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+=,-]*")
RESULTS_DIRS = ("cells", "summaries", "store", "figures", "tables", "leaderboards")
RESULTS_FILES = ("published.json", "claims.csv", "report.md", "reproduction.md", "software.json", "received.json",
                 "verification.json")
DATA_DIRS = ("prepared", "status")
BUNDLE_FILES = ("README.md", "ro-crate-metadata.json", CHECKSUMS, "workflow/Snakefile")  # bundle.py writes them
SCHEMAS = {"published": "published.schema.yaml", "received": "received.schema.yaml",
           "verification": "verification.schema.yaml", "sidecar": "sidecar.schema.yaml"}


# --- names -----------------------------------------------------------------------------------------------


def check_name(name: str, where: str) -> list[str]:
    """The parts of a member's relative name; BadSource if it is not one this reader accepts."""
    if not name or len(name) > MAX_NAME_CHARS:
        raise BadSource(f"{where}: a member name is empty or longer than {MAX_NAME_CHARS} characters")
    parts = name.split("/")
    for part in parts:
        if len(part) > MAX_PART_CHARS or not PART.fullmatch(part):
            raise BadSource(f"{where}: member {name!r} has a part that is not a plain file name ({part!r}: "
                            "absolute, '..', hidden, or a character outside A-Z a-z 0-9 . _ + = , -)")
    return parts


def results_allowed(parts: list[str]) -> bool:
    """Whether a file at ``parts`` under a results folder is one a reader may use."""
    return (len(parts) == 1 and parts[0] in RESULTS_FILES) or (len(parts) >= 2 and parts[0] in RESULTS_DIRS) \
        or settled.allowed(parts)


def bundle_allowed(parts: list[str]) -> bool:
    """Whether a file at ``parts`` of a bundle is one bundle.py writes (results/, data/, its own top files)."""
    if "/".join(parts) in BUNDLE_FILES:
        return True
    if parts[0] == "results":
        return results_allowed(parts[1:])
    return parts[0] == "data" and len(parts) >= 3 and parts[1] in DATA_DIRS


# --- a folder --------------------------------------------------------------------------------------------


def walk_folder(top: Path, given: str) -> dict[str, int]:
    """relative name -> size of every file a reader may use under the results folder ``top``; BadSource on a
    link, a special file, a hard-linked file, a bad name or a limit exceeded. Nothing is followed."""
    files: dict[str, int] = {}
    total = 0

    def add(rel: str, st: os.stat_result) -> None:
        nonlocal total
        if stat.S_ISLNK(st.st_mode):
            raise BadSource(f"{given}: {rel} is a symbolic link (a source holds regular files only)")
        if not stat.S_ISREG(st.st_mode):
            raise BadSource(f"{given}: {rel} is not a regular file (a device, FIFO or socket)")
        if st.st_nlink > 1:
            raise BadSource(f"{given}: {rel} is a hard link (its bytes can change through another name)")
        if st.st_size > MAX_MEMBER_BYTES:
            raise BadSource(f"{given}: {rel} is larger than {MAX_MEMBER_BYTES} bytes")
        total += st.st_size
        files[rel] = st.st_size
        if len(files) > MAX_MEMBERS or total > MAX_TOTAL_BYTES:
            raise BadSource(f"{given}: more than {MAX_MEMBERS} files or {MAX_TOTAL_BYTES} bytes")

    def visit(folder: Path, rel: str) -> None:
        with os.scandir(folder) as entries:
            for e in sorted(entries, key=lambda e: e.name):
                sub = f"{rel}/{e.name}"
                st = e.stat(follow_symlinks=False)
                if e.name.startswith(".") and not stat.S_ISLNK(st.st_mode):
                    continue  # an interrupted atomic write (.x.part) or merge (.merge-*): not a result, never read
                check_name(sub, given)
                if stat.S_ISDIR(st.st_mode):
                    visit(Path(e.path), sub)
                else:
                    add(sub, st)

    for name in RESULTS_FILES:
        with contextlib.suppress(FileNotFoundError):
            add(name, os.lstat(top / name))
    for name in RESULTS_DIRS:
        try:
            st = os.lstat(top / name)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise BadSource(f"{given}: {name} is not a folder (a link or a file)")
        visit(top / name, name)
    for name in settled.present(top, given):  # settle's files, by name (sharing/settled.py)
        add(name, os.lstat(top / name))
    return files


# --- records ---------------------------------------------------------------------------------------------


def _schema_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "workflow" / "schemas"


@functools.cache
def _validator(kind: str):
    """The JSON Schema of a record (workflow/schemas/), compiled once per process."""
    import jsonschema

    schema = yamlfile.load((_schema_dir() / SCHEMAS[kind]).read_text())
    return jsonschema.Draft202012Validator(schema)


def read_record(path: Path, kind: str, given: str, limit: int = MAX_RECORD_BYTES, missing=None):
    """A JSON record (``kind``: a key of SCHEMAS) at ``path``, size-capped and validated; ``missing`` if there
    is none; BadSource if it is a link, too large, not JSON or not of its schema."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return missing
    except OSError as exc:
        raise BadSource(f"{given}: {path.name} cannot be opened ({exc.strerror}; a link?)") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise BadSource(f"{given}: {path.name} is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise BadSource(f"{given}: {path.name} is larger than {limit} bytes")
    try:
        found = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadSource(f"{given}: {path.name} is not JSON ({' '.join(str(exc).split())})") from None
    error = next(iter(sorted(_validator(kind).iter_errors(found), key=lambda e: list(e.absolute_path))), None)
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "(top)"
        raise BadSource(f"{given}: {path.name} is not a {kind} record: at {where}: "
                        f"{' '.join(error.message.split())[:200]}")
    return found


def check_published(found: dict, given: str) -> dict:
    """Each cell record's key is the one its parts name (names.key_of_parts), its name a cell's."""
    from banditrepro.workflow.names import PARTS, key_of_parts

    for cell, rec in (found.get("cells") or {}).items():
        parts = parse_cell(cell)
        if parts is None or not (PART.fullmatch(parts[0]) and PART.fullmatch(parts[2])):
            raise BadSource(f"{given}: published.json: {cell!r} is not a cell's name")
        if all(k in rec for k in PARTS):
            if key_of_parts(rec) != rec["key"] or (rec["algorithm"], rec["horizon"]) != (parts[2], parts[1]):
                raise BadSource(f"{given}: published.json: cell {cell}'s key {rec['key']} is not what its parts "
                                "name")
    return found


# --- shards ----------------------------------------------------------------------------------------------


def check_npz(path: Path, given: str, rel: str) -> None:
    """A shard's zip: a bounded number of arrays, a bounded unpacked size (its declared sizes, which zipfile
    enforces on reading)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise BadSource(f"{given}: {rel} is not a readable .npz ({exc})") from None
    if len(infos) > MAX_NPZ_ENTRIES or sum(i.file_size for i in infos) > MAX_NPZ_BYTES:
        raise BadSource(f"{given}: {rel} holds more than {MAX_NPZ_ENTRIES} arrays or {MAX_NPZ_BYTES} bytes")


def shard_description(path: Path, given: str, rel: str) -> dict:
    """What a shard says it holds (its shared arrays and its runs), read without its curves."""
    import numpy as np

    check_npz(path, given, rel)
    try:
        with np.load(path, allow_pickle=False) as z:
            return {"algorithm": str(z["algorithm"]), "params": json.loads(str(z["params"])),
                    "instance": str(z["instance"]), "horizon": int(z["horizon"]), "base_seed": int(z["base_seed"]),
                    "runs": [int(r) for r in np.asarray(z["run"]).ravel()]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadSource(f"{given}: {rel} is not a shard ({' '.join(str(exc).split())[:200]})") from None


def check_shard(path: Path, rel: str, sidecar: Path | None, given: str, base_seed: int | None) -> None:
    """A shard's arrays (and sidecar) describe the cell, runs and horizon its path names; ``base_seed``: the one
    the source's published.json records for its key (None: not recorded)."""
    from banditrepro.algorithms import algorithm_id

    cell, _key, first, last = parse_shard_rel(rel)
    dataset, horizon, algo = cell.split("/")
    d = shard_description(path, given, rel)
    try:
        named = algorithm_id(d["algorithm"], d["params"])
    except (ReproError, KeyError, TypeError, ValueError):  # an algorithm not known here: its name at least
        named = d["algorithm"] if algo.partition("+")[0] == d["algorithm"] else None
    wrong = [what for what, ok in (("algorithm and parameters", named == algo),
                                   ("instance", d["instance"] == dataset), ("horizon", f"T{d['horizon']}" == horizon),
                                   ("runs", d["runs"] == list(range(first, last + 1))),
                                   ("base seed", base_seed is None or d["base_seed"] == base_seed)) if not ok]
    if sidecar is not None:
        side = read_record(sidecar, "sidecar", given, MAX_SIDECAR_BYTES)
        if (side["algorithm_id"], side["instance"], side["horizon"], side["runs"]) != \
                (algo, dataset, int(horizon[1:]), list(range(first, last + 1))):
            wrong.append("sidecar")
    if wrong:
        raise BadSource(f"{given}: {rel} is filed under another cell's name: its {', '.join(wrong)} "
                        f"{'differ' if len(wrong) > 1 else 'differs'} from its path")
