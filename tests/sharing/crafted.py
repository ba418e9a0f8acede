"""Helpers that craft sources by hand (bundles with their checksums, shards with edited arrays) for the
sharing tests: what another lab, or an attacker, could hand over."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import numpy as np

from banditrepro.atomic import npz_bytes


def bundle_folder(results: Path, out: Path, data: Path | None = None) -> Path:
    """A .tar.gz of ``results`` (as results/) and ``data`` (as data/), with a checksums.sha256 listing every
    file: what the reader accepts from a bundle not made by ``banditrepro bundle``."""
    files = {f"results/{p.relative_to(results).as_posix()}": p for p in sorted(results.rglob("*")) if p.is_file()}
    if data is not None:
        files.update({f"data/{p.relative_to(data).as_posix()}": p for p in sorted(data.rglob("*")) if p.is_file()})
    lines = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {n}\n" for n, p in sorted(files.items()))
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("checksums.sha256")
        info.size = len(lines.encode())
        tar.addfile(info, io.BytesIO(lines.encode()))
        for name, path in files.items():
            tar.add(path, arcname=name)
    return out


def rewrite_npz(path: Path, **arrays) -> None:
    """Replace some arrays of an .npz (the others kept)."""
    with np.load(path) as z:
        found = {k: z[k] for k in z.files}
    found.update({k: np.asarray(v) for k, v in arrays.items()})
    path.write_bytes(npz_bytes(found))
