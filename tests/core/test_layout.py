"""The one object that knows every path: the layout the rules, jobs, CLI and report share."""

from pathlib import Path

from banditrepro.layout import DEFAULT_BASE_SEED, Layout


def test_default_layout_matches_the_documented_tree():
    lay = Layout()
    cells = f"results/cells/seed{DEFAULT_BASE_SEED}"
    shard = f"{cells}/sushi16/T100000/rucb/0123abcd/runs3-9.npz"
    assert lay.shard("sushi16", 100000, "rucb", "0123abcd", 3, 9) == shard
    assert lay.summary("sushi16", 100000, "rucb") == "results/summaries/sushi16/T100000/rucb.npz"
    assert lay.figure_outputs("c2b", "fig1") == [
        "results/figures/c2b/fig1.png", "results/figures/c2b/fig1.pdf",
        "results/tables/c2b/fig1.csv", "results/tables/c2b/fig1.md", "results/tables/c2b/fig1.tex"]
    assert lay.prepared_file("mslr5") == "data/prepared/mslr5.json"
    assert lay.logs == "logs"


def test_two_configs_never_share_result_files():
    a, b = Layout("results"), Layout("results/test", base_seed=7)
    assert a.claims_csv != b.claims_csv and a.cells != b.cells and a.logs != b.logs
    assert b.logs == "logs/test"
    # a new base seed in the same results_dir gets its own cells (figures and claims are replaced)
    assert Layout("results", 1).cells != Layout("results", 2).cells


def test_from_config_and_trailing_slash():
    lay = Layout.from_config({"results_dir": "results/x/", "base_seed": 5})
    assert lay.results_dir == "results/x" and lay.cells == "results/x/cells/seed5"
    assert Layout.from_config({}).base_seed == DEFAULT_BASE_SEED


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
