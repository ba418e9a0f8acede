"""The one object that knows every path: the layout the rules, jobs, CLI and report share."""

from dataclasses import fields
from pathlib import Path

import pytest

from banditrepro import ReproError
from banditrepro.layout import DEFAULT_BASE_SEED, Layout, Names


def test_default_layout_matches_the_documented_tree():
    lay = Layout()  # no plan's names: the flat layout of folders made by hand
    shard = "results/cells/sushi16/T100000/rucb/0123abcd/runs3-9.npz"
    assert lay.shard("sushi16", 100000, "rucb", "0123abcd", 3, 9) == shard
    assert lay.summary("sushi16", 100000, "rucb") == "results/summaries/sushi16/T100000/rucb.npz"
    assert lay.figure_outputs("c2b", "fig1") == [
        "results/figures/c2b/fig1.png", "results/figures/c2b/fig1.pdf",
        "results/tables/c2b/fig1.csv", "results/tables/c2b/fig1.md", "results/tables/c2b/fig1.tex"]
    assert lay.prepared_file("mslr5") == "data/prepared/mslr5.json"
    assert lay.logs == "logs"


def test_a_plans_names_put_every_stored_result_under_its_key():
    names = Names(data={"mslr5": "d" * 16}, summary={("sushi16", 100000, "rucb"): "s" * 16},
                  figure={("c2b", "fig1"): "f" * 16}, claims="c" * 16, report="r" * 16)
    lay = Layout(names=names)
    assert lay.prepared_file("mslr5") == f"data/prepared/mslr5/{'d' * 16}.json"
    assert lay.summary("sushi16", 100000, "rucb") == f"results/summaries/sushi16/T100000/rucb/{'s' * 16}.npz"
    # the published paths stay fixed; the store view puts each under its key
    assert lay.figure_png("c2b", "fig1") == "results/figures/c2b/fig1.png"
    st = lay.stored()
    assert st.figure_png("c2b", "fig1") == f"results/store/figures/c2b/fig1/{'f' * 16}/fig1.png"
    assert st.table("c2b", "fig1", "md") == f"results/store/figures/c2b/fig1/{'f' * 16}/fig1.md"
    assert st.claims_csv == f"results/store/claims/{'c' * 16}/claims.csv"
    assert st.reproduction_md == f"results/store/report/{'r' * 16}/reproduction.md"
    with pytest.raises(ReproError, match="no figure"):
        st.figure_png("c2b", "fig9")


def test_two_configs_never_share_result_files():
    a, b = Layout("results"), Layout("results/test")
    assert a.claims_csv != b.claims_csv and a.cells != b.cells and a.logs != b.logs
    assert b.logs == "logs/test"
    # two seeds in one results_dir share its folders: their stored results differ by name (the cell key covers
    # the base seed: tests/workflow/test_names.py), never by folder


def test_trailing_slash():
    lay = Layout("results/x/")
    assert lay.results_dir == "results/x" and lay.cells == "results/x/cells"


def test_a_layout_holds_paths_only():
    """No config value but the folders (the base seed names results through their keys, not their folders)."""
    assert [f.name for f in fields(Layout)] == ["results_dir", "data_dir", "names", "store"]


def test_under_resolves_relative_folders_only(tmp_path):
    lay = Layout("results").under(tmp_path)
    assert lay.summaries == f"{tmp_path}/results/summaries" and lay.prepared == f"{tmp_path}/data/prepared"
    assert Layout(str(tmp_path / "abs")).under("/elsewhere").results_dir == str(tmp_path / "abs")


def test_the_config_schema_and_default_config_use_the_one_default_seed():
    import yaml

    root = Path(__file__).resolve().parents[2]
    schema = yaml.safe_load((root / "workflow/schemas/config.schema.yaml").read_text())
    assert schema["properties"]["base_seed"]["default"] == DEFAULT_BASE_SEED
    assert yaml.safe_load((root / "config/config.yaml").read_text())["base_seed"] == DEFAULT_BASE_SEED
