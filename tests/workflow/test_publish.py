"""Publication (banditrepro/workflow/publish.py, the body of rule `all`): the fixed paths a reader opens are
copies of the plan's store entries, made where the bytes differ; files a former publication made that this
plan does not make are removed, and no others; <results>/published.json says what was published from where,
relative to its folder. Publishing touches only its own folder and only bytes it wrote: a file edited by hand,
a path a record names outside the folder, another folder's record leave everything as it was (STALE: which
config the files show). On the test config's plan in a tmp folder, with store entries faked by writing bytes at
their paths; then two Snakemake runs: a `cp -a` copy of a finished folder run with another seed, a failed run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
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
        Path(src).write_text(f"{key} {_rel(plan, src)}\n")  # as a job writes them: the same in a copied folder


def _files(folder) -> dict[str, tuple[int, bytes]]:
    """Every file under ``folder``: (mtime_ns, bytes)."""
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def _age(paths) -> None:
    for p in paths:
        os.utime(p, (OLD, OLD))


def _fixed(plan) -> list[str]:
    return [dest for _, dest, _ in publish.pairs(plan)]


def _rel(plan, path) -> str:
    return os.path.relpath(path, plan.layout.results_dir)


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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
    # every path relative to the results folder (a copy of the folder names its own files), with the sha256 of
    # what was written: what alone publishing may later overwrite or remove
    assert record == {"version": 2, "results_dir": lay.results_dir, "base_seed": 7,
                      "files": {_rel(plan, dest): {"key": key, "from": _rel(plan, src), "sha256": _sha(src)}
                                for src, dest, key in pairs}}
    # every cell with its shards' key and what the key covers (the key recomputes from the parts); the config
    # without the keys that change no result's bytes
    assert sorted(cells) == sorted(plan.names.shards) and config["base_seed"] == 7
    assert all(rec["key"] == plan.names.shards[c] == names.key_of_parts(rec) for c, rec in cells.items())
    assert "shard_seconds" not in config and "batch_minutes" not in config and config["runs"] == plan.config["runs"]
    fig = plan.figures[0]
    assert record["files"][f"figures/{fig.paper}/{fig.id}.png"]["key"] == plan.names.figure[(fig.paper, fig.id)]
    assert record["files"]["claims.csv"]["key"] == plan.names.claims


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
    # file deleted by hand
    (src0, dest0, _), (src1, dest1, _) = pairs[0], pairs[7]
    old = Path(src0).read_bytes()
    Path(src0).write_bytes(old[:-2] + (b"X" if old[-2:-1] != b"X" else b"Y") + old[-1:])
    assert len(Path(src0).read_bytes()) == len(old) and Path(src0).read_bytes() != old
    Path(dest1).unlink()
    before = _files(plan.layout.results_dir)
    text = publish.publish(plan)
    after = _files(plan.layout.results_dir)
    rewritten = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    # published.json records the new sha256 of dest0
    assert rewritten == {_rel(plan, dest0), _rel(plan, dest1), "published.json"}
    assert Path(dest0).read_bytes() == Path(src0).read_bytes() and Path(dest1).read_bytes() == Path(src1).read_bytes()
    assert f"2 copied, {len(pairs) - 2} already current" in text


def test_a_fixed_file_edited_by_hand_is_neither_overwritten_nor_removed_and_the_folder_says_stale(here):
    """One file edited by hand: nothing is published (every fixed path still shows the former config, not a
    mix), and published.json, the log and the job's output say STALE with that file; moved away, the next
    publication completes. A former config's file edited by hand is not removed either."""
    seven, eight = _plan(), _plan(base_seed=8)
    _fake_store(seven)
    _fake_store(eight)
    publish.publish(seven)
    lay = seven.layout
    edited = lay.claims_csv
    Path(edited).write_text("my own notes on the claims\n")
    before = _files(lay.results_dir)
    text = publish.publish(eight)
    line = text.splitlines()[0]
    assert line.startswith(f"STALE: {lay.results_dir}: the fixed paths still show the config published.json "
                           "records (base_seed 7), not this config (base_seed 8)") and edited in line, text
    after = _files(lay.results_dir)
    assert {p for p in after if before.get(p) != after[p]} == {"published.json"}  # no fixed path touched
    record = json.loads(Path(lay.published_json).read_text())
    assert record["stale"]["line"] == line and record["base_seed"] == 7
    assert record["files"] == json.loads(before["published.json"][1])["files"]  # what the files still show
    import io

    out = io.StringIO()
    publish.announce(text, out)
    assert out.getvalue() == f"banditrepro: {line}\n"  # Snakemake's output too
    # moved away: the next publication brings every fixed path to base seed 8, the STALE mark gone
    Path(edited).unlink()
    publish.publish(eight)
    assert all(Path(d).read_bytes() == Path(s).read_bytes() for s, d, _ in publish.pairs(eight))
    assert "stale" not in json.loads(Path(lay.published_json).read_text())
    # a file of a paper this config no longer publishes, edited by hand: kept, named, nothing published
    one = _plan(base_seed=8, papers=["c2b"])
    _fake_store(one)
    leftover = next(d for d in _fixed(eight) if d not in _fixed(one))
    Path(leftover).write_text("mine now\n")
    text = publish.publish(one)
    assert text.startswith("STALE:") and leftover in text and Path(leftover).read_text() == "mine now\n"


def test_a_publication_interrupted_between_two_copies_leaves_a_folder_that_says_so(here, monkeypatch):
    """published.json is marked STALE before the first copy: a crash after some copies leaves a record saying
    the folder may show two configs; the next publication completes it (the copied files are recognised by
    their store entries' bytes) and the mark goes."""
    seven, eight = _plan(), _plan(base_seed=8)
    _fake_store(seven)
    _fake_store(eight)
    publish.publish(seven)
    real, calls = publish.write_bytes, []

    def crash_after_three(path, data):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(path)
        real(path, data)

    monkeypatch.setattr(publish, "write_bytes", crash_after_three)
    with pytest.raises(KeyboardInterrupt):
        publish.publish(eight)
    record = json.loads(Path(seven.layout.published_json).read_text())
    assert record["stale"]["line"].startswith(f"STALE: {seven.layout.results_dir}: publication of base_seed 8 "
                                              "interrupted")
    monkeypatch.setattr(publish, "write_bytes", real)
    text = publish.publish(eight)
    assert not text.startswith("STALE") and all(Path(d).read_bytes() == Path(s).read_bytes()
                                                for s, d, _ in publish.pairs(eight))
    assert "stale" not in json.loads(Path(seven.layout.published_json).read_text())


def test_a_record_naming_paths_outside_its_folder_touches_nothing_outside(here):
    """A published.json naming `../x`, an absolute path, a file of another results folder, or a path through a
    link out of the folder, each with the sha256 of the file there: every one refused, not one outside file
    removed or written; the folder's own files published as usual."""
    every = _plan()
    _fake_store(every)
    publish.publish(every)
    lay = every.layout
    outside = {"../x.csv": here / "results/x.csv", str(here / "abs.csv"): here / "abs.csv",
               "../other/claims.csv": here / "results/other/claims.csv"}
    for p in outside.values():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("not this folder's\n")
    (here / "elsewhere").mkdir()
    (here / "elsewhere/f.png").write_text("behind a link\n")
    os.symlink(here / "elsewhere", Path(lay.figures) / "linked")
    outside["figures/linked/f.png"] = here / "elsewhere/f.png"
    record = json.loads(Path(lay.published_json).read_text())
    for name, p in outside.items():
        record["files"][name] = {"key": "0" * 16, "from": name, "sha256": _sha(p)}
    Path(lay.published_json).write_text(json.dumps(record))
    before = {p: p.read_bytes() for p in outside.values()}
    one = _plan(papers=["c2b"])
    _fake_store(one)
    text = publish.publish(one)
    assert {p: p.read_bytes() for p in outside.values() if p.exists()} == before  # all there, unchanged
    refused = {ln.split(" ")[1].rstrip(":") for ln in text.splitlines() if ln.startswith("refused ")}
    assert refused == set(outside), text
    assert "removed " in text and not text.startswith("STALE")  # the folder's own former files: removed
    # a fixed path of this config behind a link out of the folder is not written through it
    os.symlink(here / "elsewhere", Path(lay.figures) / "c2b-moved")
    shutil.rmtree(Path(lay.tables) / "c2b")
    os.symlink(here / "elsewhere", Path(lay.tables) / "c2b")
    text = publish.publish(_plan())
    assert text.startswith("STALE:") and "outside" in text and os.listdir(here / "elsewhere") == ["f.png"]


def test_a_copied_folder_publishes_into_itself_whatever_its_record_names(here):
    """`cp -a results/test results/copy`: the copy's published.json names results/test (its results_dir); it
    is not trusted there. The copy's fixed paths, holding bytes of its own store entries, are brought to the
    copy's config; a former config's files it names are removed from the copy only if its own store proves
    them published; the original folder is untouched."""
    seven = _plan()
    _fake_store(seven)
    publish.publish(seven)
    orig = seven.layout.results_dir
    shutil.copytree(orig, "results/copy", symlinks=True)
    before = _files(orig)
    one = _plan(results_dir="results/copy", base_seed=8, papers=["c2b"])
    _fake_store(one)
    text = publish.publish(one)
    assert _files(orig) == before
    assert not text.startswith("STALE") and all(Path(d).read_bytes() == Path(s).read_bytes()
                                                for s, d, _ in publish.pairs(one))
    gone = {f"results/copy/{_rel(seven, d)}" for d in _fixed(seven)} - set(_fixed(one))
    assert gone and not any(Path(p).exists() for p in gone)
    record = json.loads(Path("results/copy/published.json").read_text())
    assert record["results_dir"] == "results/copy" and not any(k.startswith("results/") for k in record["files"])


def test_a_record_of_the_old_layout_is_read_with_its_project_relative_paths(here):
    """published.json as written before version 2 (project-relative paths, no sha256): its files are still
    recognised by their store entries' bytes, so a former config's are removed and a hand-edited one is not."""
    every = _plan()
    _fake_store(every)
    publish.publish(every)
    lay = every.layout
    record = json.loads(Path(lay.published_json).read_text())
    record.pop("version")
    record["files"] = {f"{lay.results_dir}/{k}": {"key": v["key"], "from": f"{lay.results_dir}/{v['from']}"}
                       for k, v in record["files"].items()}
    Path(lay.published_json).write_text(json.dumps(record))
    one = _plan(papers=["c2b"])
    _fake_store(one)
    text = publish.publish(one)
    gone = set(_fixed(every)) - set(_fixed(one))
    assert not any(Path(p).exists() for p in gone) and not text.startswith("STALE")


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
        keys = {_rel(plan, d): k for _, d, k in publish.pairs(plan)}
        assert {d: f["key"] for d, f in record["files"].items()} == keys


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
    assert set(json.loads(Path(lay.published_json).read_text())["files"]) == {_rel(one, p) for p in kept}
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


# --- end to end: a copied folder, a failed run (two Snakemake runs on the session's paper-like project) ---------


@pytest.mark.workflow
def test_a_copy_of_a_finished_folder_run_with_another_seed_leaves_the_original_byte_identical(project, tmp_path):
    """`cp -a results results-seed7`, then `snakemake --config results_dir=results-seed7 base_seed=7`: the copy
    shows seed 7 (its published.json names its own files, relative to it, not STALE), and the original folder is
    byte for byte and mtime for mtime what it was (the copy's record named `results/claims.csv` …, which an
    earlier publish removed)."""
    from tests.workflow.common import clone, smk, tree_digest

    proj = clone(project, tmp_path / "p")
    shutil.copytree(proj / "results", proj / "results-seed7", symlinks=True, copy_function=shutil.copy2)
    before = tree_digest(proj / "results")
    assert "claims.csv" in before and any(p.startswith("figures/") for p in before)
    r = smk("--configfile", "paper.yaml", "--cores", "2", "--config", "results_dir=results-seed7", "base_seed=7",
            cwd=proj)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert tree_digest(proj / "results") == before
    copy = proj / "results-seed7"
    record = json.loads((copy / "published.json").read_text())
    assert record["base_seed"] == 7 and record["results_dir"] == "results-seed7" and "stale" not in record
    for rel, entry in record["files"].items():
        assert (copy / rel).read_bytes() == (copy / entry["from"]).read_bytes(), rel
        assert hashlib.sha256((copy / rel).read_bytes()).hexdigest() == entry["sha256"], rel
    assert (copy / "claims.csv").read_bytes() != (proj / "results/claims.csv").read_bytes()  # seed 7's numbers


@pytest.mark.workflow
def test_a_run_that_fails_before_all_says_in_its_last_line_that_the_fixed_paths_show_the_previous_config(
        project, tmp_path):
    """A job failing before rule all (the report, made to raise in the copy's code): nothing is published, and
    the run's last line says the fixed paths still show the previous publication and its base seed."""
    from tests.workflow.common import clone, smk, tree_digest

    proj = clone(project, tmp_path / "p")
    src = proj / "src/banditrepro/report.py"
    anchor = "def build_report(figures: list[Figure], layout: Layout, claims_csv, runtime_csv, out) -> str:\n"
    assert anchor in src.read_text()
    src.write_text(src.read_text().replace(anchor, f'{anchor}    raise RuntimeError("injected failure")\n'))
    before = tree_digest(proj / "results", skip=str(proj / "results/logs"))
    r = smk("--configfile", "paper.yaml", "--cores", "2", cwd=proj)
    assert r.returncode != 0
    last = (r.stdout + r.stderr).strip().splitlines()[-1]
    assert last.startswith("banditrepro: run failed before rule all: the fixed paths in results (claims.csv, "
                           "report.md, figures, tables) still show the previous publication, the config "
                           "published.json records (base_seed 11)"), (r.stdout + r.stderr)[-3000:]
    after = tree_digest(proj / "results", skip=str(proj / "results/logs"))
    assert {p: after[p] for p in before if not p.startswith("store/")} == {
        p: v for p, v in before.items() if not p.startswith("store/")}



def test_an_interrupted_runs_last_line_says_how_to_resume_then_what_the_fixed_paths_show():
    from banditrepro.workflow import stop
    from banditrepro.workflow.progress import INTERRUPTED
    from banditrepro.workflow.publish import last_line

    failed = "banditrepro: run failed before rule all: nothing was published in results"
    stop.reset()
    try:
        assert last_line(failed) == failed
        stop.request("SIGINT")
        line = last_line(failed)
        assert line.startswith("banditrepro: ") and INTERRUPTED in line
        assert line.endswith("the run stopped before rule all: nothing was published in results")
    finally:
        stop.reset()
