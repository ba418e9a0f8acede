"""The test config through profiles/slurm on a real single-node SLURM, with the faults a cluster brings.

One cluster run carries the faults in turn, injected from outside as a cluster would (ci/slurm/, root). The
two largest batches are held after KEPT shards (a live process holds and renews the claim of the next one),
then: (a) the first is requeued (`scontrol requeue`: SLURM runs it again under the same job id, as after a
preemption or a node failure) with, on its next shard, a claim its "previous run on another node" left, not
renewed: it resumes and takes that claim over within a minute (docs/decisions.md#shard-leases); (b) the
second, stuck like a batch on a slow node, gets its time limit shrunk to 1 minute (`scontrol update
TimeLimit=1`), so SLURM ends it TIMEOUT (SIGTERM, then SIGKILL: what `scancel` does too, so this one fault
stands for both); its retry meets a claim a run on another login node left and takes it over; (c) as soon as
Snakemake has resubmitted it, the main Snakemake process is killed (`kill -9`) while its job is queued or
running, and README's recovery is run: `snakemake --unlock`, then the same command. Then (d) the same
command with `-R prepare_dataset`, and a local run in the same folder. Every step is checked against a
local run of the test config (tests/workflow/conftest.py) and against what SLURM and the shards log say:
which job computed which shard, how many submissions, which time limits. They run only when
BANDITREPRO_SLURM_TEST=1 (.ci/run sets it); asked for but impossible, they fail instead of skipping.
"""

from __future__ import annotations

import collections
import re
import subprocess
import time

import pytest

from tests.workflow import slurm_harness as h

pytestmark = pytest.mark.workflow


KEPT = 5  # shards a faulted batch finishes before it is stuck (at the claim of its 6th shard)
# age of the claim the requeued batch's earlier run left (seconds): it goes stale (STALE = 60 s) soon after the
# requeued job starts, which keeps the step short; a claim left just now would cost a minute more
REQUEUE_AGE = 45


@pytest.fixture(scope="module")
def faulted_run(slurm_cluster, tmp_path_factory):
    env = {**slurm_cluster}
    base = tmp_path_factory.mktemp("slurm")
    env["SBATCH_LOG"] = str(base / "sbatch.log")
    profile, work = h.make_profile(base), base / "work"
    cmd = h.cluster_command(work, profile)
    # A batch of the test config computes its shards in well under a second, faster than any kill: the two
    # largest batches are made to stop after KEPT shards instead, at a shard whose claim a live process on
    # this host holds (as an orphan job of a killed run would): the batch finished KEPT shards and waits.
    plan = h.planned_batches()
    requeued_batch, slow_batch = sorted(plan, key=lambda b: -len(plan[b]))[:2]
    holders = {b: h.hold_claim(work, plan[b][KEPT][0]) for b in (requeued_batch, slow_batch)}
    # left by a run on another login node, never renewed: the slow batch's retry meets it
    h.plant_claim(work, plan[slow_batch][KEPT + 1][0], "login-2")
    before = {j["id"] for j in h.squeue(env)}
    start = time.monotonic()
    first_log = base / "first-run.log"
    with open(first_log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=h.ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        def stuck_job(batch):
            """The job of ``batch`` once it has finished KEPT shards (and waits at the held claim)."""
            own = {rel for _, rel in plan[batch]}
            jobs = [j for s, j in h.shards_log(work) if s in own]
            return jobs[0] if len(jobs) >= KEPT else None

        def state_is(job, state):
            return lambda: h.job_state(env, job) == state

        # (a) requeue of a running batch that finished KEPT shards. Its next shard holds the claim its run
        # before the requeue left on another node, named by the same SLURM job id, last renewed REQUEUE_AGE
        # seconds ago (a preemption, then SLURM's requeue); the holder of its stuck shard then ends. SLURM
        # delays a requeued job's start (~150 s here): set it to now, not our point.
        requeued = h.wait_for(lambda: stuck_job(requeued_batch), 180, "a batch to finish some shards")
        h.plant_claim(work, plan[requeued_batch][KEPT + 1][0], "node-before-requeue", requeued, REQUEUE_AGE)
        h.slurm(env, "scontrol", "requeue", requeued)
        requeued_at = time.monotonic()
        h.wait_for(state_is(requeued, "PENDING"), 60, "the requeued job to be pending", poll=0.5)
        h.slurm(env, "scontrol", "update", f"JobId={requeued}", "StartTime=now")
        h.end_holder(holders[requeued_batch])
        # (b) a batch stuck like on a slow node, its time limit shrunk to 1 minute: SLURM ends it TIMEOUT
        # 60-90 s after its start (slurmctld checks limits every 30 s)
        slow = h.wait_for(lambda: stuck_job(slow_batch), 180, "a second batch to finish some shards")
        h.slurm(env, "scontrol", "update", f"JobId={slow}", "TimeLimit=1")
        h.wait_for(state_is(slow, "TIMEOUT"), 150, "the job to reach its time limit", poll=1)
        h.end_holder(holders[slow_batch])
        # the requeued batch, under its own job id, done well before its limit
        h.wait_for(state_is(requeued, "COMPLETED"), 240, "the requeued job to complete", poll=1)
        requeued_took = time.monotonic() - requeued_at
        # (c) kill -9 of the main process once it has resubmitted the timed-out batch
        h.wait_for(lambda: sum(h.batch_of(s["comment"]) == slow_batch for s in h.submissions(env)) >= 2, 120,
                   "the batch killed at its time limit to be resubmitted", poll=0.2)
        live = [j for j in h.squeue(env) if j["id"] not in before and j["state"] in ("PENDING", "RUNNING")]
        h.kill9(proc)
    finally:
        for p in [proc, *holders.values()]:
            if p.poll() is None:
                h.kill9(p)
    killed_at = len(h.submissions(env))
    locked = h.smk(*cmd[len(h.SNAKEMAKE):], cwd=h.ROOT, env=env)  # the same command, before --unlock
    r = h.smk("--unlock", *cmd[len(h.SNAKEMAKE):], cwd=h.ROOT, env=env)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    r, _ = h.run_cluster(cmd, env)
    out = first_log.read_text() + r.stdout + r.stderr
    took = time.monotonic() - start
    assert r.returncode == 0, f"the run after kill -9 failed (exit {r.returncode}):\n{out[-6000:]}"
    print(f"faulted SLURM run (requeue, time limit, claims of other hosts, kill -9, --unlock, same command): "
          f"{took:.0f} s")
    return {"work": work, "env": env, "out": out, "requeued": requeued, "requeued_batch": requeued_batch,
            "requeued_took": requeued_took,
            "slow": slow, "slow_batch": slow_batch, "live_at_kill": live, "killed_at": killed_at,
            "locked": locked, "submissions": h.submissions(env), "before": before, "cmd": cmd}


def computed_by(run, job=None, batch=None):
    lines = h.shards_log(run["work"])
    shards = set(h.receipts(run["work"])[batch]) if batch else None
    return [s for s, j in lines if (job is None or j == job) and (shards is None or s in shards)]


def test_only_the_simulation_batches_went_through_sbatch(faulted_run):
    subs = faulted_run["submissions"]
    assert subs and all(s["comment"].startswith("rule_simulate_wildcards_") for s in subs), subs
    firsts = list(dict.fromkeys(h.batch_of(s["comment"]) for s in subs))
    receipts = h.receipts(faulted_run["work"])
    # one submission per batch, and the batches are the ones whose receipts the run left
    assert set(firsts) == set(receipts) and 1 <= len(receipts) <= 12, (firsts, sorted(receipts))
    states = {j["id"]: j for j in h.squeue(faulted_run["env"]) if j["id"] not in faulted_run["before"]}
    for s in subs:
        j = states[s["id"]]
        assert (j["partition"], j["name"].split("_")[0]) == (h.PARTITION, "banditrepro"), j
    local = set(re.findall(r"^localrule (\w+):", faulted_run["out"], re.M))
    assert {"fetch_raw", "prepare_dataset", "summarize_cell", "figure", "claims", "report_md"} <= local


def test_a_requeued_batch_resumes_under_its_job_id_and_takes_its_old_claim_over_within_a_minute(faulted_run):
    """Before leases, the requeued job found a claim naming its own SLURM job, which squeue called RUNNING
    (itself), and waited until its time limit; each requeue burned an attempt."""
    run, batch = faulted_run, faulted_run["requeued_batch"]
    assert h.job_state(run["env"], run["requeued"]) == "COMPLETED"
    shards = h.receipts(run["work"])[batch]
    assert sorted(computed_by(run, job=run["requeued"])) == sorted(computed_by(run, batch=batch)) == sorted(shards)
    tries = [s for s in run["submissions"] if h.batch_of(s["comment"]) == batch]
    assert tries[0]["id"] == run["requeued"]
    # the old claim taken over once stale (STALE = 60 s after it was last renewed), the batch done far within
    # its limit; before leases it waited for its limit
    assert run["requeued_took"] < 60 * min(tries[0]["minutes"], 3), run["requeued_took"]
    assert "took over the claim of host node-before-requeue" in h.slurm_logs(run["work"])
    print(f"requeue: done {run['requeued_took']:.0f} s after `scontrol requeue` (limit {tries[0]['minutes']} min)")


def test_a_claim_left_by_another_host_is_taken_over(faulted_run):
    """A run killed on another login node (or container) left a claim no one renews: not waited for 6 hours
    (the old MAX_AGE), taken over once a minute old."""
    run = faulted_run
    logs = h.slurm_logs(run["work"])
    assert "took over the claim of host login-2" in logs, logs[-3000:]


def test_a_batch_killed_at_its_time_limit_retries_with_twice_the_limit(faulted_run):
    """SLURM ends a job at its limit as `scancel` does (SIGTERM, SIGKILL after KillWait): kept shards, a retry
    computing only the rest, with twice the limit."""
    run, batch = faulted_run, faulted_run["slow_batch"]
    assert h.job_state(run["env"], run["slow"]) == "TIMEOUT"
    shards = h.receipts(run["work"])[batch]
    kept = computed_by(run, job=run["slow"])
    assert len(kept) == KEPT < len(shards)
    assert sorted(computed_by(run, batch=batch)) == sorted(shards)
    tries = [s for s in run["submissions"] if h.batch_of(s["comment"]) == batch]
    assert tries[0]["id"] == run["slow"] and tries[1]["minutes"] == 2 * tries[0]["minutes"], tries
    print(f"time limit: {len(kept)} of {len(shards)} shards kept; limits asked "
          f"{[s['minutes'] for s in tries]} min")


def test_after_kill_9_unlock_and_the_same_command_finish_with_no_shard_computed_twice(faulted_run):
    run = faulted_run
    assert run["live_at_kill"], "no job of the run was queued or running when the main process was killed"
    locked = run["locked"].stdout + run["locked"].stderr
    assert run["locked"].returncode != 0 and "--unlock" in locked, locked[-2000:]
    counts = collections.Counter(s for s, _ in h.shards_log(run["work"]))
    assert counts and max(counts.values()) == 1, [s for s, n in counts.items() if n > 1]
    # the log names shards under their seed's folder (cells/seed<s>/), as Layout.cells does
    on_disk = {"/".join(p.relative_to(run["work"] / h.RESULTS / "cells").parts[1:])
               for p in (run["work"] / h.RESULTS / "cells").rglob("runs*.npz")}
    assert set(counts) == on_disk
    print(f"kill -9: {len(run['live_at_kill'])} jobs queued or running at the kill, "
          f"{len(run['submissions']) - run['killed_at']} submissions by the same command after it, "
          f"{len(counts)} shards each computed once")


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
    return {**run, "forced_submissions": h.submissions(run["env"])[n:], "log_before": log_before}


def test_forced_preparation_submits_one_job_per_batch_and_computes_nothing(forced_run, slurm_local_reference):
    subs = forced_run["forced_submissions"]
    assert 1 <= len(subs) <= len(h.receipts(forced_run["work"])) <= 12, subs
    assert (forced_run["work"] / h.SHARDS_LOG).read_text() == forced_run["log_before"]
    h.assert_same_outputs(forced_run["work"], slurm_local_reference)
    print(f"-R prepare_dataset: {len(subs)} submissions, 0 shards computed")


def test_a_local_run_afterwards_computes_no_shard(forced_run, slurm_local_reference):
    """Local batches are about one shard each, so their names differ from the cluster's: a local run in the
    same folder runs its own batches, which find every shard complete."""
    work = forced_run["work"]
    log_before = (work / h.SHARDS_LOG).read_text()
    r = h.smk("--directory", str(work), "--workflow-profile", str(h.ROOT / "profiles/default"), "--cores", "2",
              *h.LOCAL_CONFIG)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert (work / h.SHARDS_LOG).read_text() == log_before
    h.assert_same_outputs(work, slurm_local_reference)
