"""The test config through profiles/slurm on a real single-node SLURM, with the faults a cluster brings.

One cluster run carries the faults at once, injected from outside as a cluster would (ci/slurm/, root). Five
batches park before their shard KEPT (the harness's PauseHook: KEPT shards finished, the next one not begun,
like a batch on a slow node), then each gets its fault:

- *scancel*: a real `scancel` of the running job (SIGTERM, SIGKILL after KillWait): its KEPT shards are kept,
  Snakemake's retry asks twice the time limit and computes only the rest;
- *time limit*: `scontrol update TimeLimit=1`, SLURM ends the job TIMEOUT 60-90 s after its start; likewise;
- *requeue*: `scontrol requeue` (SLURM runs the job again under the same job id, as after a preemption or a
  node failure; its start set to now, SLURM's own delay is not the point): the restart skips the KEPT shards
  and computes the next at once (no lease to go stale any more);
- *two writers*: while the job is parked, the same batch is run by hand from its spec (a second writer of
  every shard from KEPT on), then the job goes on and writes shard KEPT again: one file, the same bytes;
- *orphan*: once everything else is done, the main Snakemake process is killed (`kill -9`) while this job
  is its only live one; README's recovery follows (`snakemake --unlock`, then the same command), which
  computes the unfinished shards at once, and the orphan, released afterwards, rewrites its shard KEPT.

Then the same command with `-R prepare_dataset`, and a local run in the same folder. Every step is checked
against a local run of the test config (tests/workflow/conftest.py) and against what SLURM, the sbatch log,
the shards log and the hook's trace say: which job computed which shard and when, how many submissions,
which time limits, which spec each node read. They run only when BANDITREPRO_SLURM_TEST=1 (.ci/run sets it);
asked for but impossible, they fail instead of skipping.
"""

from __future__ import annotations

import collections
import hashlib
import re
import subprocess
import threading
import time

import pytest

from tests.workflow import slurm_harness as h

pytestmark = pytest.mark.workflow

KEPT = 3  # shards a faulted batch finishes before it parks (before its 4th)
FAULTS = ("scancel", "time limit", "requeue", "two writers", "orphan")
INJECT_TIMEOUT = 360  # seconds for every fault to be injected (the time limit alone takes 60-90 s)
# seconds from a batch body's start (it reads its spec) to its first shard computed: loading its kernels from
# the numba cache and skipping the shards that exist. A requeued or resumed batch has nothing to wait for (no
# lease: the old one went stale 60 s after its holder's last renewal)
BODY_START = 15
RESUME = 60  # seconds from the same command after kill -9 and --unlock to its first shard (measured: 34-37 s
# on 2 cores shared with other work, load 9)
LIVE = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "REQUEUE_HOLD", "RESIZING", "SUSPENDED")


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def faulted_run(slurm_cluster, tmp_path_factory, request):
    base = tmp_path_factory.mktemp("slurm")
    hook = h.PauseHook(base)
    env = hook.env({**slurm_cluster, "SBATCH_LOG": str(base / "sbatch.log")})
    profile, work = h.make_profile(base), base / "work"
    cmd = h.cluster_command(work, profile)
    plan, optional = h.planned_batches(profile)
    # one fault per batch, the largest batches of datasets that are always there (an optional one is probed)
    candidates = sorted((b for b in plan if b.rpartition("-")[0] not in optional), key=lambda b: (-len(plan[b]), b))
    faults = dict(zip(FAULTS, candidates))
    assert len(faults) == len(FAULTS) and min(len(plan[b]) for b in faults.values()) > KEPT + 1, plan
    at = {f: plan[b][KEPT][1] for f, b in faults.items()}  # the shard each one parks at
    for shard in at.values():
        hook.arm(shard)
    # what is done before the kill: every shard of an always-available dataset but the orphan's from KEPT on
    unfinished = set(plan[faults["orphan"]][KEPT:])
    others = [s[0] for b, shards in plan.items() if b.rpartition("-")[0] not in optional for s in shards
              if s not in unfinished]
    before = {j["id"] for j in h.squeue(env)}
    facts = {f: {} for f in FAULTS}
    stage = dict.fromkeys(FAULTS, 0)
    first_log = base / "first-run.log"

    def live_jobs():
        return [j for j in h.squeue(env) if j["id"] not in before and j["state"] in LIVE]

    def step(fault):
        """Advance one fault by what can be seen now; stage 2 = injected and released."""
        f, parked = facts[fault], hook.parked(at[fault])
        if stage[fault] == 0 and parked:
            f.update(job=parked["job"], pid=parked["pid"], parked=parked["since"])
            if fault == "scancel":
                h.slurm(env, "scancel", f["job"])
            elif fault == "time limit":
                h.slurm(env, "scontrol", "update", f"JobId={f['job']}", "TimeLimit=1")
            elif fault == "requeue":
                h.slurm(env, "scontrol", "requeue", f["job"])
                f["requeued"] = time.time()
            elif fault == "two writers":
                f["hand"] = h.batch_by_hand(work, profile, faults[fault])
            elif fault == "orphan":
                return  # parked; killed below once everything else is done
            stage[fault] = 1
        elif stage[fault] == 1:
            if fault in ("scancel", "time limit", "requeue") and h.alive(f["pid"]):
                return
            if fault == "scancel" and h.job_state(env, f["job"]) == "CANCELLED":
                hook.release(at[fault])
                stage[fault] = 2
            elif fault == "time limit" and h.job_state(env, f["job"]) == "TIMEOUT":
                hook.release(at[fault])
                stage[fault] = 2
            elif fault == "requeue" and (state := h.job_state(env, f["job"])) in ("PENDING", "RUNNING"):
                hook.release(at[fault])  # the first run's process is gone: its restart is not to park
                if state == "PENDING":  # SLURM holds a requeued job back (~150 s here): not the point
                    r = subprocess.run(["scontrol", "update", f"JobId={f['job']}", "StartTime=now"], env=env,
                                       capture_output=True, text=True, timeout=30)
                    assert r.returncode == 0 or h.job_state(env, f["job"]) != "PENDING", r.stderr
                stage[fault] = 2
            elif fault == "two writers" and f["hand"].poll() is not None:
                f["hand_log"] = f["hand"].stdout.read()
                assert f["hand"].returncode == 0, f["hand_log"][-3000:]
                f["hand_sha"] = sha256(work / plan[faults[fault]][KEPT][0])
                hook.release(at[fault])
                stage[fault] = 2

    def inject():
        while stage["orphan"] == 0:
            assert not stopping.is_set(), "the local reference run failed"
            assert proc.poll() is None, (f"the run ended (exit {proc.returncode}) before its faults were "
                                         f"injected ({stage}):\n{first_log.read_text()[-5000:]}")
            assert time.monotonic() - start < INJECT_TIMEOUT, f"faults not injected in time: {stage}"
            for fault in FAULTS[:-1]:
                step(fault)
            # kill -9 once the orphan is the only job left: every other shard done, no other job live
            if (all(stage[f] == 2 for f in FAULTS[:-1]) and hook.parked(at["orphan"])
                    and all((work / p).exists() for p in others)):
                live = live_jobs()
                if [j["id"] for j in live] == [hook.parked(at["orphan"])["job"]]:
                    facts["orphan"].update(job=live[0]["id"], live_at_kill=live)
                    h.kill9(proc)
                    stage["orphan"] = 1
            time.sleep(0.2)

    def injector():
        try:
            inject()
        except BaseException as exc:  # noqa: BLE001 -- raised in the test's thread below
            failed.append(exc)
            for shard in at.values():  # let every parked job go, so that the cluster empties
                hook.release(shard)
            if proc.poll() is None:
                h.kill9(proc)

    failed, stopping = [], threading.Event()
    with open(first_log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=h.ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
    start = time.monotonic()
    thread = threading.Thread(target=injector, daemon=True)
    thread.start()
    try:
        # the local reference runs meanwhile: the cluster run mostly waits (for SLURM's time limit, for the
        # jobs' start-ups), and this keeps the CI step within its time
        request.getfixturevalue("slurm_local_reference")
    except BaseException:
        stopping.set()
        raise
    finally:
        thread.join()
    if failed:
        raise failed[0]
    injected = time.monotonic() - start
    killed_at = len(h.submissions(env))
    args = cmd[len(h.SNAKEMAKE):]
    locked = h.smk(*args, env=env)  # the same command, before --unlock
    r = h.smk("--unlock", *args, env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    resumed_at = time.time()
    resumed, resume_took = h.run_cluster(cmd, env)
    hook.release(at["orphan"])  # the orphan goes on: it writes its shard KEPT again, then skips the rest
    try:
        assert resumed.returncode == 0, (f"the run after kill -9 failed (exit {resumed.returncode}):\n"
                                         f"{(resumed.stdout + resumed.stderr)[-6000:]}")
    finally:
        h.wait_for(lambda: h.job_state(env, facts["orphan"]["job"]) not in LIVE, 120, "the orphan to end", poll=0.5)
    out = first_log.read_text() + resumed.stdout + resumed.stderr
    print(f"faulted SLURM run: faults injected and the orphan alone left after {injected:.0f} s; "
          f"the same command after kill -9 and --unlock: {resume_took:.0f} s")
    return {"work": work, "env": env, "out": out, "plan": plan, "optional": optional, "faults": faults, "at": at,
            "facts": facts, "killed_at": killed_at, "locked": locked, "resumed_at": resumed_at,
            "submissions": h.submissions(env), "trace": hook.trace(), "before": before, "cmd": cmd}


def ids(shards) -> list[str]:
    return [shard_id for _, shard_id in shards]


def computed_by(run, job) -> list[str]:
    """The shards SLURM job ``job`` (or '-': a process outside SLURM) computed, in order."""
    return [s for s, _, j in h.shards_log(run["work"]) if j == job]


def tries(run, fault) -> list[dict]:
    return [s for s in run["submissions"] if s["batch"] == run["faults"][fault]]


def first_compute_after(run, job, since) -> dict:
    return next(t for t in run["trace"] if t["event"] == "compute" and t["job"] == job and t["time"] > since)


def body_start(run, job, since) -> float:
    """When the body of job ``job``'s run after ``since`` began: it reads its spec (jobs.simulate)."""
    return next(t["time"] for t in run["trace"] if t["event"] == "read_spec" and t["caller"] == "simulate"
                and t["job"] == job and t["time"] > since)


def submitted_datasets(run) -> set[str]:
    """The batches a first run submits: every planned one, but those of an optional dataset found unavailable."""
    import json

    status = {p.stem: json.loads(p.read_text())["available"] for p in (run["work"] / "data/status").glob("*.json")}
    return {b for b in run["plan"] if status.get(b.rpartition("-")[0], True)}


def test_each_planned_batch_is_submitted_and_its_node_reads_the_spec_batch_spec_wrote(faulted_run):
    run = faulted_run
    subs, faults, plan = run["submissions"], run["faults"], run["plan"]
    assert subs and all(s["comment"].startswith("rule_simulate_wildcards_") for s in subs), subs
    first, resumed = subs[:run["killed_at"]], subs[run["killed_at"]:]
    # the plan's batches (banditrepro estimate's count), each once but the two that failed (and were retried)
    expected = submitted_datasets(run)
    retried = {faults["scancel"], faults["time limit"]}
    assert collections.Counter(s["batch"] for s in first) == {b: 1 + (b in retried) for b in expected}
    # after kill -9 one batch: the orphan's unfinished shards, planned afresh
    assert len(resumed) == 1, resumed
    rest = resumed[0]["batch"]
    specs = h.specs(run["work"])
    assert specs[rest]["paths"] == ids(plan[faults["orphan"]][KEPT:])
    for batch in expected:
        assert specs[batch]["paths"] == ids(plan[batch]), batch
    for batch in expected | {rest}:
        # written by the local rule batch_spec before the batch was first submitted
        assert f"localrule batch_spec:\n    output: {h.RESULTS}/batches/{batch}.json\n" in run["out"], batch
        submitted = min(s["time"] for s in subs if s["batch"] == batch)
        assert (run["work"] / h.RESULTS / "batches" / f"{batch}.json").stat().st_mtime <= submitted
    # every job (every try, the requeued one's runs) read its batch's spec in its body, on the node
    reads = {(t["job"], t["batch"]) for t in run["trace"] if t["event"] == "read_spec" and t["caller"] == "simulate"
             and t["found"] and t["path"] == f"{h.RESULTS}/batches/{t['batch']}.json"}
    assert {(s["id"], s["batch"]) for s in subs} <= reads
    states = {j["id"]: j for j in h.squeue(run["env"]) if j["id"] not in run["before"]}
    for s in subs:
        j = states[s["id"]]
        assert (j["partition"], j["name"].split("_")[0]) == (h.PARTITION, "banditrepro"), j
    local = set(re.findall(r"^localrule (\w+):", run["out"], re.M))
    assert {"fetch_raw", "prepare_dataset", "batch_spec", "summarize_cell", "figure", "claims", "report_md"} <= local
    assert "simulate" not in local


@pytest.mark.parametrize("fault,state", [("scancel", "CANCELLED"), ("time limit", "TIMEOUT")])
def test_a_killed_batch_keeps_its_shards_and_its_retry_computes_the_rest_with_twice_the_limit(
        faulted_run, fault, state):
    """A real scancel of a running batch, and SLURM's end of one at its time limit (README: whatever ends
    the job, nothing finished is lost)."""
    run, f = faulted_run, faulted_run["facts"][fault]
    shards = run["plan"][run["faults"][fault]]
    assert h.job_state(run["env"], f["job"]) == state
    first, retry = tries(run, fault)
    assert first["id"] == f["job"] and retry["minutes"] == 2 * first["minutes"], (first, retry)
    assert computed_by(run, f["job"]) == ids(shards[:KEPT])
    assert computed_by(run, retry["id"]) == ids(shards[KEPT:])
    print(f"{fault}: {KEPT} of {len(shards)} shards kept; limits asked {first['minutes']}, {retry['minutes']} min")


def test_a_requeued_batch_resumes_at_once_under_its_job_id(faulted_run):
    """Before, its restart met the claim its first run left and waited for it to go stale (a minute)."""
    run, f = faulted_run, faulted_run["facts"]["requeue"]
    shards = run["plan"][run["faults"]["requeue"]]
    assert h.job_state(run["env"], f["job"]) == "COMPLETED"
    assert [s["id"] for s in tries(run, "requeue")] == [f["job"]]  # submitted once
    assert computed_by(run, f["job"]) == ids(shards)  # every shard once, by its two runs
    restart = body_start(run, f["job"], f["requeued"])
    first = first_compute_after(run, f["job"], f["requeued"])
    assert first["shard"] == ids(shards)[KEPT]
    assert first["time"] - restart < BODY_START, first["time"] - restart
    print(f"requeue: the restart's body computed its first shard {first['time'] - restart:.1f} s after it "
          f"began, {first['time'] - f['requeued']:.0f} s after `scontrol requeue`")


def test_two_writers_of_one_shard_end_with_the_same_bytes_and_the_run_succeeds(faulted_run,
                                                                                 slurm_local_reference):
    run, f = faulted_run, faulted_run["facts"]["two writers"]
    shards = run["plan"][run["faults"]["two writers"]]
    hand = [s for s, pid, j in h.shards_log(run["work"]) if j == "-" and s in ids(shards)]
    # the batch run by hand while its job was parked wrote every shard from KEPT on; the job then wrote
    # shard KEPT again (it had found it missing before it parked) and skipped the rest
    assert hand == ids(shards[KEPT:])
    assert computed_by(run, f["job"]) == ids(shards[:KEPT + 1])
    assert h.job_state(run["env"], f["job"]) == "COMPLETED"
    path = run["work"] / shards[KEPT][0]
    assert sha256(path) == f["hand_sha"] == sha256(slurm_local_reference / shards[KEPT][0])
    print(f"two writers: shard {shards[KEPT][1]} written by hand, then by job {f['job']}: same bytes")


def test_after_kill_9_unlock_and_the_same_command_resume_at_once(faulted_run):
    run, f = faulted_run, faulted_run["facts"]["orphan"]
    shards = run["plan"][run["faults"]["orphan"]]
    assert [j["id"] for j in f["live_at_kill"]] == [f["job"]]  # its job outlived the main process
    locked = run["locked"].stdout + run["locked"].stderr
    assert run["locked"].returncode != 0 and "--unlock" in locked, locked[-2000:]
    (rest,) = run["submissions"][run["killed_at"]:]
    assert computed_by(run, rest["id"]) == ids(shards[KEPT:])
    first = first_compute_after(run, rest["id"], run["resumed_at"])
    began = body_start(run, rest["id"], run["resumed_at"])
    assert first["time"] - began < BODY_START, first["time"] - began
    # the whole command too: its parse, the spec, sbatch and the node's two start-ups (the lease alone was 60 s)
    assert first["time"] - run["resumed_at"] < RESUME, first["time"] - run["resumed_at"]
    # the orphan, let go after the resumed run finished, wrote its shard KEPT again and skipped the rest
    assert computed_by(run, f["job"]) == ids(shards[:KEPT + 1])
    assert h.job_state(run["env"], f["job"]) == "COMPLETED"
    print(f"kill -9: the same command computed its first shard {first['time'] - run['resumed_at']:.0f} s after "
          f"it started ({first['time'] - began:.1f} s after its batch's body began)")


def test_no_finished_shard_is_computed_again(faulted_run):
    """Every shard on disk is in the shards log once; twice only where two writers were made on purpose (the
    batch run by hand, the orphan let go after the resumed run)."""
    run = faulted_run
    counts = collections.Counter(s for s, _, _ in h.shards_log(run["work"]))
    on_disk = {str(p.relative_to(run["work"] / h.RESULTS)) for p in (run["work"] / h.RESULTS / "cells").rglob("*.npz")}
    assert set(counts) == on_disk
    twice = {run["at"]["two writers"], run["at"]["orphan"]}
    assert {s: n for s, n in counts.items() if n > 1} == dict.fromkeys(twice, 2)
    print(f"{len(counts)} shards, each computed once but the {len(twice)} written twice on purpose")


def test_outputs_equal_those_of_a_local_run(faulted_run, slurm_local_reference):
    h.assert_same_outputs(faulted_run["work"], slurm_local_reference)


@pytest.fixture(scope="module")
def forced_run(faulted_run):
    run = faulted_run
    log_before = (run["work"] / h.SHARDS_LOG).read_text()
    n = len(h.submissions(run["env"]))
    r, took = h.run_cluster([*run["cmd"], "-R", "prepare_dataset"], run["env"])
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]
    print(f"-R prepare_dataset through SLURM: {took:.0f} s")
    return {**run, "forced_submissions": h.submissions(run["env"])[n:], "log_before": log_before, "forced": r}


def test_forced_preparation_submits_nothing_and_computes_no_shard(forced_run, slurm_local_reference):
    """The data re-derived with the same bytes keeps its name, so every shard is there: no batch at all
    (before, one submission per batch, each finding its shards complete)."""
    out = forced_run["forced"].stdout + forced_run["forced"].stderr
    assert len(re.findall(r"^localrule prepare_dataset:", out, re.M)) == len(list(
        (forced_run["work"] / "data/prepared").glob("*/*.json")))
    assert forced_run["forced_submissions"] == []
    assert (forced_run["work"] / h.SHARDS_LOG).read_text() == forced_run["log_before"]
    h.assert_same_outputs(forced_run["work"], slurm_local_reference)


def test_a_local_run_afterwards_computes_no_shard(forced_run, slurm_local_reference):
    """Shards are named alike on a cluster and locally: a local run in the same folder finds them all."""
    work = forced_run["work"]
    log_before = (work / h.SHARDS_LOG).read_text()
    r = h.smk("--directory", str(work), "--workflow-profile", str(h.ROOT / "profiles/default"), "--cores", "2",
              *h.LOCAL_CONFIG)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert (work / h.SHARDS_LOG).read_text() == log_before
    h.assert_same_outputs(work, slurm_local_reference)
