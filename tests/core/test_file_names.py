"""The names of a cell, a shard's and a summary's file and a key are spelled and parsed in banditrepro/layout.py
only (issue 44): every writer, lister and reader of received folders builds them there and reads them back
there, so a change of one spelling cannot leave a reader that no longer finds what a writer wrote. One function
hashes a file whole (banditrepro/filehash.py)."""

from __future__ import annotations

import re

import pytest

from banditrepro.layout import (
    KEY,
    Layout,
    arrays_of,
    cell_key,
    parse_cell,
    parse_shard_rel,
    shard_file,
    shard_rel,
    shard_runs,
    sidecar_of,
    split_key,
    summary_rel,
)
from tests.core.test_imports import SRC, modules

KEY16 = "0123456789abcdef"


def test_every_name_reads_back_as_it_was_written():
    assert shard_file(3, 9) == "runs3-9.npz" and shard_runs(shard_file(3, 9)) == (3, 9)
    cell = cell_key("sushi16", 100000, "rucb+alpha=0.6")
    assert cell == "sushi16/T100000/rucb+alpha=0.6" and parse_cell(cell) == split_key(cell)
    assert split_key(cell) == ("sushi16", 100000, "rucb+alpha=0.6")
    rel = shard_rel(cell, KEY16, 0, 4)
    assert rel == f"cells/{cell}/{KEY16}/runs0-4.npz" and parse_shard_rel(rel) == (cell, KEY16, 0, 4)
    assert summary_rel(cell, KEY16) == f"summaries/{cell}/{KEY16}.npz"
    assert sidecar_of(rel) == rel[:-4] + ".json" and arrays_of(sidecar_of(rel)) == rel
    lay = Layout("results/x")
    assert lay.shard("sushi16", 100000, "rucb+alpha=0.6", KEY16, 0, 4) == f"results/x/{rel}"
    pattern = lay.summary_pattern().format(dataset="sushi16", horizon=100000, algo="rucb+alpha=0.6", key=KEY16)
    assert pattern == f"results/x/{summary_rel(cell, KEY16)}"


@pytest.mark.parametrize("name", ["runs3-2.npz", "runs3-9.json", "run3.npz", "runs-1-2.npz", "xruns1-2.npz",
                                  "runs1-2.npz.claim", "runs1-2npz"])
def test_a_file_that_is_not_a_shard_is_none(name):
    assert shard_runs(name) is None


@pytest.mark.parametrize("rel", [
    f"cells/sushi16/T100000/rucb/{KEY16}/runs0-4.json",  # a sidecar
    f"cells/sushi16/T0100/rucb/{KEY16}/runs0-4.npz",  # not a horizon as a cell spells it
    f"cells/sushi16/100000/rucb/{KEY16}/runs0-4.npz",
    f"cells/sushi16/T100000/rucb/{KEY16[:-1]}/runs0-4.npz",  # not a key
    f"summaries/sushi16/T100000/rucb/{KEY16}/runs0-4.npz",
    f"cells/sushi16/T100000/{KEY16}/runs0-4.npz",
])
def test_a_path_that_is_not_a_shard_is_none(rel):
    assert parse_shard_rel(rel) is None


def test_a_cell_parses_only_in_its_own_shape():
    for text in ("sushi16/T100000", "sushi16/T0/rucb", "sushi16/t5/rucb", "a/T5/b/c", None, 5):
        assert parse_cell(text) is None
    with pytest.raises(ValueError):
        split_key("sushi16/100/rucb")
    assert KEY.fullmatch(KEY16) and not KEY.fullmatch(KEY16.upper())


# what spells a shard's file name or its folder's shape outside layout.py: an f-string or a pattern of its own
SPELLINGS = re.compile(r"""runs\{[^}]*\}-|runs\\d|f["']cells/|/T\{horizon\}|\[:-4\]|\[:-5\]""")


def test_the_shard_and_summary_names_are_spelled_in_layout_only():
    found = {name: sorted({m.group(0) for m in SPELLINGS.finditer(path.read_text())})
             for name, path in modules().items() if name != "banditrepro.layout"}
    assert not {name: s for name, s in found.items() if s}


def test_one_function_hashes_a_file_whole():
    chunked = re.compile(r"iter\(lambda: \w+\.read\(")
    found = [name for name, path in modules().items() if chunked.search(path.read_text())]
    assert found == ["banditrepro.filehash"], found
    assert (SRC / "filehash.py").is_file()
