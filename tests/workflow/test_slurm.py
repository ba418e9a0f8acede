"""The SLURM profile: what a dry run through profiles/slurm plans (without SLURM), and ``banditrepro settle``
through it on a real single-node SLURM (BANDITREPRO_SLURM_TEST=1, as .ci/run sets; otherwise skipped).

The real single-node SLURM runs of the whole test config, with faults injected, are in
tests/workflow/test_slurm_faults.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.workflow.common import copy_project, job_counts
from tests.workflow.slurm_harness import (
    CONFIG,
    MIRROR,
    PROFILE,
    RUN_TIMEOUT,
    always_there,
    kill9,
    make_profile,
    planned_batches,
    smk,
    submissions,
    wait_for,
)


def test_profile_is_valid_and_every_job_gets_site_settings_and_rule_resources(tmp_path):
    """A dry-run through profiles/slurm: Snakemake 9 accepts every key, the executor is the SLURM plugin's,
    every job carries the profile's partition and the runtime/mem_mb its rule sets (not the fallbacks), and
    the batches are the plan's (`banditrepro estimate`'s), each with its spec written by a local job first."""
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    assert "slurm_partition" in profile["default-resources"]
    r = smk("-n", "--directory", str(tmp_path), "--workflow-profile", str(PROFILE), *CONFIG)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    jobs = re.findall(r"^(?:rule|checkpoint) (\w+):\n(?:    .*\n)*?    resources: (.*)$", r.stdout, re.M)
    rules = {rule for rule, _ in jobs}
    # figures and what reads them come after the optional datasets' probes (a checkpoint): not in a first dry run
    assert rules >= {"fetch_raw", "probe_dataset", "prepare_dataset", "batch_spec", "simulate", "summarize_cell"}
    # in cluster mode (the profile's set-resources, kept with a --configfile) the shards come in the plan's
    # batches, far fewer than cells; those of a dataset still to be probed come once it is known to be there
    batches = [rule for rule, _ in jobs if rule == "simulate"]
    assert len(batches) == len(always_there(*planned_batches(PROFILE))) and 1 <= len(batches) <= 12
    assert sum(rule == "batch_spec" for rule, _ in jobs) == len(batches)
    assert len(batches) < sum(rule == "summarize_cell" for rule, _ in jobs) / 5
    partition = profile["default-resources"]["slurm_partition"]
    for rule, res in jobs:
        assert f"slurm_partition={partition}" in res, (rule, res)
        assert re.search(r"\bmem_mb=\d+", res) and re.search(r"\bruntime=\d+", res), (rule, res)
    # resources come from the rules: e.g. a summary asks for less memory and time than the profile's fallbacks
    summary = next(res for rule, res in jobs if rule == "summarize_cell")
    assert int(re.search(r"\bmem_mb=(\d+)", summary).group(1)) < profile["default-resources"]["mem_mb"]
    assert int(re.search(r"\bruntime=(\d+)", summary).group(1)) < profile["default-resources"]["runtime"]


def test_forced_preparation_of_the_default_config_plans_batches_not_shards(tmp_path):
    """-R prepare_dataset on the default config through profiles/slurm plans the shards in the batches a first
    run plans (sized by work, at most 12), never one job per shard. (On a folder whose shards exist it plans
    none: tests/workflow/test_slurm_faults.py.)"""
    r = smk("-n", "--directory", str(tmp_path), "--workflow-profile", str(PROFILE), "-R", "prepare_dataset")
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    forced = job_counts(r.stdout)
    first = always_there(*planned_batches(PROFILE, configfiles=()))
    assert 1 <= forced["simulate"] == len(first) <= 12, (len(first), forced)
    assert forced["batch_spec"] == forced["simulate"]


# --- banditrepro settle through the SLURM profile, on a real single-node SLURM (BANDITREPRO_SLURM_TEST=1) -----

# The narrowed test config of tests/workflow/test_settle.py (Winner Stays at T = 500, first round 20, max runs
# 40): two rounds, the second extending only the cells of the claims 20 runs left undecided.
SETTLE = ["--configfile", ".test/config/config.yaml", "--config", f"data_mirrors=['{MIRROR}']", "papers=[winner-stays]",
          "max_horizon=500", "--first-round", "20", "--max-runs", "40"]
SETTLED = "results/test/claims-settled.csv"
# A settle killed between rounds: round 2's snakemake is never started. settle_run.snakemake is wrapped so that
# its second call (round 2) says so and waits there to be killed, as a settle whose host went down after
# writing round 1's state would; the code that runs is otherwise the command's own.
_PARKED_SETTLE = """
import sys, time
from pathlib import Path
from banditrepro import settle_run
from banditrepro.cli import main
real, calls, parked = settle_run.snakemake, [], Path(sys.argv[1])
def snakemake(*args, **kwargs):
    calls.append(1)
    if len(calls) == 2:
        parked.write_text("round 2 about to start")
        time.sleep(600)
    return real(*args, **kwargs)
settle_run.snakemake = snakemake
sys.exit(main(sys.argv[2:]))
"""


def settle_command(proj: Path, *extra: str, parked: Path | None = None) -> list[str]:
    head = [sys.executable, "-c", _PARKED_SETTLE, str(parked)] if parked else [sys.executable, "-m", "banditrepro"]
    return [*head, "settle", "--project", str(proj), *SETTLE, *extra]


def cluster_profile(base: Path) -> Path:
    """profiles/slurm for the CI cluster (the partition), polling squeue (no slurmdbd here), 2 s before the
    first status check (each later one 10 s further, the plugin's back-off) and every job's log kept."""
    profile = make_profile(base)
    settings = yaml.safe_load((profile / "config.yaml").read_text())
    settings.update({"slurm-status-command": "squeue", "slurm-init-seconds-before-status-checks": 2,
                     "slurm-keep-successful-logs": True})
    (profile / "config.yaml").write_text(yaml.safe_dump(settings))
    return profile


@pytest.fixture(scope="module")
def settled_on_slurm(slurm_cluster, tmp_path_factory):
    """The narrowed settle through the SLURM profile, killed (kill -9) between its rounds and run again, beside
    the same settle run locally (default profile) at the same time: the cluster run mostly waits."""
    base = tmp_path_factory.mktemp("settle-slurm")
    on_slurm, local = copy_project(base / "slurm"), copy_project(base / "local")
    env = {**slurm_cluster, "SBATCH_LOG": str(base / "sbatch.log"), "PYTHONPATH": str(on_slurm / "src")}
    profile, parked = cluster_profile(base), base / "parked"
    start = time.monotonic()
    local_log = open(base / "local.log", "w")
    reference = subprocess.Popen(settle_command(local), cwd=local, stdout=local_log, stderr=subprocess.STDOUT,
                                 env={**os.environ, "PYTHONPATH": str(local / "src")})
    try:
        with open(base / "first.log", "w") as out:
            first = subprocess.Popen(settle_command(on_slurm, "--workflow-profile", str(profile), parked=parked),
                                     cwd=on_slurm, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            wait_for(lambda: parked.exists() or first.poll() is not None, RUN_TIMEOUT, "settle's round 1 on SLURM")
            assert parked.exists(), (base / "first.log").read_text()[-4000:]
            state1 = json.loads((on_slurm / "results/test/settle/state.json").read_text())
            round1 = submissions(env)
        finally:
            kill9(first) if first.poll() is None else None
        resumed = subprocess.run(["timeout", "-s", "INT", "-k", "30", str(RUN_TIMEOUT),
                                  *settle_command(on_slurm, "--workflow-profile", str(profile))], cwd=on_slurm,
                                 capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT + 60)
        assert resumed.returncode == 0, (resumed.stdout + resumed.stderr)[-4000:]
        took = time.monotonic() - start
        assert reference.wait(timeout=RUN_TIMEOUT) == 0, (base / "local.log").read_text()[-4000:]
    finally:
        if reference.poll() is None:
            reference.kill()
        local_log.close()
    print(f"settle through SLURM: round 1, kill -9, resumed to the end: {took:.0f} s; with the local settle "
          f"beside it: {time.monotonic() - start:.0f} s")
    return {"proj": on_slurm, "local": local, "state1": state1, "round1": round1, "all": submissions(env),
            "out": resumed.stdout, "env": env}


def state_of(proj: Path) -> dict:
    return json.loads((proj / "results/test/settle/state.json").read_text())


def test_settle_through_slurm_submits_a_handful_of_batches_per_round(settled_on_slurm):
    """Round 1 submits the plan's batches of the narrowed config, one per dataset; round 2 only batches of the
    datasets of the cells it extends (the cells of undecided claims), a handful however many cells grow."""
    run = settled_on_slurm
    state = state_of(run["proj"])
    assert [r["round"] for r in state["rounds"]] == [1, 2], state["rounds"]
    round1, round2 = run["round1"], run["all"][len(run["round1"]):]
    assert all(s["comment"].startswith("rule_simulate_wildcards_") for s in run["all"]), run["all"]
    datasets = {c.split("/")[0] for c in state["rounds"][0]["cell_runs"]}
    assert sorted(s["batch"].rpartition("-")[0] for s in round1) == sorted(datasets)
    grown = {c for c, n in state["rounds"][1]["cell_runs"].items() if n != state["rounds"][0]["cell_runs"][c]}
    assert grown and {s["batch"].rpartition("-")[0] for s in round2} == {c.split("/")[0] for c in grown}
    assert 1 <= len(round2) <= len({c.split("/")[0] for c in grown}) < len(grown)
    print(f"settle through SLURM: round 1 {len(round1)} submissions ({len(state['rounds'][0]['cell_runs'])} "
          f"cells), round 2 {len(round2)} ({len(grown)} cells extended)")


def test_settle_through_slurm_resumes_after_a_kill_between_rounds(settled_on_slurm):
    """kill -9 after round 1's state was written, before round 2 began: the same command resumes at round 2
    (round 1 kept, not redone: none of its batches submitted again) and finishes."""
    run = settled_on_slurm
    state1, state = run["state1"], state_of(run["proj"])
    assert len(state1["rounds"]) == 1 and state1["stopped"] is None
    assert state["rounds"][0] == state1["rounds"][0] and state["stopped"]
    assert "round 2:" in run["out"] and "round 1:" not in run["out"]
    again = {s["batch"] for s in run["all"][len(run["round1"]):]} & {s["batch"] for s in run["round1"]}
    assert not again, again


def test_settle_through_slurm_ends_as_the_same_settle_run_locally(settled_on_slurm):
    """The same claims-settled.csv byte for byte, the same decisions, rounds and per-cell runs."""
    run = settled_on_slurm
    assert (run["proj"] / SETTLED).read_bytes() == (run["local"] / SETTLED).read_bytes()
    on_slurm, local = state_of(run["proj"]), state_of(run["local"])
    assert on_slurm["claims"] == local["claims"] and on_slurm["stopped"] == local["stopped"]
    assert [r["cell_runs"] for r in on_slurm["rounds"]] == [r["cell_runs"] for r in local["rounds"]]
    assert [r["undecided"] for r in on_slurm["rounds"]] == [r["undecided"] for r in local["rounds"]]
