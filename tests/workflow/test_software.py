"""The software stack: requirements/lock.txt agrees with pyproject.toml; each run stores software.json (the
whole stack, reproducible bytes) under a name of that stack and publishes it at <results>/software.json, so a
changed environment makes a new one; the stack renames no result that does not depend on it."""

from __future__ import annotations

import json
import platform
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from banditrepro.workflow import software

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "lock.txt"


def lock_pins() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep and version and " " not in line, f"not an exact pin: {line!r}"
        pins[canonicalize_name(name)] = version
    return pins


def project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    return [Requirement(r) for r in reqs]


def test_the_lock_pins_exact_versions_and_not_the_package_itself():
    pins = lock_pins()
    assert len(pins) > 50  # the whole environment, not only the direct requirements
    assert not {n for n in pins if n.startswith("banditrepro")}


def test_every_requirement_of_pyproject_is_pinned_inside_its_range():
    pins = lock_pins()
    for req in project_requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} is not in {LOCK.name}"
        assert req.specifier.contains(pins[name], prereleases=True), f"{name}=={pins[name]} is outside {req}"


def test_the_workflow_extra_brings_what_the_report_and_the_slurm_profile_need():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = [Requirement(r) for r in project["optional-dependencies"]["workflow"]]
    workflow = {canonicalize_name(r.name): r for r in extra}
    assert "reports" in workflow["snakemake"].extras  # pygments: `snakemake --report` fails without it
    assert not workflow["snakemake"].specifier.contains("8.30")  # profiles/slurm needs Snakemake 9
    assert not workflow["snakemake-executor-plugin-slurm"].specifier.contains("1.9")  # and the plugin's 2.x
    assert "pygments" in lock_pins()
    assert project["requires-python"] == ">=3.11"  # Snakemake 9's own floor


def test_the_stack_names_python_platform_and_every_distribution():
    stack = software.stack()
    assert stack["python"] == platform.python_version()
    assert stack["platform"]["system"] == platform.system()
    dists = stack["distributions"]
    assert len(dists) == len({canonicalize_name(d.metadata["Name"]) for d in metadata.distributions()})
    assert dists["numpy"] == metadata.version("numpy")
    assert stack["snakemake"] == metadata.version("snakemake") == dists["snakemake"]
    assert stack["executor_plugins"]["snakemake-executor-plugin-slurm"] == metadata.version(
        "snakemake-executor-plugin-slurm")


def test_the_file_is_reproducible_and_holds_no_path(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    software.write(a)
    software.write(b, tmp_path / "software.log")
    assert a.read_bytes() == b.read_bytes()
    assert json.loads(a.read_text()) == software.stack()
    assert str(Path.home()) not in a.read_text() and str(ROOT) not in a.read_text()
    assert "snakemake" in (tmp_path / "software.log").read_text()


def _plan_names():
    """The test config's plan: (cell keys, Names)."""
    import yaml

    from banditrepro.workflow.plan import build_plan

    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    cfg.update(yaml.safe_load((ROOT / ".test/config/config.yaml").read_text()))
    plan = build_plan(cfg, ROOT, scan=False)
    return plan.names.shards, plan.names, plan.store.software_json


@pytest.mark.parametrize("dist", ["snakemake", "pandas", "numpy", "a-new-distribution"])
def test_a_changed_environment_renames_software_json_and_nothing_else(tmp_path, monkeypatch, dist):
    """The full environment names software.json, and the report that prints it ("Software and provenance"), only:
    it changes no number. (numpy and numba name the shards through names.numerics_stack, read from the installed
    metadata: tests/workflow/test_names.py.)"""
    from dataclasses import asdict

    monkeypatch.chdir(tmp_path)
    cells, names, path = _plan_names()
    assert _plan_names() == (cells, names, path)
    changed = {**software.distributions(), dist: "0.0"}
    monkeypatch.setattr(software, "distributions", lambda: changed)
    cells2, names2, path2 = _plan_names()
    assert names2.software != names.software and path2 != path and names2.software in path2.split("/")
    assert cells2 == cells
    assert names2.report != names.report
    assert {k: v for k, v in asdict(names2).items() if k not in ("software", "report")} == \
        {k: v for k, v in asdict(names).items() if k not in ("software", "report")}


@pytest.mark.workflow
def test_a_run_writes_its_stack_beside_the_report(project):
    path = project / "results" / "software.json"
    assert (project / "results" / "report.md").is_file()
    assert json.loads(path.read_text()) == software.stack()  # the tests' Snakemake runs in this environment
