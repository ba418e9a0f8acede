"""Publication (banditrepro/workflow/publish.py, the body of rule `all`): the fixed paths a reader opens are
copies of the plan's store entries, made where the bytes differ; files a former publication made that this
plan does not make are removed, and no others; <results>/published.json says what was published from where.
On the test config's plan in a tmp folder, with store entries faked by writing bytes at their paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from banditrepro.workflow import names, publish
from banditrepro.workflow.plan import build_plan
from tests.workflow.common import ROOT, test_config_dict

OLD = 1_000_000_000  # an mtime (2001) no write of this test makes: a file still holding it was not rewritten


def _plan(**extra):
    return build_plan(test_config_dict(**extra), ROOT)


def _fake_store(plan) -> None:
    """Every store entry of ``plan`` as its job would leave it: bytes that differ between entries and keys."""
    for src, _, key in publish.pairs(plan):
        Path(src).parent.mkdir(parents=True, exist_ok=True)
        Path(src).write_text(f"{key} {src}\n")


def _files(folder) -> dict[str, tuple[int, bytes]]:
    """Every file under ``folder``: (mtime_ns, bytes)."""
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def _age(paths) -> None:
    for p in paths:
        os.utime(p, (OLD, OLD))


def _fixed(plan) -> list[str]:
    return [dest for _, dest, _ in publish.pairs(plan)]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_store_entry_is_copied_to_its_fixed_path_and_listed_with_its_key(here):
    plan = _plan()
    pairs = publish.pairs(plan)
    assert len(pairs) == 5 * len(plan.figures) + 5  # a figure's png, pdf, csv, md, tex; claims, runtime, reports,
    # software; no leaderboard without a challenger
    lay, st = plan.layout, plan.store
    fixed = [dest for _, dest, _ in pairs]
    assert len(set(fixed)) == len(fixed) and {lay.claims_csv, lay.report_md, lay.software_json} <= set(fixed)
    assert all(src.startswith(f"{st.store_dir}/") and not dest.startswith(f"{st.store_dir}/")
               and dest.startswith(f"{lay.results_dir}/") for src, dest, _ in pairs)
    assert all(key in src.split("/") for src, _, key in pairs)  # the store entry's folder is its key
    _fake_store(plan)
    text = publish.publish(plan)
    assert text.startswith(f"published {len(pairs)} files: {len(pairs)} copied, 0 already current")
    assert all(Path(dest).read_bytes() == Path(src).read_bytes() for src, dest, _ in pairs)
    record = json.loads(Path(lay.published_json).read_text())
    cells, config = record.pop("cells"), record.pop("config")
    assert record == {"results_dir": lay.results_dir, "base_seed": 7,
                      "files": {dest: {"key": key, "from": src} for src, dest, key in pairs}}
    # every cell with its shards' key and what the key covers (the key recomputes from the parts); the config
    # without the keys that change no result's bytes
    assert sorted(cells) == sorted(plan.cell_names) and config["base_seed"] == 7
    assert all(rec["key"] == plan.cell_names[c] == names.key_of_parts(rec) for c, rec in cells.items())
    assert "shard_seconds" not in config and "batch_minutes" not in config and config["runs"] == plan.config["runs"]
    fig = plan.figures[0]
    assert record["files"][lay.figure_png(fig.paper, fig.id)]["key"] == plan.names.figure[(fig.paper, fig.id)]
    assert record["files"][lay.claims_csv]["key"] == plan.names.claims


def test_publishing_a_current_folder_again_rewrites_nothing(here):
    plan = _plan()
    _fake_store(plan)
    publish.publish(plan)
    _age(p for p in Path(plan.layout.results_dir).rglob("*") if p.is_file())
    before = _files(plan.layout.results_dir)
    text = publish.publish(_plan())  # the next run: a new plan of the same config
    assert _files(plan.layout.results_dir) == before  # not one file rewritten, published.json included
    assert "0 copied" in text and "removed" not in text


def test_only_fixed_files_whose_bytes_differ_from_their_store_entry_are_copied(here):
    plan = _plan()
    _fake_store(plan)
    publish.publish(plan)
    pairs = publish.pairs(plan)
    _age(p for p in Path(plan.layout.results_dir).rglob("*") if p.is_file())
    # a store entry with other bytes of the same size (never taken for the same by its size), and a fixed
    # file edited by hand
    (src0, dest0, _), (src1, dest1, _) = pairs[0], pairs[7]
    old = Path(src0).read_bytes()
    Path(src0).write_bytes(old[:-2] + (b"X" if old[-2:-1] != b"X" else b"Y") + old[-1:])
    assert len(Path(src0).read_bytes()) == len(old) and Path(src0).read_bytes() != old
    Path(dest1).write_text("edited by hand\n")
    _age([dest1])
    before = _files(plan.layout.results_dir)
    text = publish.publish(plan)
    after = _files(plan.layout.results_dir)
    rewritten = {p for p in before if before[p] != after[p]}
    rel = lambda p: os.path.relpath(p, plan.layout.results_dir)  # noqa: E731
    assert rewritten == {rel(dest0), rel(dest1)}  # published.json too is unchanged
    assert Path(dest0).read_bytes() == Path(src0).read_bytes() and Path(dest1).read_bytes() == Path(src1).read_bytes()
    assert f"2 copied, {len(pairs) - 2} already current" in text


def test_a_config_switched_back_and_forth_shows_its_own_files_each_time(here):
    seven, eight = _plan(), _plan(base_seed=8)
    assert set(_fixed(seven)) == set(_fixed(eight))  # the same fixed paths, other store entries
    _fake_store(seven)
    _fake_store(eight)
    for plan in (seven, eight, seven, eight):
        publish.publish(plan)
        assert all(Path(dest).read_bytes() == Path(src).read_bytes() for src, dest, _ in publish.pairs(plan))
        record = json.loads(Path(plan.layout.published_json).read_text())
        assert record["base_seed"] == plan.config["base_seed"]
        assert {d: f["key"] for d, f in record["files"].items()} == {d: k for _, d, k in publish.pairs(plan)}


def test_files_a_former_publication_made_that_the_plan_does_not_make_are_removed_and_no_others(here):
    every = _plan()
    _fake_store(every)
    publish.publish(every)
    lay = every.layout
    # files publish did not make: a note of the user's, a figure of a paper not published by this folder's
    # publications (an older layout's file), a table of the user's own
    mine = [f"{lay.figures}/winner-stays/notes.txt", f"{lay.figures}/other-paper/fig9.png", f"{lay.tables}/mine.csv"]
    for p in mine:
        Path(p).parent.mkdir(parents=True, exist_ok=True)
        Path(p).write_text("mine\n")
    one = _plan(papers=["c2b"])
    _fake_store(one)
    Path(_fixed(every)[-1]).unlink(missing_ok=True)  # a published file deleted by hand meanwhile: no error
    text = publish.publish(one)
    kept, gone = set(_fixed(one)), set(_fixed(every)) - set(_fixed(one))
    assert gone and {os.path.relpath(p, lay.results_dir).split("/")[1] for p in gone} == {"dp-ts-ucb",
                                                                                           "winner-stays"}
    assert not any(Path(p).exists() for p in gone)
    assert all(Path(p).is_file() for p in kept) and all(Path(p).read_text() == "mine\n" for p in mine)
    assert {ln.removeprefix("removed ") for ln in text.splitlines() if ln.startswith("removed ")} == gone - {
        _fixed(every)[-1]}
    assert set(json.loads(Path(lay.published_json).read_text())["files"]) == kept
    # the former config again: its files come back from its store entries, and the user's stay
    publish.publish(_plan())
    assert all(Path(p).is_file() for p in _fixed(every)) and all(Path(p).read_text() == "mine\n" for p in mine)


def test_a_folder_without_a_readable_publication_record_loses_no_file(here):
    every = _plan()
    _fake_store(every)
    publish.publish(every)
    lay = every.layout
    one = _plan(papers=["c2b"])
    _fake_store(one)
    for record in (None, "{not json", "[1, 2]"):  # none (a folder published before it existed), cut short, other
        if record is None:
            Path(lay.published_json).unlink()
        else:
            Path(lay.published_json).write_text(record)
        publish.publish(one)
        assert all(Path(p).is_file() for p in _fixed(every)), record  # nothing it cannot tell it published
        publish.publish(every)  # back to where it was, recorded


def test_the_publication_record_is_the_same_bytes_for_the_same_config_wherever_the_checkout_is(tmp_path,
                                                                                            monkeypatch):
    texts = []
    for where in ("a", "b"):
        (tmp_path / where).mkdir()
        monkeypatch.chdir(tmp_path / where)
        plan = _plan()
        _fake_store(plan)
        publish.publish(plan)
        publish.publish(plan)
        texts.append(Path(plan.layout.published_json).read_bytes())
    assert texts[0] == texts[1] and str(tmp_path) not in texts[0].decode()
    record = json.loads(texts[0])
    assert list(record["files"]) == sorted(record["files"]) and texts[0].decode().endswith("}\n")
