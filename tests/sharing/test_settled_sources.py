"""Settle's files across the sharing boundary (banditrepro/sharing/settled.py), at the reader: a bundle may hold
claims-settled.csv and settle/{state.json, settle.md, sequences.png, sequences.pdf} and nothing else under
settle/, each within its limit and of its form; anything else is refused in one line. The end-to-end cases (a
settled run bundled, verified, flipped, merged) are in tests/workflow/test_settle.py."""

from __future__ import annotations

import json

import pytest

from banditrepro.settle_claims import SETTLED_COLUMNS
from banditrepro.sharing import settled
from banditrepro.sharing.received import BadSource
from banditrepro.sharing.sources import open_source
from tests.sharing.test_hostile_sources import base, member, write_bundle

STATE = json.dumps({"version": 1, "rounds": [{"cell_runs": {"d/T10/a": 20}}], "alpha": {}}).encode()
CSV = (",".join(SETTLED_COLUMNS) + "\n").encode()


def opened(tmp_path, *members) -> set[str]:
    with open_source(write_bundle(tmp_path / "b.tar.gz", base(*members))) as src:
        return set(src.files)


def test_a_bundle_carries_settles_files_and_the_reader_lists_them(tmp_path):
    files = opened(tmp_path, member("results/settle", kind=b"5"), member("results/claims-settled.csv", CSV),
                   member("results/settle/state.json", STATE), member("results/settle/settle.md", b"# Settle\n"),
                   member("results/settle/sequences.png", b"\x89PNG"))
    assert {"claims-settled.csv", "settle/state.json", "settle/settle.md", "settle/sequences.png"} <= files


@pytest.mark.parametrize("name, data, words", [
    ("results/settle/cell_runs.yaml", b"cell_runs: {}\n", "is not under results/ or data/ nor a bundle's file"),
    ("results/settle/other.json", b"{}", "is not under results/ or data/ nor a bundle's file"),
    ("results/settle/state.json", b"not json", "settle/state.json is not JSON"),
    ("results/settle/state.json", b'{"version": 2, "rounds": [], "alpha": {}}', "is not a settle state"),
    ("results/settle/state.json", b'{"version": 1, "rounds": [{"cell_runs": 3}], "alpha": {}}', "not a settle state"),
    ("results/claims-settled.csv", b"paper,verdict\n", "does not have the columns settle writes"),
    ("results/claims-settled.csv", b"\xff\xfe" + CSV, "claims-settled.csv is not UTF-8 text"),
    ("results/settle/settle.md", b"#" * (settled.LIMITS[settled.REPORT] + 1), "settle.md is larger than"),
])
def test_a_settle_file_out_of_its_form_or_limit_is_refused_in_one_line(tmp_path, name, data, words):
    with pytest.raises(BadSource, match=words) as exc:
        opened(tmp_path, member(name, data))
    assert "\n" not in str(exc.value)


def test_a_settle_folder_that_is_a_link_is_refused(tmp_path):
    results = tmp_path / "results"
    (results / "cells").mkdir(parents=True)
    (results / "published.json").write_text('{"cells": {}, "files": {}}\n')
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "state.json").write_bytes(STATE)
    (results / "settle").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(BadSource, match="settle is not a folder"):
        with open_source(results):
            pass
