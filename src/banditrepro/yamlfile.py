"""YAML read the way every project file is read: safe (plain data only), through libyaml when PyYAML has it.

The C parser builds the same plain data as PyYAML's pure-Python one (both resolve scalars with the same safe
resolver and constructor) about ten times faster: the manifest's YAML files alone took ~0.1 CPU-s to parse in
Python, paid by every Snakemake invocation and CLI command that plans (docs/performance.md, "Start-up cost").
"""

from __future__ import annotations

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # a PyYAML built without libyaml has only the Python one

Error = yaml.YAMLError


def load(text: str):
    """The plain data of one YAML document (``yaml.safe_load``'s result)."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader, C or Python
