"""The workflow end to end: lint, and real runs in a copy of the project: a small paper-like config
(results/), then the test config beside it (results/test), a `cp -a` copy of the finished folder, and manifest
edits that rerun only what they touch. The runs are session fixtures (tests/workflow/conftest.py)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from banditrepro.verdicts import VERDICTS
from tests.workflow.common import (
    MIRROR_ARG,
    ROOT,
    TEST_CELLS,
    TEST_CONFIG,
    TEST_RESULTS,
    job_counts,
    smk,
    tree_digest,
)

pytestmark = pytest.mark.workflow


def test_lint():
    r = smk("--lint")
    assert r.returncode == 0, r.stdout + r.stderr


def test_rules_are_snakefmt_formatted():
    r = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# --- real runs in a copy of the project --------------------------------------------------------------------

def test_copied_project_folder_has_nothing_to_do(project, tmp_path):
    moved = tmp_path / "moved"
    subprocess.run(["cp", "-a", str(project), str(moved)], check=True)
    r = smk("-n", "--configfile", "paper.yaml", cwd=moved)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Nothing to be done" in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]


def _edit_manifest(folder: Path, edit) -> None:
    path = folder / "config/figures/c2b.yaml"
    doc = yaml.safe_load(path.read_text())
    edit(doc["c2b"]["figures"])
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _tweak_tolerance(figures) -> None:
    """Move the first numeric claim parameter by 1 % (a tolerance edit that keeps the claim valid)."""
    for fig in figures.values():
        for claim in fig.get("claims", []):
            for k, v in claim["test"].items():
                if isinstance(v, float):
                    claim["test"][k] = v * 1.01
                    return
    raise AssertionError("no numeric claim parameter in c2b.yaml")


def test_manifest_edits_rerun_only_what_they_touch(project, tmp_path):
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(project), str(copy)], check=True)
    _edit_manifest(copy, _tweak_tolerance)
    r = smk("-n", "--configfile", "paper.yaml", cwd=copy)
    assert r.returncode == 0, r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert counts.get("claims") == 1 and counts.get("report_md") == 1, counts
    assert not [k for k in counts if k.startswith(("simulate", "summarize", "figure", "prepare"))], counts

    def relabel(figs):
        axes = figs["fig1"].setdefault("axes", {})
        axes["y"] = axes.get("y", "regret") + " (edited)"

    _edit_manifest(copy, relabel)
    # `--quiet host`: the per-job blocks back (the profile hides them), to see which figure is scheduled
    r = smk("-n", "--quiet", "host", "--configfile", "paper.yaml", cwd=copy)
    counts = job_counts(r.stdout + r.stderr)
    assert counts.get("figure") == 1 and counts.get("claims") == 1, counts
    assert "results/figures/c2b/fig1.png" in r.stdout + r.stderr
    assert not [k for k in counts if k.startswith(("simulate", "summarize", "prepare"))], counts


def test_the_test_config_leaves_the_paper_results_untouched(test_run):
    project, before = test_run
    after = tree_digest(project / "results", skip=str(project / TEST_RESULTS))
    assert after == before  # same bytes and the same mtimes: not even rewritten
    r = smk("-n", "--configfile", "paper.yaml", cwd=project)
    assert "Nothing to be done" in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]
    assert (project / TEST_CELLS).is_dir() and (project / TEST_RESULTS / "report.md").exists()


def test_run_produces_figures_tables_claims_report(test_run):
    root = test_run[0] / TEST_RESULTS
    for fig in ("fig1", "fig2", "all-algorithms"):
        for ext in ("png", "pdf"):
            assert (root / f"figures/c2b/{fig}.{ext}").stat().st_size > 1000
        table = pd.read_csv(root / f"tables/c2b/{fig}.csv")
        assert {"mean_final_regret", "se", "ci95_low", "ci95_high", "batches_mean", "runs"} <= set(table.columns)
    t1 = pd.read_csv(root / "tables/c2b/fig1.csv")
    ran = t1[t1.status == "ok"]
    assert (ran.runs == 2).all() and (ran.horizon == 2000).all()
    assert set(ran.dataset) == {"six-rankers", "sushi16", "irish-meath12", "irish-dublin8", "mslr30"}
    # a figure asking for more runs (weak regret: 200) gets them, up to the test config's max_runs
    weak = pd.read_csv(root / "tables/winner-stays/fig2-weak-regret.csv")
    assert (weak[weak.status == "ok"].runs == 3).all()
    # yahoo30 is not obtainable offline: marked, not substituted, and the run still succeeded
    yahoo = t1[t1.dataset == "yahoo30"]
    assert (yahoo.status == "not-run").all() and yahoo.note.str.contains("requires network access").all()
    claims = pd.read_csv(root / "claims.csv")
    assert (claims.paper == "c2b").sum() == 8 and set(claims.verdict) <= set(VERDICTS)
    repro = (root / "reproduction.md").read_text()
    assert all(f"`{cid}`" in repro for cid in claims.claim_id) and "| c2b-pairs-once |" in repro
    assert (root / "report.md").read_text().count("![") >= 3
    for fig in ("fig1", "fig2"):
        assert (root / f"tables/c2b/{fig}.tex").read_text().startswith("\\begin{table}")
        assert (root / f"tables/c2b/{fig}.md").read_text().startswith("| paper |")


def test_batched_algorithms_report_batches(test_run):
    t1 = pd.read_csv(test_run[0] / TEST_RESULTS / "tables/c2b/fig1.csv")
    c2b = t1[(t1.algorithm == "c2b") & (t1.status == "ok")]
    B = int(np.floor(np.log(2000)))
    assert (c2b.batches_max >= 1).all() and (c2b.batches_max <= B + 1).all()


def test_cells_match_the_cli_array_for_array(test_run, tmp_path):
    """`banditrepro simulate` of one run writes that run's arrays exactly as the workflow's shard holds them."""
    import numpy as np

    from banditrepro.cell import SHARED_KEYS, load_npz, load_runs

    project = test_run[0]
    (shard,) = (project / TEST_CELLS / "sushi16/T2000/rmed1").glob("*/runs0-*.npz")
    block = load_runs(shard)
    out = tmp_path / "again.npz"
    r = subprocess.run([sys.executable, "-m", "banditrepro", "simulate", "--algorithm", "rmed1", "--dataset",
                        "sushi16", "--prepared-dir", str(project / "data/prepared"), "--horizon", "2000",
                        "--seed", "1", "--base-seed", "7", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    one = load_npz(out)
    i = list(block["run"]).index(1)
    assert sorted(one) == sorted(block)
    for key, value in one.items():
        expected = block[key] if key in SHARED_KEYS else block[key][i]
        assert np.array_equal(np.asarray(value), np.asarray(expected)), key


def test_in_process_figures_and_claims_match_the_cli(test_run, tmp_path):
    """The workflow draws figures and checks claims inside the Snakemake process (threads); the
    standalone CLI must write the same table and PNG bytes and the same claims."""
    project = test_run[0]
    # run from an empty folder: every path comes from the options (the test config's results_dir included)
    cwd = tmp_path / "cli"
    cwd.mkdir()
    cli = [sys.executable, "-m", "banditrepro"]
    common = ["--papers", "c2b", "dp-ts-ucb", "winner-stays", "--max-horizon", "2000",
              "--manifest", str(project / "config/figures"), "--status-dir", str(project / "data/status"),
              "--prepared-dir", str(project / "data/prepared"), "--results-dir", str(project / TEST_RESULTS)]
    for stem in ("c2b/fig1", "winner-stays/preference-matrices"):
        out = {k: tmp_path / f"{stem.replace('/', '-')}.{k}" for k in ("png", "pdf", "csv")}
        r = subprocess.run([*cli, "figure", stem, *common, "--png", str(out["png"]), "--pdf", str(out["pdf"]),
                            "--table", str(out["csv"])], cwd=cwd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        for ext, sub in (("csv", "tables"), ("png", "figures")):
            assert out[ext].read_bytes() == (project / TEST_RESULTS / sub / f"{stem}.{ext}").read_bytes(), (stem, ext)
    r = subprocess.run([*cli, "claims", *common, "--out", str(tmp_path / "claims.csv")], cwd=cwd,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "claims.csv").read_text() == (project / TEST_RESULTS / "claims.csv").read_text()


def _receipts_holding(results: Path, shard: Path) -> list[Path]:
    rel = str(shard.relative_to(results / "cells/seed7"))
    return [p for p in sorted((results / "batches").glob("*.json")) if rel in json.loads(p.read_text())["shards"]]


def _computed(results: Path) -> list[str]:
    return [ln.split()[0] for ln in (results / "logs/shards-computed.log").read_text().splitlines()]


def test_interrupted_run_resumes_without_recomputing(test_run):
    project = test_run[0]
    results = project / TEST_RESULTS
    cells = sorted(results.rglob("*.npz"))
    (victim,) = (project / TEST_CELLS / "six-rankers/T2000/btm").glob("*/runs0-*.npz")
    summary = results / "summaries/six-rankers/T2000/btm.npz"
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in cells if p not in (victim, summary)}
    computed = _computed(results)
    # the state a kill leaves: this shard, its batch's receipt (written last) and everything downstream of
    # it not written yet
    receipts = _receipts_holding(results, victim)
    assert len(receipts) == 1
    for p in (victim, summary, *receipts):
        p.unlink()
    for sub in ("figures", "tables"):
        shutil.rmtree(results / sub)
    for name in ("claims.csv", "report.md"):
        (results / name).unlink()
    (victim.parent / f".{victim.name}.leftover.part").write_bytes(b"half a file")  # what a kill leaves behind
    r = smk("--configfile", TEST_CONFIG, *MIRROR_ARG, "--cores", "2", cwd=project)
    assert r.returncode == 0, r.stderr[-3000:]
    assert victim.exists() and (results / "report.md").exists() and receipts[0].exists()
    # only the victim was computed again: every other shard and summary is untouched
    redone = [p for p, (m, _) in before.items() if p.stat().st_mtime_ns != m]
    assert not [p for p in redone if "cells" in p.parts], redone
    assert _computed(results) == computed + [str(victim.relative_to(results / "cells/seed7"))]
    meta = json.loads(victim.with_suffix(".json").read_text())
    assert meta["runs"] == [0, 1] and meta["horizon"] == 2000 and len(meta["prepared_sha256"]) == 64


def test_a_shard_deleted_by_hand_is_computed_by_the_next_run(test_run, tmp_path):
    """A shard gone after its batch finished: the plan checks every receipt against its shards, so the next
    run (a dry run first: it shows the same plan) computes that shard alone, and the numbers are as before."""
    project = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(test_run[0]), str(project)], check=True)
    results = project / TEST_RESULTS
    (victim,) = (project / TEST_CELLS / "sushi16/T2000/rucb").glob("*/runs0-*.npz")
    (receipt,) = _receipts_holding(results, victim)
    computed = _computed(results)
    victim.unlink()
    command = ["--configfile", TEST_CONFIG, *MIRROR_ARG]
    r = smk("-n", *command, cwd=project)
    assert r.returncode == 0, r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert counts["simulate"] == 1 and counts["summarize_cell"] == 1, counts
    assert f"batch {receipt.stem} has a shard missing or incomplete: it runs again" in r.stderr
    r = smk(*command, "--cores", "2", cwd=project)
    assert r.returncode == 0, r.stderr[-3000:]
    assert victim.exists() and receipt.exists()
    assert _computed(results) == computed + [str(victim.relative_to(results / "cells/seed7"))]
    assert (results / "claims.csv").read_bytes() == (test_run[0] / TEST_RESULTS / "claims.csv").read_bytes()
    r = smk("-n", *command, cwd=project)
    assert "Nothing to be done" in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]


def test_html_report_has_a_caption_per_figure(test_run):
    project = test_run[0]
    r = smk("--configfile", TEST_CONFIG, *MIRROR_ARG, "--report", str(project / "report.html"), cwd=project)
    assert r.returncode == 0, r.stderr[-3000:]
    html = (project / "report.html").read_text()
    assert html.count("Configuration: 2 runs per line") >= 3
