"""A corpus of hostile sources (banditrepro/sharing/received.py, sources.py): bundles and results folders crafted
to escape, exhaust or mislead the reader. Each is given to ``verify``, ``merge`` and ``compare``: exit status 2,
one line on stderr, nothing on stdout, nothing left in the temporary folder, and the target project's results
and data byte-identical. Most need no run at all (refused before any plan); the folder cases are clones of the
session's reference run, whose bundle (``bundled``) gives the truncated case. One pair per command runs as a real
``python -m banditrepro`` process (its exit status as the shell sees it); the others call the same entry point,
banditrepro.cli.main, in this process (stdout, stderr and the temporary folder captured likewise), which spares a
Python start-up and the package's imports per pair."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import unicodedata
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from banditrepro.sharing import received
from tests.sharing.conftest import RESULTS, SUBSET, in_process
from tests.workflow.common import TEST_CONFIG, clone

pytestmark = pytest.mark.workflow

SRC = str(Path(__file__).resolve().parents[2] / "src")
PUBLISHED = b'{"cells": {}, "files": {}}\n'


def member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "", pax=None):
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname, info.mode = kind, len(data) if kind == tarfile.REGTYPE else 0, link, 0o644
    if pax:
        info.pax_headers = pax
    return info, data


def tar_bytes(members, checksums="auto") -> bytes:
    """A tar of ``members`` ((TarInfo, bytes)), with a checksums.sha256 listing its regular files first (``auto``),
    the given text, or none (None)."""
    if checksums == "auto":
        checksums = "".join(f"{hashlib.sha256(d).hexdigest()}  {i.name}\n" for i, d in members if i.isreg())
    if checksums is not None:
        members = [member("checksums.sha256", checksums.encode("utf-8", "surrogateescape")), *members]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buf.getvalue()


def write_bundle(path: Path, members, checksums="auto") -> Path:
    path.write_bytes(gzip.compress(tar_bytes(members, checksums), mtime=0))
    return path


def base(*extra, published: bytes = PUBLISHED):
    return [member("results/published.json", published), *extra]


def gzip_bomb(path: Path, zeros: int = 2**30) -> Path:
    """A member of ``zeros`` zero bytes: its header, then one compressed MiB of zeros repeated (gzip members
    concatenate), so that 1 GiB takes ~1 MiB and no time to make."""
    info, _ = member("results/cells/d/T5/a/0123456789abcdef/runs0-0.npz")
    info.size = zeros
    mib = gzip.compress(bytes(2**20), mtime=0)
    first, data = member("results/published.json", PUBLISHED)
    head = first.tobuf(tarfile.PAX_FORMAT) + data + bytes(-len(data) % 512)  # a whole member, no end marker
    with open(path, "wb") as f:
        f.write(gzip.compress(head + info.tobuf(tarfile.PAX_FORMAT), mtime=0))
        for _ in range(zeros // 2**20):
            f.write(mib)
    return path


def many_members(path: Path, n: int) -> Path:
    """``n`` empty members, streamed (one header each): above the reader's MAX_MEMBERS."""
    comp = zlib.compressobj(1, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        for i in range(n):
            f.write(comp.compress(member(f"results/cells/d/T5/a/0123456789abcdef/f{i}")[0].tobuf(tarfile.USTAR_FORMAT)))
        f.write(comp.compress(bytes(1024)) + comp.flush())
    return path


def bundles(folder: Path, real: Path) -> dict[str, Path]:
    shard = "results/cells/d/T5/a/0123456789abcdef/runs0-0.npz"
    data = b"x" * 100
    good = [member("results/claims.csv", data)]
    out = {
        "traversal ../": base(member("results/../../evil", data)),
        "absolute name": base(member("/tmp/evil", data)),
        "symlink inside": base(member("results/cells/link.npz", kind=tarfile.SYMTYPE, link="../claims.csv"), *good),
        "symlink outside": base(member(shard, kind=tarfile.SYMTYPE, link="/etc/passwd")),
        "hard link": base(*good, member(shard, kind=tarfile.LNKTYPE, link="results/claims.csv")),
        "FIFO member": base(member(shard, kind=tarfile.FIFOTYPE)),
        "char device": base(member(shard, kind=tarfile.CHRTYPE)),
        "member outside the allow-list": base(member("results/logs/x.log", data)),
        "duplicate member": base(*good, *good),
        "unicode name (NFC)": base(member("results/cells/caf\u00e9.npz", data)),
        "unnormalised unicode (NFD)": base(member(unicodedata.normalize("NFD", "results/cells/caf\u00e9.npz"), data)),
        "NUL in a name (pax path)": base(member("results/claims.csv", data, pax={"path": "results/claims\x00.csv"})),
        "control character in a name": base(member("results/cl\x01aims.csv", data)),
        "malformed published.json": base(published=b'{"cells": {'),
        "published.json against its schema": base(published=b'{"cells": {"d/T5/a": {"key": "../../x"}}}'),
        "oversized published.json": base(published=b"{" + b" " * (received.MAX_RECORD_BYTES + 1) + b"}"),
    }
    paths = {name: write_bundle(folder / f"{i}.tar.gz", m) for i, (name, m) in enumerate(out.items())}
    paths["member not in the checksums"] = write_bundle(folder / "extra.tar.gz", base(*good), checksums=(
        f"{hashlib.sha256(PUBLISHED).hexdigest()}  results/published.json\n"))
    paths["changed member"] = write_bundle(folder / "changed.tar.gz", base(*good), checksums=(
        f"{hashlib.sha256(PUBLISHED).hexdigest()}  results/published.json\n"
        f"{hashlib.sha256(b'y' * 100).hexdigest()}  results/claims.csv\n"))
    paths["missing checksums.sha256"] = write_bundle(folder / "nosums.tar.gz", base(*good), checksums=None)
    whole = real.read_bytes()
    (folder / "truncated.tar.gz").write_bytes(whole[: len(whole) // 2])
    paths["truncated gzip"] = folder / "truncated.tar.gz"
    (folder / "text.tar.gz").write_bytes(gzip.compress(b"not a tar\n" * 100, mtime=0))
    paths["gzip, not a tar"] = folder / "text.tar.gz"
    (folder / "plain.tar.gz").write_bytes(b"not gzip at all\n")
    paths["not gzip"] = folder / "plain.tar.gz"
    paths["gzip bomb (1 GiB of zeros)"] = gzip_bomb(folder / "bomb.tar.gz")
    paths["100,000 members"] = many_members(folder / "many.tar.gz", 100_000)
    return paths


def folders(reference: Path, folder: Path) -> dict[str, Path]:
    """Clones of the reference run's results folder, each altered one way."""
    out = {}

    def results_clone(name: str) -> Path:
        dest = folder / name.replace(" ", "-").replace("/", "-")
        shutil.copytree(reference / RESULTS, dest, symlinks=True)
        out[name] = dest
        return dest

    shards = lambda r: sorted((r / "cells").rglob("runs*.npz"))  # noqa: E731
    r = results_clone("folder: symlink to outside")
    os.symlink("/etc/passwd", r / "cells" / "evil.npz")
    r = results_clone("folder: symlink inside")
    os.symlink("../claims.csv", r / "summaries" / "link.npz")
    r = results_clone("folder: sidecar that is a link")
    side = shards(r)[0].with_suffix(".json")
    side.unlink()
    os.symlink((folder / "elsewhere.json").resolve(), side)
    (folder / "elsewhere.json").write_text("{}")
    r = results_clone("folder: FIFO")
    os.mkfifo(r / "cells" / "fifo.npz")
    r = results_clone("folder: hard link")
    os.link(r / "claims.csv", r / "tables" / "claims-again.csv")
    r = results_clone("folder: shard filed under another cell's key")
    a, b = [p for p in shards(r) if "/sushi16/" in str(p)][:1] + [p for p in shards(r) if "/utility10/" in str(p)][:1]
    shutil.copy2(b, a)  # a utility10 shard (its arrays say so) under a sushi16 cell's name
    r = results_clone("folder: malformed published.json")
    (r / "published.json").write_text('{"cells": [')
    r = results_clone("folder: oversized received.json")
    (r / "received.json").write_bytes(b'{"sources": []' + b" " * received.MAX_RECORD_BYTES + b"}")
    r = results_clone("folder: a record's key not its parts")
    pub = json.loads((r / "published.json").read_text())
    cell = sorted(pub["cells"])[0]
    pub["cells"][cell]["base_seed"] += 1
    (r / "published.json").write_text(json.dumps(pub))
    return out


@pytest.fixture(scope="module")
def corpus(reference, bundled, tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    return {**bundles(folder, bundled[0]), **folders(reference, folder)}


@pytest.fixture(scope="module")
def target(reference, tmp_path_factory) -> Path:
    return clone(reference, tmp_path_factory.mktemp("target") / "project")


def snapshot(proj: Path) -> dict[str, bytes]:
    """Every entry of the project's results and data folders: a file's bytes, a link's target, a folder."""
    out = {}
    for top in ("results", "data"):
        for dirpath, dirs, files in os.walk(proj / top):
            for name in dirs + files:
                p = Path(dirpath) / name
                st = os.lstat(p)
                out[str(p.relative_to(proj))] = (os.readlink(p).encode() if stat.S_ISLNK(st.st_mode) else b"<dir>"
                                                 if stat.S_ISDIR(st.st_mode) else p.read_bytes())
    return out


def command(name: str, source: Path, proj: Path) -> list[str]:
    """The arguments of ``banditrepro NAME`` for this source and target (after ``python -m banditrepro``)."""
    if name == "verify":
        return [name, str(source), "--project", str(proj)]
    if name == "merge":
        return [name, str(source), "--into", RESULTS, "--configfile", TEST_CONFIG, "--config", *SUBSET, "--project",
                str(proj)]
    return [name, str(source), RESULTS, "--project", str(proj)]


# the pairs run as a process of their own, one per command (the exit status path of `python -m banditrepro`)
SPAWNED = {("traversal ../", "verify"), ("folder: symlink to outside", "merge"), ("truncated gzip", "compare")}


def spawned(argv: list[str], cwd: Path, tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-m", "banditrepro", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def test_every_hostile_source_is_refused_by_verify_merge_and_compare_with_one_line(corpus, target, tmp_path):
    assert len(corpus) >= 20
    jobs = [(case, name) for case in corpus for name in ("verify", "merge", "compare")]
    assert SPAWNED <= set(jobs)
    before = snapshot(target)

    def attempt(job, how):
        case, name = job
        tmp = tmp_path / f"tmp-{jobs.index(job)}"
        tmp.mkdir()
        r = how(command(name, corpus[case], target), target, tmp)
        return case, name, r.returncode, r.stdout, r.stderr, sorted(p.name for p in tmp.iterdir())

    # the spawned pairs run beside the in-process ones (those change this process's working folder, which a
    # child given its own cwd does not see)
    with ThreadPoolExecutor(3) as pool:
        children = [pool.submit(attempt, job, spawned) for job in sorted(SPAWNED)]
        outcomes = [attempt(job, in_process) for job in jobs if job not in SPAWNED]
        outcomes += [c.result() for c in children]
    assert len(outcomes) == len(jobs)
    wrong = [(case, name, status, out[-300:], err[-500:], left) for case, name, status, out, err, left in outcomes
             if not (status == 2 and out == "" and len(err.splitlines()) == 1 and not left)]
    assert wrong == [], wrong
    assert snapshot(target) == before
    for path in corpus.values():  # the sources are read, never written: a clone keeps its shards and records
        assert not any(p.name.startswith(".merge-") for p in path.parent.iterdir())
