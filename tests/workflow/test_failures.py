"""What a user sees when a run stops or meets bad files, end to end in copies of the finished session runs: a
failed job's reason beside its failure line; a Ctrl-C that ends with how to resume, the same command then
computing only what was missing; a SIGTERM that stops a batch before its next shard (workflow/stop.py), the
next run resuming; corrupt shards and summaries removed and named, an I/O error deleting nothing
(docs/decisions.md#only-corruption-deletes)."""

import errno
import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from banditrepro.datasets.catalog import load_catalog
from banditrepro.layout import Layout
from banditrepro.workflow.progress import INTERRUPTED
from tests.workflow.common import (
    MIRROR_ARG,
    SNAKEMAKE,
    TEST_CONFIG,
    TEST_RESULTS,
    clone,
    computed,
    mtimes,
    plan_of,
    smk,
)

pytestmark = pytest.mark.workflow

TEST = ["--configfile", TEST_CONFIG, *MIRROR_ARG]


def test_an_edited_raw_file_shows_the_checksum_error(project, tmp_path):
    copy = clone(project, tmp_path / "copy")
    dataset = "six-rankers"
    raw = Layout().raw_file(load_catalog(copy / "config/datasets.yaml").raw_inputs(dataset)[0])
    with open(copy / raw, "ab") as f:
        f.write(b"\n0.5\n")  # an edit after download: newer than the prepared instance, so it is prepared again
    # the prepared file is named by the catalog's entries (the raw file's sha256 there), not by its bytes
    prepared = plan_of(copy, "paper.yaml")["prepared"][dataset]
    r = smk("--configfile", "paper.yaml", "--cores", "2", prepared, cwd=copy)
    assert r.returncode != 0
    failed = [ln for ln in r.stderr.splitlines() if ln.startswith("banditrepro: job failed")]
    assert len(failed) == 1 and "prepare_dataset" in failed[0] and "checksum" in failed[0], r.stderr[-3000:]


def _interrupt_when_running(p: subprocess.Popen, deadline: float) -> list[str]:
    """The progress lines until jobs are running with most still to come (then SIGINT, as Ctrl-C)."""
    lines = []
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:  # the run ended before any progress line
            break
        lines.append(line)
        progress = re.search(r"(\d+)/(\d+) jobs done", line)
        if progress and 0 < int(progress[1]) < int(progress[2]) // 2:
            break
    p.send_signal(signal.SIGINT)
    return lines


def test_ctrl_c_ends_with_how_to_resume_and_the_same_command_computes_only_what_was_missing(project, tmp_path):
    copy = clone(project, tmp_path / "copy")
    # one core and a fresh results_dir: every cell to compute again, so the signal lands mid-run
    command = ["--configfile", "paper.yaml", "--cores", "1", "--config", "results_dir=results/interrupted"]
    # a shell's background job (nohup …&, some CI runners) starts with SIGINT ignored, and Python keeps it
    # ignored: give the run the default disposition, as in a terminal, so Ctrl-C reaches it
    p = subprocess.Popen([*SNAKEMAKE, "-s", str(copy / "Snakefile"), *command], cwd=copy, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(copy / "src")},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = _interrupt_when_running(p, time.monotonic() + 120)
    _, err = p.communicate(timeout=120)
    tail = [ln for ln in ("".join(lines) + err).splitlines() if ln.strip()]
    assert p.returncode != 0, tail[-5:]
    assert INTERRUPTED in tail[-1], tail[-10:]

    results = copy / "results/interrupted"
    first = computed(copy, "results/interrupted")
    kept = {k: v for k, v in mtimes(results / "cells").items() if k.endswith(".npz")}
    r = smk(*command, cwd=copy)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    every = computed(copy, "results/interrupted")
    # what the interrupted run finished is kept; the same command computes each other shard once
    assert [s for s, n in Counter(every).items() if n > 1] == []
    assert {f"cells/{k}" for k in kept}.isdisjoint(every[len(first):])
    assert {k: v for k, v in mtimes(results / "cells").items() if k in kept} == kept
    plan = plan_of(copy, "paper.yaml", results_dir="results/interrupted")
    online = [c for c in plan["cells"].values() if c["folder"].split("/")[3] not in plan["optional"]]
    assert all((copy / s).exists() for c in online for s in c["shards"])
    assert (results / "claims.csv").read_bytes() == (project / "results/claims.csv").read_bytes()


SLOW = """
import os, time
from banditrepro.algorithms import AlgorithmSpec
from banditrepro.plugins import Recorder

def run(instance, T, tab, grid, rng):
    time.sleep(float(os.environ.get("SLOW_DUELS_SECONDS", "0")))
    rec = Recorder(tab, grid)
    rec.play(0, 0, T)
    return rec.result()

SPEC = AlgorithmSpec(name="slow-duels", label="Slow", problem="duel", citation="test", run=run)
"""
# per run, read from the environment (the plugin's code, hence its cells' names, the same in every run): the
# interrupted run's batch of 8 runs is 16 s of work; the run that resumes it sleeps not at all
SLOW_SECONDS = 2.0


def test_sigterm_stops_a_batch_before_its_next_shard_and_the_next_run_resumes(test_run, tmp_path):
    """Snakemake answers SIGTERM with "Will exit after finishing currently running jobs"; an in-process batch
    of 8 two-second shards (a challenger that sleeps) would go on for 14 s more. It stops before its next
    shard, and the same command afterwards computes the rest, none twice (its shards sleep no more: only
    which shards it computes matters there)."""
    from tests.interface.test_plugin import fake_plugin

    site = fake_plugin(tmp_path / "site", "slow-duels", "slow_duels", SLOW,
                       {"slow-duels": "slow_duels:SPEC"})
    copy = clone(test_run[0], tmp_path / "copy")
    env = {"PYTHONPATH": f"{copy / 'src'}:{site}"}
    extra = {"challengers": ["slow-duels"], "runs": 8, "max_runs": 8, "runs_per_shard": 1}
    plan = plan_of(copy, TEST_CONFIG, env=env, **extra)
    cell = plan["cells"]["six-rankers/T2000/slow-duels"]
    assert len(cell["missing"]) == 8
    (batch,) = [b for b, shards in plan["batches"].items() if set(shards) == set(cell["shards"])]
    # its summary asked for: its one batch (8 shards) runs, then it ("--": the end of --config's values)
    args = ["--cores", "2", *TEST, *(f"{k}={json.dumps(v)}" for k, v in extra.items()), "--", cell["summary"]]
    command = [*SNAKEMAKE, "-s", str(copy / "Snakefile"), *args]
    before = computed(copy)
    p = subprocess.Popen(command, cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, **env, "SLOW_DUELS_SECONDS": str(SLOW_SECONDS)})
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(computed(copy)) == len(before) and p.poll() is None:
            time.sleep(0.1)
        assert len(computed(copy)) > len(before), "no shard computed"
        sent = time.monotonic()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=120)
        took = time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
    first = computed(copy)[len(before):]
    assert p.returncode != 0 and took < 10, (took, err[-3000:])
    assert "stopped on SIGTERM" in err, err[-3000:]
    assert 1 <= len(first) < 8, first  # stopped mid-batch
    assert not (copy / plan["results"] / "batches" / f"{batch}.done").exists()
    r = smk(*args, cwd=copy, env={**env, "SLOW_DUELS_SECONDS": "0"})
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    prefix = len(plan["results"]) + 1
    assert sorted(computed(copy)[len(before):]) == sorted(s[prefix:] for s in cell["shards"])  # each once
    assert (copy / cell["summary"]).exists()
    print(f"SIGTERM mid-batch: the run ended {took:.1f} s later, {len(first)} of 8 shards done; the next run "
          "computed the rest")


# An I/O error on one file, in every process that puts this folder on its path (sitecustomize is imported at
# start-up): numpy's open() of a path ending in $BANDITREPRO_TEST_EIO fails with EIO, as a failing disk or NFS
# would when a job reads it (Snakemake's own bookkeeping, which opens it too, is left alone).
EIO = """
import builtins, errno, os, sys
_target = os.environ.get("BANDITREPRO_TEST_EIO")
if _target:
    _open = builtins.open

    def open(file, *args, **kwargs):
        if (isinstance(file, (str, os.PathLike)) and os.fspath(file).endswith(_target)
                and sys._getframe(1).f_globals.get("__name__", "").startswith("numpy")):
            raise OSError(errno.EIO, os.strerror(errno.EIO), os.fspath(file))
        return _open(file, *args, **kwargs)

    builtins.open = open
"""


def test_corrupt_files_are_removed_and_named_and_an_io_error_deletes_nothing(test_run, tmp_path):
    """A shard cut short, a summary with a flipped byte and a shard that cannot be read (EIO), each read by a
    job that must run (the figures drawing them removed from the store): with --keep-going each fails with
    one line naming its file; the corrupt ones are removed, the unreadable one is kept, nothing else is
    touched and nothing is published. The same command again computes the removed shard alone, makes the
    summaries from the shards there, and the claims are as before."""
    project = clone(test_run[0], tmp_path / "copy")
    results = project / TEST_RESULTS
    plan = plan_of(project, TEST_CONFIG)
    cells = {"cut": "sushi16/T2000/btm", "eio": "mslr30/T2000/rucb"}
    # the corrupt summary: one drawn only by figures that draw neither shard (those figures cannot start)
    near = [f["drawn"] for f in plan["figures"].values() if set(cells.values()) & set(f["drawn"])]
    cells["flipped"] = min(c for f in plan["figures"].values() for c in f["drawn"]
                           if not any(c in d for d in near) and c.split("/")[0] not in plan["optional"])
    (cut,) = (project / s for s in plan["cells"][cells["cut"]]["shards"])
    (eio,) = (project / s for s in plan["cells"][cells["eio"]]["shards"])
    flipped = project / plan["cells"][cells["flipped"]]["summary"]
    for c in ("cut", "eio"):
        (project / plan["cells"][cells[c]]["summary"]).unlink()
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0xFF
    flipped.write_bytes(bytes(data))
    for f in plan["figures"].values():
        if set(cells.values()) & set(f["drawn"]):
            for path in f["store"]:
                (project / path).unlink()
    before, files = computed(project), mtimes(results)
    published = {p: files[p] for p in files if f"{TEST_RESULTS}/{p}" in plan["published"]}
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(EIO)
    env = {"PYTHONPATH": f"{project / 'src'}:{inject}", "BANDITREPRO_TEST_EIO": str(eio.relative_to(project))}
    r = smk(*TEST, "--cores", "2", "--keep-going", cwd=project, env=env)
    out = r.stdout + r.stderr
    assert r.returncode != 0
    # each failure's one line (under Snakemake's "RuleException ... in file ...:" header), naming its file
    lines = out.splitlines()
    rel = {k: str(p.relative_to(project)) for k, p in (("cut", cut), ("flipped", flipped), ("eio", eio))}
    assert [ln for ln in lines if ln.startswith(f"corrupt cell {rel['cut']} removed (")], out[-3000:]
    assert [ln for ln in lines if ln.startswith(f"corrupt summary {rel['flipped']} removed (")], out[-3000:]
    assert [ln for ln in lines if ln.startswith(f"{rel['eio']}: I/O error: {os.strerror(errno.EIO)} (errno EIO); "
                                                "nothing deleted")], out[-3000:]
    # and no other job: the two summaries and the figures drawing the corrupt one. The first to read it removes
    # it; a reader started before that finds it gone ("summary not found", a failed job), one Snakemake starts
    # after it is not run at all (its input is missing): how many of the others fail depends on the schedule
    readers = [f for f in plan["figures"].values() if cells["flipped"] in f["drawn"]]
    failed = [ln for ln in lines if ln.startswith("banditrepro: job failed")]
    assert len([ln for ln in failed if ln.startswith("banditrepro: job failed: rule summarize_cell;")]) == 2, failed
    drawing = [ln for ln in failed if any(p in ln for f in readers for p in f["store"])]
    assert 1 <= len(drawing) <= len(readers) and len(failed) == 2 + len(drawing), out[-3000:]
    assert not cut.exists() and not flipped.exists() and eio.exists()
    # nothing else removed or rewritten; nothing published (rule all did not run)
    after = mtimes(results)
    gone = {str(p.relative_to(results)) for p in (cut, flipped)}
    assert set(files) - set(after) == gone
    assert {p: after[p] for p in published} == published
    assert computed(project) == before

    r = smk(*TEST, "--cores", "2", cwd=project)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert computed(project) == before + [rel["cut"][len(TEST_RESULTS) + 1:]]
    assert all((project / plan["cells"][c]["summary"]).exists() for c in cells.values())
    assert (results / "claims.csv").read_bytes() == (test_run[0] / TEST_RESULTS / "claims.csv").read_bytes()
    assert Path(eio).exists()
