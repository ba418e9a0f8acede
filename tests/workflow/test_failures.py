"""What a user sees when a run stops, end to end in a copy of the finished paper-like run: a failed job's reason
beside its failure line, a Ctrl-C that ends with how to resume, and a SIGTERM that stops a batch waiting on
another's claim within seconds (workflow/stop.py), the next run resuming."""

import json
import re
import signal
import subprocess
import time

import pytest

from banditrepro.datasets.catalog import load_catalog
from banditrepro.layout import Layout
from banditrepro.workflow.progress import INTERRUPTED
from tests.workflow.common import SNAKEMAKE, clone, end_holder, hold_claim, smk

pytestmark = pytest.mark.workflow


def test_an_edited_raw_file_shows_the_checksum_error(project, tmp_path):
    copy = clone(project, tmp_path / "copy")
    dataset = "six-rankers"
    raw = Layout().raw_file(load_catalog(copy / "config/datasets.yaml").raw_inputs(dataset)[0])
    with open(copy / raw, "ab") as f:
        f.write(b"\n0.5\n")  # an edit after download: newer than the prepared instance, so it is prepared again
    r = smk("--configfile", "paper.yaml", "--cores", "2", Layout().prepared_file(dataset), cwd=copy)
    assert r.returncode != 0
    failed = [ln for ln in r.stderr.splitlines() if ln.startswith("banditrepro: job failed")]
    assert len(failed) == 1 and "prepare_dataset" in failed[0] and "checksum" in failed[0], r.stderr[-3000:]


def test_ctrl_c_ends_with_how_to_resume(project, tmp_path):
    copy = clone(project, tmp_path / "copy")
    # one core and a fresh results_dir: every cell to compute again, so the signal lands mid-run
    cmd = [*SNAKEMAKE, "-s", str(copy / "Snakefile"), "--configfile", "paper.yaml", "--cores", "1",
           "--config", "results_dir=results/interrupted"]
    # a shell's background job (nohup …&, some CI runners) starts with SIGINT ignored, and Python keeps it
    # ignored: give the run the default disposition, as in a terminal, so Ctrl-C reaches it
    p = subprocess.Popen(cmd, cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:  # the run ended before any progress line
            break
        lines.append(line)
        progress = re.search(r"(\d+)/(\d+) jobs done", line)
        if progress and 0 < int(progress[1]) < int(progress[2]):  # jobs are running, most still to come
            break
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    tail = [ln for ln in ("".join(lines) + err).splitlines() if ln.strip()]
    assert p.returncode != 0, tail[-5:]
    assert INTERRUPTED in tail[-1], tail[-10:]


def test_sigterm_stops_a_run_waiting_on_a_live_claim_within_seconds_and_the_next_run_resumes(project, tmp_path):
    """Snakemake answers SIGTERM with "Will exit after finishing currently running jobs"; a batch waiting for
    a claim another process holds and renews would wait on (minutes, hours). It stops within seconds."""
    copy = clone(project, tmp_path / "copy")
    results = copy / "results"
    receipt = sorted((results / "batches").glob("*.json"))[0]
    shard = next((results / "cells").glob(f"seed*/{json.loads(receipt.read_text())['shards'][0]}"))
    shard.unlink()
    receipt.unlink()
    target = str(receipt.relative_to(copy))  # asked for: its batch runs again and meets the claim
    holder = hold_claim(shard)
    try:
        p = subprocess.Popen([*SNAKEMAKE, "-s", str(copy / "Snakefile"), "--configfile", "paper.yaml", "--cores",
                              "2", target], cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines, deadline = [], time.monotonic() + 300
        while time.monotonic() < deadline:
            line = p.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "waiting for host" in line:
                break
        assert any("waiting for host" in ln and f"pid {holder.pid}" in ln for ln in lines), "".join(lines)[-3000:]
        sent = time.monotonic()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=120)
        took = time.monotonic() - sent
        assert p.returncode != 0 and took < 20, (took, err[-3000:])
        assert "stopped on SIGTERM" in err, err[-3000:]
        assert not shard.exists() and not receipt.exists()
    finally:
        end_holder(holder)
    r = smk("--configfile", "paper.yaml", "--cores", "2", target, cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert shard.is_file() and receipt.is_file()
    print(f"SIGTERM while waiting on a claim: the run ended {took:.1f} s later; the next run resumed")
