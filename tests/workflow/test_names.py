"""The name of every stored result (banditrepro/workflow/names.py, docs/decisions.md#content-addressing): each
part a name covers changes it, and nothing else does. A name that missed a part would show a result made from
other inputs as current; a name that covered too much would recompute what is already there. Unit tests of
the keys, then the plan's names of the test config (build_plan, in a tmp folder: nothing is computed)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from banditrepro import ReproError, closure, shardformat
from banditrepro.datasets.catalog import Catalog
from banditrepro.workflow import digests, names
from banditrepro.workflow.cells import kernel_name, kernel_of
from banditrepro.workflow.plan import build_plan, cell_key
from tests.workflow.common import ROOT, edit_function, test_config_dict


def _plan(**extra):
    return build_plan(test_config_dict(**extra), ROOT)


def _changed(a, b) -> dict:
    """What is named differently in plan ``b`` than in plan ``a``: the cells, and each table of Names."""
    out = {"cells": {c for c in a.names.shards.keys() | b.names.shards.keys()
                     if a.names.shards.get(c) != b.names.shards.get(c)}}
    for table in ("data", "summary", "figure", "leaderboard"):
        x, y = getattr(a.names, table), getattr(b.names, table)
        out[table] = {k for k in x.keys() | y.keys() if x.get(k) != y.get(k)}
    for single in ("claims", "runtime", "report", "software"):
        out[single] = getattr(a.names, single) != getattr(b.names, single)
    return out


def _drawing(plan, cells) -> set:
    """The figures (paper, id) that draw any of ``cells`` (cell keys)."""
    return {(f.paper, f.id) for f in plan.figures
            if any(cell_key(p.dataset, p.horizon, a.id) in cells for p in f.panels for a in p.algorithms)}


def _summaries(cells) -> set:
    from banditrepro.workflow.cells import split_key

    return {split_key(c) for c in cells}


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A tmp working folder: results/test and data/ of the plans are relative to it (and empty)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- the keys ------------------------------------------------------------------------------------------------


def test_a_key_is_a_short_digest_of_its_parts_whatever_the_order_of_a_mappings_keys():
    k = names.key("cell", {"a": 1, "b": [1, 2]}, 3)
    assert len(k) == names.KEY_CHARS and int(k, 16) >= 0
    assert names.key("cell", {"b": [1, 2], "a": 1}, 3) == k
    assert names.key("cell", {"a": 1, "b": [2, 1]}, 3) != k
    assert names.key("cell", {"a": 1, "b": [1, 2]}, "3") != k  # a string is not a number
    assert names.key("summary", {"a": 1, "b": [1, 2]}, 3) != k  # each kind its own names


CELL = dict(algo="rucb+alpha=0.51", code="c" * 16, data="d" * 16, horizon=1000, base_seed=7)


@pytest.mark.parametrize("part, other", [
    ("algo", "rucb+alpha=0.6"),  # another parameter value
    ("algo", "rucb"),  # the defaults
    ("algo", "rmed1"),
    ("code", "e" * 16),
    ("data", "e" * 16),
    ("horizon", 2000),
    ("base_seed", 8),
])
def test_every_argument_of_a_shards_key_changes_it(part, other):
    assert names.shards_key(**CELL) == names.shards_key(**CELL)
    assert names.shards_key(**{**CELL, part: other}) != names.shards_key(**CELL)


def test_the_shard_format_and_every_part_of_the_numerics_stack_change_a_shards_key(monkeypatch):
    base = names.shards_key(**CELL)
    with monkeypatch.context() as m:
        m.setattr(shardformat, "SHARD_FORMAT", shardformat.SHARD_FORMAT + 1)
        assert names.shards_key(**CELL) != base
    assert names.shards_key(**CELL) == base
    stack = names.numerics_stack()
    for part in ("numpy", "numba", "python"):
        with monkeypatch.context() as m:
            m.setattr(names, "numerics_stack", lambda part=part: {**stack, part: "0.0"})
            assert names.shards_key(**CELL) != base, part
    assert names.shards_key(**CELL) == base


def test_the_numerics_stack_is_the_installed_numpy_numba_and_python_minor_version():
    import platform
    from importlib import metadata

    assert names.numerics_stack() == {"numpy": metadata.version("numpy"), "numba": metadata.version("numba"),
                                      "python": ".".join(platform.python_version_tuple()[:2])}


def test_a_summary_key_covers_its_cell_key_runs_and_code():
    base = names.summary_key("a" * 16, 20, "s" * 16)
    assert names.summary_key("a" * 16, 20, "s" * 16) == base
    assert names.summary_key("b" * 16, 20, "s" * 16) != base
    assert names.summary_key("a" * 16, 21, "s" * 16) != base
    assert names.summary_key("a" * 16, 20, "t" * 16) != base


# --- data keys -------------------------------------------------------------------------------------------------


def _catalog(root: Path, edit=None) -> Catalog:
    """A catalog of a raw-source dataset, a Bernoulli one, a user matrix file with a fallback and a stand-in
    (no file: its fallback is prepared instead); ``edit(sources, datasets)`` changes it first."""
    sources = {"raw/a.txt": {"url": "https://example.org/a.txt", "sha256": "1" * 64},
               "raw/b.txt": {"url": "https://example.org/b.txt", "sha256": "2" * 64}}
    datasets = {"from-raw": {"derivation": "matrix_text", "source": "raw/a.txt"},
                "arms": {"derivation": "bernoulli", "means": [0.9, 0.1]},
                "user": {"derivation": "matrix_file", "path": "m.txt", "fallback": "arms"},
                "standin": {"derivation": "matrix_file", "path": None, "fallback": "arms"}}
    if edit:
        edit(sources, datasets)
    return Catalog(sources, datasets, root=root)


def _data_keys(catalog) -> dict:
    return {d: names.data_key(catalog, d) for d in catalog.datasets}


@pytest.mark.parametrize("edit, renamed", [
    (lambda s, d: d["from-raw"].update(skiprows=1), {"from-raw"}),  # its catalog entry
    (lambda s, d: s["raw/a.txt"].update(sha256="3" * 64), {"from-raw"}),  # its raw source's sha256
    (lambda s, d: s["raw/b.txt"].update(sha256="3" * 64), set()),  # a source nothing derives from
    (lambda s, d: d["from-raw"].update(source="raw/b.txt"), {"from-raw"}),  # another source
    # the fallback's entry: the fallback and the stand-in that prepares from it, not the user's own file
    (lambda s, d: d["arms"].update(means=[0.8, 0.1]), {"arms", "standin"}),
    (lambda s, d: d["standin"].update(fallback="from-raw"), {"standin"}),
    (lambda s, d: d["user"].update(path="other.txt"), {"user"}),  # another file (absent: "absent" bytes)
    # who may receive a derived file is no part of what it holds (banditrepro bundle: names.PASSING_ON)
    (lambda s, d: s["raw/a.txt"].update(redistribute=False), set()),
])
def test_a_data_key_changes_with_its_entry_its_sources_and_its_fallbacks_key(tmp_path, edit, renamed):
    (tmp_path / "m.txt").write_text("0.5 0.6\n0.4 0.5\n")
    before = _data_keys(_catalog(tmp_path))
    after = _data_keys(_catalog(tmp_path, edit))
    assert {d for d in before if before[d] != after[d]} == renamed


def test_a_user_matrix_file_is_named_by_its_bytes_not_its_age(tmp_path):
    m = tmp_path / "m.txt"
    m.write_text("0.5 0.6\n0.4 0.5\n")
    cat = _catalog(tmp_path)
    before = _data_keys(cat)
    os.utime(m, (1_000_000_000, 1_000_000_000))  # touched, or copied without its mtime: the same name
    assert _data_keys(cat) == before
    m.write_text("0.5 0.7\n0.3 0.5\n")
    after = _data_keys(cat)
    assert {d for d in before if before[d] != after[d]} == {"user"}
    m.unlink()  # a missing file has a name too (its preparation fails, naming it)
    gone = _data_keys(cat)
    assert gone["user"] not in (before["user"], after["user"]) and {d: gone[d] for d in gone if d != "user"} == \
        {d: before[d] for d in before if d != "user"}


def test_the_preparation_code_renames_every_dataset(tmp_path, monkeypatch):
    (tmp_path / "m.txt").write_text("1\n")
    before = _data_keys(_catalog(tmp_path))
    monkeypatch.setattr(names, "prepare_code", lambda: "0" * 16)
    after = _data_keys(_catalog(tmp_path))
    assert all(before[d] != after[d] for d in before)


@pytest.mark.parametrize("module, function", [
    ("banditrepro.datasets.derive", "sushi_matrix"),  # a derivation (a NO_NUMBERS module of the cells' digest)
    ("banditrepro.datasets.catalog", "load_catalog"),
    ("banditrepro.instances", None),
])
def test_the_preparation_code_covers_the_derivations_the_catalog_and_the_instance_checks(tmp_path, module,
                                                                                          function):
    copy = tmp_path / "banditrepro"
    shutil.copytree(closure.ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert digests.source_digest(names.PREPARE_CODE, copy) == names.prepare_code()
    path = closure.module_file(module, copy)
    if function:
        edit_function(path, function)
    else:
        path.write_text(path.read_text() + "\nEDITED_BY_A_TEST = 1\n")
    assert digests.source_digest(names.PREPARE_CODE, copy) != names.prepare_code()


def test_a_dataset_that_is_its_own_fallback_is_refused_in_one_line(tmp_path):
    cat = _catalog(tmp_path, lambda s, d: d["arms"].update(derivation="matrix_file", fallback="standin"))
    with pytest.raises(ReproError, match="its own fallback"):
        names.data_key(cat, "standin")


# --- the plan's names ------------------------------------------------------------------------------------------


def test_every_cell_of_a_plan_has_its_own_key_and_folder(here):
    plan = _plan()
    assert len(set(plan.names.shards.values())) == len(plan.cell_runs)  # parameter sets and horizons apart
    assert all(plan.cell_folder(c).endswith(f"/{c}/{k}") for c, k in plan.names.shards.items())
    # every dataset drawn is named, with its fallback (yelp prepares from sushi16 unless a file is given)
    assert {c.split("/")[0] for c in plan.cell_runs} <= set(plan.names.data) and "sushi16" in plan.names.data


def test_names_carry_each_cells_shards_key_and_the_parts_it_covers(here):
    """Computed once by name_plan; published.json's records (and so verify, merge, compare) are read from them."""
    from banditrepro.workflow import publish
    from banditrepro.workflow.cells import split_key

    plan = _plan()
    assert set(plan.names.parts) == set(plan.names.shards) == set(plan.cell_runs)
    for cell, parts in plan.names.parts.items():
        dataset, horizon, algo = split_key(cell)
        assert parts == names.cell_parts(algo, digests.cell_code(algo), plan.names.data[dataset], horizon,
                                         plan.config["base_seed"])
        assert plan.names.shards[cell] == names.key_of_parts(parts)
    records = publish.cell_records(plan)
    assert all({k: rec[k] for k in names.PARTS} == plan.names.parts[c] and rec["key"] == plan.names.shards[c]
               for c, rec in records.items())


def test_a_cells_parts_are_computed_in_names_only():
    import re

    from tests.core.test_imports import modules

    computing = [n for n, path in modules().items() if re.search(r"\bcell_parts\(", path.read_text())]
    assert computing == ["banditrepro.workflow.names"], computing


def test_runs_change_the_summary_key_not_the_shards_key(here):
    two, three = _plan(runs=2, max_runs=3), _plan(runs=3, max_runs=3)
    grown = {c for c in two.cell_runs if two.cell_runs[c] != three.cell_runs[c]}
    assert grown and len(grown) < len(two.cell_runs)  # some cells ask 3 runs already (a figure's runs: 3)
    change = _changed(two, three)
    assert change["cells"] == set() and change["data"] == set()
    assert change["summary"] == _summaries(grown)
    assert change["figure"] == _drawing(two, grown) and change["claims"] and change["report"]


def test_shard_sizes_and_the_results_folder_change_no_name(here):
    auto = _plan()
    one = _plan(runs_per_shard=1)
    assert one.cell_shards != auto.cell_shards  # other shards hold the same runs, under the same names
    for other in (one, _plan(batch_minutes=20)):
        assert other.names.shards == auto.names.shards and other.names == auto.names
    # another folder: the same shards, summaries and figures (the run-time table's and the report's keys cover
    # the summaries' paths, which are inside the folder like the store entries they name)
    c = _changed(auto, _plan(results_dir="results/elsewhere"))
    assert c["cells"] == c["data"] == c["summary"] == c["figure"] == set() and not c["claims"]


@pytest.mark.parametrize("change", ["base_seed", "shard_format", "numerics_stack"])
def test_the_seed_the_shard_format_and_the_stack_rename_every_cell_and_no_dataset(here, monkeypatch, change):
    before = _plan()
    if change == "base_seed":
        after = _plan(base_seed=8)
    else:
        if change == "shard_format":
            monkeypatch.setattr(shardformat, "SHARD_FORMAT", shardformat.SHARD_FORMAT + 1)
        else:  # an upgrade of numpy (its Generator streams may change in a feature release)
            stack = names.numerics_stack()
            monkeypatch.setattr(names, "numerics_stack", lambda: {**stack, "numpy": "99.0.0"})
        after = _plan()
    c = _changed(before, after)
    assert c["cells"] == set(before.cell_runs) and c["summary"] == set(before.names.summary)
    # every figure that draws a cell; those drawn from prepared files alone keep their keys
    assert c["figure"] == _drawing(before, set(before.cell_runs)) and ("winner-stays", "preference-matrices") \
        not in c["figure"]
    assert c["claims"] and c["runtime"] and c["report"] and c["data"] == set() and not c["software"]


def test_a_kernels_code_renames_exactly_its_cells_their_summaries_and_the_figures_drawing_them(here, monkeypatch):
    before = _plan()
    real = digests.cell_code
    monkeypatch.setattr(digests, "cell_code", lambda algo, root=closure.ROOT: real(algo, root) + (
        "-edited" if kernel_name(algo) == "rmed2" else ""))
    after = _plan()
    edited = {c for c in before.cell_runs if kernel_of(c) == "rmed2"}
    c = _changed(before, after)
    assert edited and c["cells"] == edited and c["summary"] == _summaries(edited)
    assert c["figure"] == _drawing(before, edited) and 0 < len(c["figure"]) < len(before.figures)
    assert c["claims"] and c["report"] and c["runtime"] and c["data"] == set() and not c["software"]


def _catalog_copy(folder: Path, edit) -> str:
    doc = yaml.safe_load((ROOT / "config/datasets.yaml").read_text())
    edit(doc)
    path = folder / "datasets.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_a_catalog_edit_renames_exactly_the_datasets_deriving_from_it_and_their_cells(here):
    before = _plan(catalog=_catalog_copy(here, lambda doc: None))
    assert before.names.data == _plan().names.data  # the copy, unedited: the same names

    def sushi_source(doc):  # a new checksum of the sushi win counts: sushi16 and yelp, its stand-in
        doc["sources"]["sushi/sushi3b_pairwise_wins.txt"]["sha256"] = "0" * 64

    after = _plan(catalog=_catalog_copy(here, sushi_source))
    c = _changed(before, after)
    assert c["data"] == {"sushi16", "yelp"}
    cells = {k for k in before.cell_runs if k.split("/")[0] in {"sushi16", "yelp"}}
    assert c["cells"] == cells and c["summary"] == _summaries(cells)
    # a figure names its prepared files too: the preference matrices, drawn from them alone, follow
    drawn = {(f.paper, f.id) for f in before.figures if {p.dataset for p in f.panels} & {"sushi16", "yelp"}}
    assert drawn > _drawing(before, cells) and ("winner-stays", "preference-matrices") in drawn
    assert c["figure"] == drawn and c["claims"] and c["report"]


def test_a_user_matrix_file_names_its_dataset_by_its_bytes_and_ends_the_fallback(here):
    matrix = here / "yelp.txt"
    matrix.write_text("0.5 0.6\n0.4 0.5\n")

    def given(doc):
        doc["datasets"]["yelp"]["path"] = str(matrix)

    standin = _plan()
    mine = _plan(catalog=_catalog_copy(here, given))
    yelp = {k for k in standin.cell_runs if k.startswith("yelp/")}
    assert yelp and _changed(standin, mine)["cells"] == yelp and _changed(standin, mine)["data"] == {"yelp"}
    matrix.write_text("0.5 0.7\n0.3 0.5\n")  # the user's file edited
    edited = _plan(catalog=_catalog_copy(here, given))
    assert _changed(mine, edited)["cells"] == yelp and _changed(mine, edited)["data"] == {"yelp"}

    def given_and_sushi(doc):
        given(doc)
        doc["sources"]["sushi/sushi3b_pairwise_wins.txt"]["sha256"] = "0" * 64

    # with its own file, yelp no longer derives from sushi16: a sushi16 change leaves it as it was
    assert _changed(edited, _plan(catalog=_catalog_copy(here, given_and_sushi)))["data"] == {"sushi16"}


def test_a_figure_key_follows_its_manifest_entry_not_the_other_figures(here):
    manifest = here / "figures"
    shutil.copytree(ROOT / "config/figures", manifest)
    before = _plan(manifest=str(manifest))
    c2b = manifest / "c2b.yaml"
    doc = yaml.safe_load(c2b.read_text())
    doc["c2b"]["figures"]["fig2"]["title"] += " (retitled)"
    c2b.write_text(yaml.safe_dump(doc, allow_unicode=True))
    after = _plan(manifest=str(manifest))
    c = _changed(before, after)
    assert c["figure"] == {("c2b", "fig2")} and c["claims"] and c["report"]
    assert c["cells"] == set() and c["summary"] == set() and c["data"] == set() and not c["runtime"]


def test_an_optional_datasets_probe_renames_only_the_figures_drawing_it(here):
    before = _plan()
    assert before.optional_datasets() == ["yahoo30"] and before.names.probes == {"yahoo30": "unprobed"}
    status = Path(before.layout.status_file("yahoo30"))
    status.parent.mkdir(parents=True)
    status.write_text(json.dumps({"available": False}))
    after = _plan()
    c = _changed(before, after)
    yahoo = {(f.paper, f.id) for f in before.figures if any(p.dataset == "yahoo30" for p in f.panels)}
    assert yahoo and c["figure"] == yahoo and c["claims"] and c["report"]
    assert c["cells"] == set() and c["summary"] == set() and c["data"] == set()
    status.write_text(json.dumps({"available": True}))
    assert _changed(after, _plan())["figure"] == yahoo


def test_a_plan_made_before_the_probes_ran_is_renamed_as_a_plan_made_after(here):
    """A first run plans before its probes run; rule `all` renames the figures and what reads them once they
    have (Plan.rename_outputs), so a store entry is named by the probe it saw, as the next run's plan names it."""
    plan = _plan()
    unprobed = (dict(plan.names.shards), dict(plan.names.summary), dict(plan.names.figure), plan.names.claims)
    plan.rename_outputs()  # nothing probed since: no name changes
    assert (plan.names.shards, plan.names.summary, plan.names.figure, plan.names.claims) == unprobed
    status = Path(plan.layout.status_file("yahoo30"))
    status.parent.mkdir(parents=True)
    status.write_text(json.dumps({"available": False, "reason": "offline"}))
    plan.rename_outputs()
    fresh = _plan()
    assert plan.names == fresh.names and plan.names.shards == fresh.names.shards
    assert plan.names.figure != unprobed[2] and plan.names.summary == unprobed[1]
    assert plan.store.claims_csv == fresh.store.claims_csv  # the store paths follow the names


def test_a_user_matrix_file_that_cannot_be_read_stops_the_plan_in_one_line(tmp_path):
    (tmp_path / "m.txt").mkdir()  # reading it fails (EISDIR): its name cannot be known, so no plan is made
    with pytest.raises(ReproError, match=r"^dataset 'user': cannot read .*m\.txt") as err:
        names.data_key(_catalog(tmp_path), "user")
    assert "\n" not in str(err.value)


def test_the_same_config_twice_gives_the_same_names_and_leaderboards_follow_the_figures(here):
    a, b = _plan(), _plan()
    assert _changed(a, b) == {"cells": set(), "data": set(), "summary": set(), "figure": set(),
                              "leaderboard": set(), "claims": False, "runtime": False, "report": False,
                              "software": False}
    manifest = here / "figures"
    shutil.copytree(ROOT / "config/figures", manifest)
    joined = _plan(manifest=str(manifest), challengers=["uniform-pairs"])
    assert set(joined.names.leaderboard) == {"c2b", "winner-stays"}  # the papers the challenger joins
    # a figure of another paper retitled: only its key among the figures, and every leaderboard (each reads the
    # claims of every figure), the claims and the report
    doc = yaml.safe_load((manifest / "dp-ts-ucb.yaml").read_text())
    fig_id = next(iter(doc["dp-ts-ucb"]["figures"]))
    doc["dp-ts-ucb"]["figures"][fig_id]["title"] += " (retitled)"
    (manifest / "dp-ts-ucb.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    c = _changed(joined, _plan(manifest=str(manifest), challengers=["uniform-pairs"]))
    assert c["figure"] == {("dp-ts-ucb", fig_id)} and c["leaderboard"] == {"c2b", "winner-stays"}
    assert c["claims"] and c["report"] and c["cells"] == set() and c["summary"] == set()


def _record_of(record: str, describes) -> str:
    """verify --record's or merge's record as they write it (sharing/verify.py, merge.py), describing ``describes``."""
    if record == "verification_json":
        return json.dumps({"seed": 0, "result": "pass", "summary": "verified: …", "describes": describes})
    return json.dumps({"sources": [{"source": "x.tar.gz", "bundle_sha256": "00", "shards": 1,
                                    "describes": describes}]})


@pytest.mark.parametrize("record", ["verification_json", "received_json"])
def test_a_recorded_verification_or_merge_renames_the_report_alone(tmp_path, monkeypatch, record):
    """verify --record and merge write a record the report shows ("Software and provenance"), naming the store
    entries it describes (banditrepro/records.py): a record of this config's entries names the report, and
    nothing else (no shard, summary, figure or claim is made again); a record of another config's entries (another
    base seed), or one naming none, renames nothing."""
    from banditrepro.records import describes

    monkeypatch.chdir(tmp_path)  # the plan's paths are relative to where Snakemake runs
    results = "results/t"
    before = _plan(results_dir=results)
    path = Path(getattr(before.layout, record))
    path.parent.mkdir(parents=True)
    merge = record == "received_json"
    path.write_text(_record_of(record, describes(before.names, claims=not merge)))
    written = _plan(results_dir=results)
    c = _changed(before, written)
    assert c["report"] and not any(v for k, v in c.items() if k != "report"), c
    other = _plan(results_dir=results, base_seed=8)
    for text in (_record_of(record, describes(other.names, claims=not merge)), _record_of(record, None),
                 '{"sources": []}\n'):
        path.write_text(text)
        assert _plan(results_dir=results).names.report == before.names.report, text
    # a verify --record, then a run with another base seed: that run's report is not named by (nor shows) it
    path.write_text(_record_of(record, describes(before.names, claims=not merge)))
    assert _plan(results_dir=results, base_seed=8).names.report == other.names.report


def test_a_record_applies_only_to_the_store_entries_it_describes(here):
    """records.applies: a record describes a config's summaries (a merge) and claims (a verify); equal parts
    apply, any other part, a missing or malformed field, or a folder made by hand (no names) do not."""
    from banditrepro.records import applies, describes

    seven, eight, c2b = _plan(), _plan(base_seed=8), _plan(papers=["c2b"])
    mine = describes(seven.names)
    assert set(mine) == {"summaries", "claims"} and mine["claims"] == seven.names.claims
    assert applies({"describes": mine}, seven.names)
    assert applies({"describes": describes(seven.names, claims=False)}, seven.names)
    assert not applies({"describes": mine}, eight.names)  # another base seed: other summaries
    assert not applies({"describes": mine}, c2b.names)  # other figures: other summaries and claims
    assert not applies({"describes": {**mine, "claims": "0" * 16}}, seven.names)  # the same runs, other claims
    for bad in ({}, {"describes": None}, {"describes": {}}, {"describes": {"claims": mine["claims"]}},
                {"describes": {**mine, "unknown": 1}}, [mine], "x"):
        assert not applies(bad, seven.names), bad
    assert not applies({"describes": mine}, None)


def test_the_drawing_stack_names_figures_tables_claims_and_reports_never_shards_or_summaries(here, monkeypatch):
    """docs/decisions.md#drawing-stack-in-the-names: matplotlib, pillow, fonttools, seaborn, pandas and scipy,
    read from the installed metadata, name every figure, leaderboard, the claims, the run-time table and the
    report; another version of any renames them all, and no shard, summary or prepared file."""
    stack = names.drawing_stack()
    assert set(stack) == {"matplotlib", "pillow", "fonttools", "seaborn", "pandas", "scipy"}
    assert stack["matplotlib"] and stack["pandas"] and stack["scipy"]
    before = _plan(challengers=["uniform-pairs"])
    for dist in ("matplotlib", "pandas", "scipy", "seaborn"):
        monkeypatch.setattr(names, "drawing_stack", lambda d=dist: {**stack, d: "0.0.1"})
        c = _changed(before, _plan(challengers=["uniform-pairs"]))
        assert c["figure"] == set(before.names.figure) and c["leaderboard"] == set(before.names.leaderboard), dist
        assert c["claims"] and c["runtime"] and c["report"] and not c["software"], dist
        assert c["cells"] == set() and c["summary"] == set() and c["data"] == set(), dist
