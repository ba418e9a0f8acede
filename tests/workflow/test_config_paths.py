"""One config, one shape: the Snakefile, the CLI's estimate, clean and settle, and the sharing commands' plan of a
recorded config all reach ``workflow/config.py``'s ``shape_config`` once and get the same config from the same
input (issue 44, point 3). Each path is watched at ``check_config``, which only ``shape_config`` calls."""

import json
import os
import subprocess
import sys

import pytest

from banditrepro import cli, settle_run
from banditrepro.sharing.sources import Source
from banditrepro.workflow import config as cfg
from tests.workflow.common import ROOT, SUBSET, TEST_CONFIG, copy_project

# a deprecated key too: every path drops it the same way (config.yaml gives its new name, which wins)
OVERRIDES = [*SUBSET, "runs=3", "cells_per_job=2"]

# Snakemake itself, in-process in a child, with check_config watched: what the Snakefile's parse shapes
DRIVER = """
import json, os, sys
from banditrepro.workflow import config
real = config.check_config
def watched(cfg, schema_path):
    out = real(cfg, schema_path)
    with open(os.environ["SHAPED_LOG"], "a") as f:
        f.write(json.dumps(out, sort_keys=True, default=str) + "\\n")
    return out
config.check_config = watched
from snakemake.cli import main
sys.argv = ["snakemake", *sys.argv[1:]]
main()
"""


@pytest.fixture(scope="module")
def proj(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("paths") / "project")


@pytest.fixture
def shaped(monkeypatch):
    """Every config shaped in this process, as it left shape_config."""
    seen = []
    real = cfg.check_config

    def watched(config, schema_path):
        out = real(config, schema_path)
        seen.append(json.loads(json.dumps(out, sort_keys=True, default=str)))
        return out

    monkeypatch.setattr(cfg, "check_config", watched)
    return seen


def _snakemake_parse(proj, tmp_path) -> list[dict]:
    log = tmp_path / "shaped.jsonl"
    env = {**os.environ, "PYTHONPATH": str(proj / "src"), "SHAPED_LOG": str(log)}
    r = subprocess.run([sys.executable, "-c", DRIVER, "-s", str(proj / "Snakefile"), "-n", "--configfile",
                        TEST_CONFIG, "--config", *OVERRIDES], cwd=proj, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return [json.loads(line) for line in log.read_text().splitlines()]


def _cli(proj, *command) -> int:
    return cli.main([*command, "--configfile", str(proj / TEST_CONFIG), "--config", *OVERRIDES, "--project",
                     str(proj)])


def test_every_command_path_shapes_the_config_once_and_alike(proj, tmp_path, shaped, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the commands move into the project; this moves back
    parse = _snakemake_parse(proj, tmp_path)
    assert len(parse) == 1, "the Snakefile's parse shaped the config more than once"
    want = parse[0]
    assert want["runs"] == 3 and want["runs_per_shard"] == "auto" and "cells_per_job" not in want
    assert want["papers"] == ["winner-stays"] and want["catalog"] == "config/datasets.yaml"  # a default filled in

    by_path = {}
    for command in ("estimate", "clean"):
        shaped.clear()
        _cli(proj, command)
        by_path[command] = list(shaped)
    shaped.clear()
    monkeypatch.setattr(settle_run, "snakemake", lambda *a, **k: 1)  # its rounds: not run here
    assert _cli(proj, "settle", "--rounds", "1", "--first-round", "2") == 1
    by_path["settle"] = list(shaped)
    capsys.readouterr()
    for path, seen in by_path.items():
        assert seen == [want], f"{path}: shaped {len(seen)} time(s), or otherwise than the Snakefile"

    # verify, compare and bundle plan the config a results folder recorded (published.json: no engine keys)
    shaped.clear()
    recorded = cfg.results_config(want)
    Source("a folder", tmp_path / "results", tmp_path / "data", published={"config": recorded}).plan(proj, scan=False)
    assert len(shaped) == 1
    assert cfg.results_config(shaped[0]) == {**recorded, "results_dir": "results"}  # the folder is read in place


def test_shaping_a_shaped_config_changes_nothing():
    once = cfg.shape_config({"runs": 3, "job_minutes": 5}, ROOT, cluster_minutes=20)
    assert once["batch_minutes"] == 5  # the config's own size (the old name) wins over the profile's
    assert cfg.shape_config(json.loads(json.dumps(once)), ROOT, cluster_minutes=20) == once
