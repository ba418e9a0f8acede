"""banditrepro.yamlfile reads YAML as yaml.safe_load does (libyaml's parser, the same safe constructor)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from banditrepro import yamlfile

ROOT = Path(__file__).resolve().parents[2]


def test_every_project_yaml_reads_as_safe_load_reads_it():
    files = [*ROOT.glob("config/**/*.yaml"), *ROOT.glob("workflow/schemas/*.yaml"), *ROOT.glob("profiles/*/*.yaml"),
             *ROOT.glob("src/banditrepro/*.yaml"), ROOT / ".test/config/config.yaml"]
    assert len(files) >= 10
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert yamlfile.load(text) == yaml.safe_load(text), f


def test_scalars_resolve_as_the_safe_loader_resolves_them():
    text = "a: 1e3\nb: 0x10\nc: .inf\nd: ~\ne: yes\nf: 2026-12-08\ng: '7'\nh: [1, 2.5, null]\n"
    assert yamlfile.load(text) == yaml.safe_load(text)
    assert yamlfile.load(text)["b"] == 16 and yamlfile.load(text)["g"] == "7"


def test_a_python_tag_and_broken_yaml_are_refused():
    with pytest.raises(yamlfile.Error):
        yamlfile.load("!!python/object/apply:os.system ['true']")
    with pytest.raises(yamlfile.Error):
        yamlfile.load("a: [1, 2\n")
