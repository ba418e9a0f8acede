"""Recompute on request and after `clean` (docs/decisions.md#recompute-on-request): one run of the test config
in a project copy, then in place: a kernel edit, `banditrepro clean --remove`, the edit undone (the reverted
cells recompute and the run succeeds, with the first run's claims); `clean --shards rucb --remove` (exactly
RUCB's shards are computed again, same bytes); a shard's sidecar from another numpy (reproduction.md names
the figures whose shards came from two stacks)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workflow.common import MIRROR, MIRROR_ARG, TEST_CONFIG, TEST_RESULTS, copy_project, edit_function, smk

SHARDS_LOG = f"{TEST_RESULTS}/logs/shards-computed.log"


def _run(proj: Path, *extra: str):
    r = smk("--configfile", TEST_CONFIG, *MIRROR_ARG, "--cores", "2", *extra, cwd=proj)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r


def _clean(proj: Path, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "banditrepro", "clean", "--project", str(proj), "--configfile",
                        str(proj / TEST_CONFIG), *args], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(proj / "src")})  # the copy's (edited) code
    assert r.returncode == 0, r.stderr
    return r.stdout


def _computed(proj: Path) -> list[str]:
    path = proj / SHARDS_LOG
    return [ln.split()[0] for ln in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.workflow
def test_clean_then_undo_and_recompute_on_request(tmp_path):
    if not MIRROR.is_dir():
        pytest.skip("offline data mirror ../shared/data not present")
    proj = copy_project(tmp_path / "proj")
    _run(proj)
    claims = (proj / TEST_RESULTS / "claims.csv").read_bytes()
    rucb = sorted((proj / TEST_RESULTS / "cells").rglob("rucb/*/runs*.npz"))
    shard_bytes = {p: p.read_bytes() for p in rucb}
    assert rucb

    # a kernel edit, its run, clean --remove (the unedited folders and their receipts), the edit undone
    kernel = proj / "src/banditrepro/algorithms/rucb.py"
    original = kernel.read_text()
    edit_function(kernel, "rucb_kernel")
    _run(proj)
    out = _clean(proj, "--remove")
    assert f"removed {len({p.parent for p in rucb})} shard folders" in out and "receipts of their batches" in out
    assert not any(p.exists() for p in rucb)
    kernel.write_text(original)
    before = len(_computed(proj))
    _run(proj)  # today's failure: receipts kept, "nothing to be done", then every reverted summary fails
    again = _computed(proj)[before:]
    assert sorted(again) == sorted({str(p.relative_to(proj / TEST_RESULTS / "cells" / "seed7")) for p in rucb})
    assert {p: p.read_bytes() for p in rucb} == shard_bytes
    assert (proj / TEST_RESULTS / "claims.csv").read_bytes() == claims

    # recompute on request: exactly RUCB's shards, the same bytes
    out = _clean(proj, "--shards", "rucb", "--remove")
    assert f"removed {len(rucb)} shards of algorithm rucb" in out, out
    before = len(_computed(proj))
    _run(proj)
    assert len(_computed(proj)[before:]) == len(rucb)
    assert {p: p.read_bytes() for p in rucb} == shard_bytes
    assert (proj / TEST_RESULTS / "claims.csv").read_bytes() == claims

    # a shard computed on another numpy: its summary reruns, reproduction.md names the figures
    assert "Numerics stacks" not in (proj / TEST_RESULTS / "reproduction.md").read_text()
    side = rucb[0].with_suffix(".json")
    data = json.loads(side.read_text())
    data["versions"]["numpy"] = "0.0.1"
    side.write_text(json.dumps(data))
    cell = rucb[0].relative_to(proj / TEST_RESULTS / "cells" / "seed7").parts[:3]  # dataset, T<h>, rucb
    summary = Path(TEST_RESULTS, "summaries", *cell).with_suffix(".npz")
    assert (proj / summary).is_file()
    _run(proj, "--forcerun", str(summary))
    text = (proj / TEST_RESULTS / "reproduction.md").read_text()
    assert "## Numerics stacks" in text and "numpy 0.0.1" in text, text[-2000:]
    assert (proj / TEST_RESULTS / "claims.csv").read_bytes() == claims
