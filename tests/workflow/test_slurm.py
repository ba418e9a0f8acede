"""The SLURM profile, without SLURM: what a dry run through profiles/slurm plans.

The real single-node SLURM runs, with faults injected, are in tests/workflow/test_slurm_faults.py.
"""

from __future__ import annotations

import re

import yaml

from tests.workflow.common import job_counts
from tests.workflow.slurm_harness import CONFIG, PROFILE, always_there, planned_batches, smk


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
