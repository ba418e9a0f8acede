"""Config validation (banditrepro.workflow.config): one-line errors naming key and value, defaults filled in;
and the same lines from `snakemake -n` (no traceback)."""

import pytest
import yaml

from banditrepro.workflow.config import ConfigError, apply_defaults, check_config, error_line
from tests.workflow.common import ROOT, error_lines, smk

SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"


def test_check_config_fills_defaults_without_sharing_them():
    a, b = {}, {}
    check_config(a, SCHEMA)
    check_config(b, SCHEMA)
    assert a["runs"] >= 1 and a["results_dir"] == "results" and a["runs_per_shard"] == "auto"
    a["papers"].append("x")  # a default is a fresh copy per config
    assert "x" not in b["papers"]


def test_nested_defaults_are_filled():
    schema = {"properties": {"download": {"type": "object", "default": {},
                                          "properties": {"retries": {"default": 3}}}}}
    doc = {}
    apply_defaults(schema, doc)
    assert doc == {"download": {"retries": 3}}


@pytest.mark.parametrize("cfg, words", [
    ({"runz": 3}, ["unknown key runz", "runs"]),
    ({"runs": 0}, ["runs = 0"]),
    ({"runs_per_shard": "often"}, ["runs_per_shard", '"often"', "expected"]),
    ({"results_dir": "/tmp/x"}, ["results_dir", "/tmp/x", "relative folder"]),
    ({"download": {"retriez": 1}}, ["unknown key download.retriez"]),
    ({"batch_minutes": 0}, ["batch_minutes = 0"]),
    ({"batch_minutes": "long"}, ["batch_minutes", "long"]),
    ({"shard_seconds": 0}, ["shard_seconds = 0"]),
    ({"partition_minutes": 0}, ["partition_minutes"]),
])
def test_error_line_names_key_and_value(cfg, words):
    schema = yaml.safe_load(SCHEMA.read_text())
    line = error_line(schema, cfg)
    assert line and "\n" not in line and all(w in line for w in words), line
    with pytest.raises(ConfigError):
        check_config(cfg, SCHEMA)


@pytest.mark.workflow
def test_config_errors_are_one_line_naming_key_and_value(tmp_path):
    for text, key, value in (("runs: 2\nrunz: 3\n", "runz", "runz"), ("runs: 0\n", "runs", "0"),
                             ("runs_per_shard: often\n", "runs_per_shard", "often"),
                             ("results_dir: /tmp/x\n", "results_dir", "/tmp/x"),
                             ("batch_minutes: -5\n", "batch_minutes", "-5")):
        cfg = tmp_path / "c.yaml"
        cfg.write_text(text)
        r = smk("-n", "--directory", str(tmp_path), "--configfile", str(cfg))
        lines = error_lines(r)
        assert r.returncode != 0 and len(lines) == 1, lines
        assert key in lines[0] and value in lines[0] and "Traceback" not in r.stderr


@pytest.mark.workflow
def test_a_claim_kind_typo_fails_the_dry_run_naming_figure_and_claim(tmp_path):
    manifest = tmp_path / "c2b.yaml"
    text = (ROOT / "config/figures/c2b.yaml").read_text()
    doc = yaml.safe_load(text)
    fig_id, fig = next((k, f) for k, f in doc["c2b"]["figures"].items() if f.get("claims"))
    claim = fig["claims"][0]
    claim["test"]["kind"] += "z"
    manifest.write_text(yaml.safe_dump(doc))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"manifest: {manifest}\npapers: [c2b]\n")
    r = smk("-n", "--directory", str(tmp_path), "--configfile", str(cfg))
    lines = error_lines(r)
    assert r.returncode != 0 and len(lines) == 1, lines
    assert f"c2b/{fig_id}" in lines[0] and claim["id"] in lines[0] and claim["test"]["kind"] in lines[0]


@pytest.mark.workflow
def test_unknown_algorithm_in_manifest_is_named(tmp_path):
    manifest = tmp_path / "figures.yaml"
    manifest.write_text((ROOT / "config/figures/c2b.yaml").read_text().replace("name: btm", "name: btmx", 1))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"manifest: {manifest}\n")
    r = smk("-n", "--directory", str(tmp_path), "--configfile", str(cfg))
    assert r.returncode != 0 and "unknown algorithm 'btmx'" in r.stdout + r.stderr


def test_the_profiles_cluster_mode_is_merged_unless_the_config_sizes_its_own_batches(tmp_path, monkeypatch):
    """build_plan(cluster_minutes=...): the SLURM profile's batch size (engine.profile_minutes) becomes the
    config's batch_minutes when the config sets none (null counts as none); a size the config sets wins, the
    deprecated job_minutes too."""
    from banditrepro.workflow.config import apply_cluster_mode
    from banditrepro.workflow.plan import build_plan

    assert apply_cluster_mode({}, 20) == {"batch_minutes": 20}
    assert apply_cluster_mode({"batch_minutes": None}, 20) == {"batch_minutes": 20}
    assert apply_cluster_mode({"batch_minutes": 5}, 20) == {"batch_minutes": 5}
    assert apply_cluster_mode({"job_minutes": 5}, 20) == {"job_minutes": 5}
    assert apply_cluster_mode({}, None) == {}
    monkeypatch.chdir(tmp_path)
    test = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    plan = build_plan(dict(test), ROOT, scan=False, cluster_minutes=20)
    assert plan.cluster and plan.config["batch_minutes"] == 20
    assert build_plan({**test, "batch_minutes": 7}, ROOT, scan=False, cluster_minutes=20).config["batch_minutes"] == 7
    assert not build_plan(dict(test), ROOT, scan=False).cluster
