"""Cluster mode is the SLURM profile's `set-resources: simulate: batch_minutes`, which a user's --configfile
or --config cannot switch off (docs/decisions.md#cluster-mode): read by banditrepro/workflow/engine.py, merged
into the config by banditrepro/workflow/config.py (``apply_cluster_mode``, through ``build_plan``)."""

import io
import shutil
from types import SimpleNamespace

import pytest
import yaml

from banditrepro.workflow import engine
from banditrepro.workflow.config import apply_cluster_mode
from banditrepro.workflow.plan import build_plan
from tests.workflow.common import ROOT, TEST_CONFIG, job_counts, smk
from tests.workflow.test_cluster import no_slurm_path  # noqa: F401 -- a fixture

PROFILE = ROOT / "profiles/slurm"
MINUTES = yaml.safe_load((PROFILE / "config.yaml").read_text())["set-resources"]["simulate"]["batch_minutes"]


def test_the_profile_sets_cluster_mode_as_a_resource_not_a_config_file():
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    assert "configfile" not in profile and not (PROFILE / "cluster.yaml").exists()
    assert MINUTES == 20


def test_minutes_from_snakemakes_resource_settings():
    from snakemake.cli import parse_set_resources

    parsed = parse_set_resources(["simulate:batch_minutes=20", "simulate:mem_mb=500", "figure:batch_minutes=3"])
    assert engine.minutes_from_resources(parsed) == 20
    assert engine.minutes_from_resources(parse_set_resources(["simulate:batch_minutes=0.5"])) == 0.5
    assert engine.minutes_from_resources({"simulate": {"batch_minutes": 7}}) == 7  # the Python API's mapping
    assert engine.minutes_from_resources(parse_set_resources(["figure:batch_minutes=3"])) is None
    assert engine.minutes_from_resources({}) is None and engine.minutes_from_resources(None) is None
    with pytest.raises(ValueError, match="batch_minutes"):
        engine.minutes_from_resources({"simulate": {"batch_minutes": "soon"}})
    with pytest.raises(ValueError, match="> 0"):
        engine.minutes_from_resources({"simulate": {"batch_minutes": 0}})


def test_a_batch_minutes_the_config_sets_wins_over_the_profile():
    assert apply_cluster_mode({"batch_minutes": None}, 20)["batch_minutes"] == 20
    assert apply_cluster_mode({}, 20)["batch_minutes"] == 20
    assert apply_cluster_mode({"batch_minutes": 5}, 20)["batch_minutes"] == 5
    assert "batch_minutes" not in apply_cluster_mode({"job_minutes": 5}, 20)  # the old name counts
    assert apply_cluster_mode({"batch_minutes": None}, None)["batch_minutes"] is None


def test_without_resource_settings_one_warning_and_the_config_alone(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr(engine, "_warned", set())
    assert engine.profile_minutes(SimpleNamespace()) is None
    assert engine.profile_minutes(SimpleNamespace()) is None
    assert err.getvalue().count("\n") == 1 and "resource_settings" in err.getvalue()
    workflow = SimpleNamespace(resource_settings=SimpleNamespace(overwrite_resources={"simulate": {
        "batch_minutes": 9}}))
    assert engine.profile_minutes(workflow) == 9


@pytest.mark.workflow
def test_a_users_configfile_and_config_keep_the_profiles_batches(tmp_path):
    """The default config named explicitly (as anyone's own file) plus --config runs=2 under profiles/slurm:
    the plan makes batches of the profile's batch_minutes (~10 for the default config), not one per shard."""
    mine = tmp_path / "my.yaml"
    shutil.copy(ROOT / "config/config.yaml", mine)
    r = smk("-n", "--directory", str(tmp_path / "w"), "--workflow-profile", str(PROFILE), "--configfile", str(mine),
            "--config", "runs=2", timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    counts = job_counts(r.stdout)
    submitted = counts["simulate"]
    assert counts["batch_spec"] == submitted  # each batch's spec, written by a local job, is what its node reads
    cfg = yaml.safe_load(mine.read_text())
    cfg.update(runs=2)
    plan = build_plan(cfg, ROOT, scan=False, cluster_minutes=MINUTES)  # as common.smk merges the profile's
    assert plan.cluster and plan.config["batch_minutes"] == MINUTES
    optional = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d)}  # probed first, not planned yet
    assert submitted == len([b for b in plan.batches if b.dataset not in optional])
    assert 5 <= submitted <= 15 and submitted < len(plan.all_shards()) / 5, submitted


@pytest.mark.workflow
def test_a_users_configfile_without_sbatch_stops_in_one_line(tmp_path, no_slurm_path):  # noqa: F811
    r = smk("--directory", str(tmp_path / "w"), "--workflow-profile", str(PROFILE), "--configfile",
            str(ROOT / TEST_CONFIG), "--config", "runs=2", env=no_slurm_path, timeout=300)
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    assert r.returncode != 0 and "banditrepro: cluster mode" in lines[-1], lines[-10:]
    assert [ln for ln in lines if "sbatch" in ln] == lines[-1:]
    assert not (tmp_path / "w" / ".snakemake" / "slurm_logs").exists() and not (tmp_path / "w" / "data").exists()
