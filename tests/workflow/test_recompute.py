"""Recompute on request and after `clean` (docs/decisions.md#recompute-on-request): a `cp -a` clone of the session's
narrowed reference (tests/conftest.py `narrowed_reference`: one finished run of the narrowed test config, Winner
Stays at T <= 500), then in place: a kernel edit and its run (new cell keys beside the old), `banditrepro clean
--remove` (exactly the old keys' folders go, nothing a published file comes from), the edit undone (exactly the
removed shards are computed again, same bytes, the first run's claims and tables); `clean --shards rucb --remove`
(exactly RUCB's shards are computed again, same bytes); in that same run a shard's sidecar from another numpy with
its summary forced (reproduction.md names the figures whose shards came from two stacks). Three Snakemake runs (the
reference computed everything), each one algorithm's cells and what reads them."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workflow.common import (
    SUBSET,
    TEST_CONFIG,
    TEST_RESULTS,
    clone,
    computed,
    edit_function,
    run_narrowed,
)


def _run(proj: Path, *extra: str):
    return run_narrowed(proj, args=extra)


def _clean(proj: Path, *args: str) -> str:
    # the copy's (edited) code names; the narrowed config, as the runs
    r = subprocess.run([sys.executable, "-m", "banditrepro", "clean", "--project", str(proj), "--configfile",
                        str(proj / TEST_CONFIG), *args, "--config", *SUBSET], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "PYTHONPATH": str(proj / "src")})
    assert r.returncode == 0, r.stderr
    return r.stdout


def _shards(proj: Path) -> dict[str, bytes]:
    """Every shard under the results folder (path under it -> bytes)."""
    res = proj / TEST_RESULTS
    return {str(p.relative_to(res)): p.read_bytes() for p in sorted((res / "cells").rglob("runs*.npz"))}


def _published(proj: Path) -> dict[str, bytes]:
    """claims.csv and every figure's published table: what a recompute must leave byte for byte (the run-time
    table holds measured seconds, which a recompute measures anew)."""
    res = proj / TEST_RESULTS
    return {str(p.relative_to(res)): p.read_bytes()
            for p in [res / "claims.csv", *sorted((res / "tables").glob("*/*.*"))]}


def _folder(shard: str) -> str:
    return shard.rpartition("/")[0]


@pytest.mark.workflow
def test_clean_then_undo_and_recompute_on_request(narrowed_reference, tmp_path):
    proj = clone(narrowed_reference, tmp_path / "proj")  # the narrowed test config run in full
    res = proj / TEST_RESULTS
    first, published = _shards(proj), _published(proj)
    rucb = sorted(s for s in first if s.split("/")[3] == "rucb")
    assert rucb and len(published) > 10

    # a kernel edit: the cells running that code get new keys, computed beside the old folders
    kernel = proj / "src/banditrepro/algorithms/rucb.py"
    original = kernel.read_text()
    edit_function(kernel, "rucb_kernel")
    _run(proj)
    edited = _shards(proj)
    cells = {_folder(_folder(s)) for s in set(edited) - set(first)}  # <dataset>/T<h>/<algo> given a new key
    old = sorted(s for s in first if _folder(_folder(s)) in cells)
    assert set(rucb) <= set(old)
    out = _clean(proj, "--remove")
    folders = sorted({_folder(s) for s in old})
    for folder in folders:
        assert f"{TEST_RESULTS}/{folder}/" in out, out
    shard_line = re.search(r"^  shards\s+(\d+) folders?,\s+(\d+) files?", out, re.M)
    assert shard_line and shard_line.groups() == (str(len(folders)), str(2 * len(old))), out
    assert set(_shards(proj)) == set(edited) - set(old)  # exactly the old keys' shards went
    sources = [v["from"] for v in json.loads((res / "published.json").read_text())["files"].values()]
    assert sources and all((res / s).is_file() for s in sources)  # every published file's store entry stays
    assert _clean(proj).startswith("nothing to clean"), "a second clean finds nothing"

    # the edit undone: its old names again, their shards missing: exactly those computed, the same bytes
    kernel.write_text(original)
    before = len(computed(proj))
    _run(proj)
    assert sorted(computed(proj)[before:]) == old
    assert {s: b for s, b in _shards(proj).items() if s in first} == first
    assert _published(proj) == published

    # recompute on request: exactly RUCB's shards, the same bytes; in the same run a shard whose sidecar says
    # another numpy, its summary forced: reproduction.md names the figures whose shards came from two stacks
    assert "Numerics stacks" not in (res / "reproduction.md").read_text()
    other = next(s for s in first if s not in old)
    side = (res / other).with_suffix(".json")
    data = json.loads(side.read_text())
    data["versions"]["numpy"] = "0.0.1"
    side.write_text(json.dumps(data))
    summaries = list(res.joinpath("summaries", *Path(other).parts[1:4]).glob("*.npz"))
    assert len(summaries) == 1, summaries  # the cell's one summary: clean removed the others
    out = _clean(proj, "--shards", "rucb", "--remove")
    assert f"removed {len(rucb)} shards of algorithm rucb ({2 * len(rucb)} files)" in out, out
    before = len(computed(proj))
    _run(proj, "--forcerun", str(summaries[0].relative_to(proj)))
    assert sorted(computed(proj)[before:]) == rucb
    assert {s: b for s, b in _shards(proj).items() if s in first} == first
    assert _published(proj) == published
    text = (res / "reproduction.md").read_text()
    assert "## Numerics stacks" in text and "numpy 0.0.1" in text, text[-2000:]
