"""The on-disk cache of what closure.py parses (banditrepro/parse_cache.py, docs/decisions.md#parse-cache): an
entry gives exactly what a fresh parse gives, and is read only for the bytes, Python release and parsing code it
was computed from."""

from __future__ import annotations

import ast
import hashlib

import pytest

from banditrepro import cache_base, closure, parse_cache

SOURCE = b'''"""A module."""
import os
from banditrepro import cell
from . import grid as g


def f(x):
    """Doc."""
    import banditrepro.seeds
    return x + 1
'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, and a fresh per-process memo (so each read goes to the disk)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    closure._facts.cache_clear()
    yield tmp_path / "xdg" / "banditrepro" / "parse"
    closure._facts.cache_clear()


def _module(tmp_path, data: bytes = SOURCE):
    path = tmp_path / "src" / "banditrepro" / "mod.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _fresh(data: bytes) -> dict:
    tree = ast.parse(data)
    return {"imports": closure._import_statements(tree), "shape": closure._shape(tree)}


def _read(path) -> dict:
    """The facts of ``path`` as a new process reads them."""
    closure._facts.cache_clear()
    return closure._source_facts(path)


def test_the_folder_is_beside_the_compiled_kernels(cache):
    assert parse_cache.folder() == cache_base() / "parse" == cache


def test_a_cached_entry_gives_what_a_fresh_parse_gives(cache, tmp_path):
    path = _module(tmp_path)
    first = _read(path)
    assert first["shape"] == closure.code_shape(SOURCE)
    assert [p.name for p in cache.iterdir()] == [f"{parse_cache.key(SOURCE)}.json"]
    second = _read(path)  # from the disk this time
    assert second["key"] == parse_cache.key(SOURCE)
    assert {k: second[k] for k in ("imports", "shape")} == {k: first[k] for k in ("imports", "shape")} == _fresh(SOURCE)
    assert second["imports"] == [[0, None, ["os"]], [0, "banditrepro", ["cell"]], [1, "", ["grid"]],
                                 [0, None, ["banditrepro.seeds"]]]
    # and the digests over the package's own sources: with the cache filled, as fresh
    mods = ["banditrepro.cell", "banditrepro.aggregate"]
    closure._facts.cache_clear()
    filled = closure.shape_digest(mods)
    closure._facts.cache_clear()
    assert closure.shape_digest(mods) == filled
    h = hashlib.sha256()
    for m in closure.closure(mods):
        p = closure.module_file(m)
        h.update(p.relative_to(closure.ROOT).as_posix().encode() + b"\0")
        h.update(closure.code_shape(p.read_bytes()).encode() + b"\0")
    assert filled == h.hexdigest()[:16]


def test_an_entry_is_served_from_the_disk(cache, tmp_path):
    """The second read uses the entry: a planted (wrong) shape under the right key is what comes back, so the
    tests above compare a read from the disk, not a second parse."""
    path = _module(tmp_path)
    _read(path)
    entry = cache / f"{parse_cache.key(SOURCE)}.json"
    entry.write_text(entry.read_text().replace("Module(", "Planted("))
    assert _read(path)["shape"].startswith("Planted(")


def test_an_edited_file_misses_the_cache(cache, tmp_path):
    path = _module(tmp_path)
    before = _read(path)
    edited = SOURCE.replace(b"x + 1", b"x + 2")
    path.write_bytes(edited)
    after = _read(path)
    assert after["shape"] != before["shape"] and after["shape"] == closure.code_shape(edited)
    assert len(list(cache.iterdir())) == 2


@pytest.mark.parametrize("garbage", [
    "",  # empty (a write cut short)
    '{"key": "{k}", "imports": [',  # truncated JSON
    "[]",  # JSON, not an entry
    '{"key": "another key", "imports": [], "shape": "Module()"}',  # an entry of other bytes
    '{"key": "{k}", "imports": [], "shape": 3}',  # right key, shape no text
    '{"key": "{k}", "shape": "Module()"}',  # right key, imports missing
])
def test_a_corrupt_entry_is_ignored_and_recomputed(cache, tmp_path, garbage):
    path = _module(tmp_path)
    k = parse_cache.key(SOURCE)
    cache.mkdir(parents=True)
    (cache / f"{k}.json").write_text(garbage.replace("{k}", k))
    assert parse_cache.load(k) is None
    facts = _read(path)
    assert facts["shape"] == closure.code_shape(SOURCE) and facts["imports"] == _fresh(SOURCE)["imports"]
    assert parse_cache.load(k)["shape"] == facts["shape"]  # and filed again, whole


def test_an_undecodable_entry_is_ignored(cache):
    cache.mkdir(parents=True)
    (cache / "k.json").write_bytes(b"\xff\xfe\x00")
    assert parse_cache.load("k") is None


def test_another_python_release_or_parser_misses(cache, tmp_path, monkeypatch):
    path = _module(tmp_path)
    _read(path)
    k = parse_cache.key(SOURCE)
    monkeypatch.setattr(parse_cache, "PYTHON", "cpython-9.99.0")
    assert parse_cache.key(SOURCE) != k and parse_cache.load(parse_cache.key(SOURCE)) is None
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(parse_cache, "_code_version", lambda: "an edited closure.py")
    assert parse_cache.key(SOURCE) != k
    monkeypatch.setattr(parse_cache, "FORMAT", "2")
    assert parse_cache.key(SOURCE) != k


def test_an_unwritable_cache_folder_only_costs_a_parse(cache, tmp_path):
    cache.parent.mkdir(parents=True)
    cache.write_text("a file where the folder should be")
    path = _module(tmp_path)
    assert _read(path)["shape"] == closure.code_shape(SOURCE)
    assert cache.read_text() == "a file where the folder should be"


def test_a_syntax_error_is_raised_and_not_filed(cache, tmp_path):
    path = _module(tmp_path, b"def broken(:\n")
    with pytest.raises(SyntaxError):
        _read(path)
    assert not cache.exists() or not list(cache.iterdir())
