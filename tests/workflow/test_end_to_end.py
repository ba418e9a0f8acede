"""The workflow end to end: lint, and real runs in a copy of the project: a small paper-like config
(results/), then the test config beside it (results/test), `cp -a` copies of the finished folder, and edits
that rerun only what they touch. The runs are session fixtures (tests/workflow/conftest.py).

Every stored result is named by what it derives from and rule `all` publishes the fixed paths
(docs/decisions.md#content-addressing): so a complete folder runs exactly one job, `all`, which rewrites nothing."""

import hashlib
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
    by_hand_folder,
    clone,
    computed,
    job_counts,
    mtimes,
    only_all,
    plan_of,
    smk,
    tree_digest,
)

pytestmark = pytest.mark.workflow

TEST = ["--configfile", TEST_CONFIG, *MIRROR_ARG]


def test_lint():
    r = smk("--lint")
    assert r.returncode == 0, r.stdout + r.stderr


def test_rules_are_snakefmt_formatted():
    r = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# --- real runs in a copy of the project --------------------------------------------------------------------

def test_a_moved_complete_folder_runs_only_all_which_rewrites_nothing(test_run, tmp_path):
    """A `cp -a` copy elsewhere (absolute paths change, mtimes kept): a run runs one job, `all` (its job table;
    a dry run of a moved folder: test_content_addressing.py::test_results_folder_moved_reuses_every_shard_and_
    summary), and rewrites no file under the results folder (same mtimes). A published file edited by hand
    is not overwritten (publishing touches only bytes it wrote: the folder says STALE); moved away, the next
    run puts the store's bytes back (publish compares bytes, not records)."""
    moved = clone(test_run[0], tmp_path / "moved")
    results = moved / TEST_RESULTS
    before = mtimes(results)
    claims = results / "claims.csv"
    original = claims.read_bytes()
    claims.write_text("edited by hand\n")
    r = smk(*TEST, "--cores", "2", cwd=moved)
    assert r.returncode == 0, r.stderr[-3000:]
    assert only_all(r.stdout + r.stderr), job_counts(r.stdout + r.stderr)
    assert claims.read_text() == "edited by hand\n" and "STALE" in r.stdout + r.stderr
    claims.unlink()
    r = smk(*TEST, "--cores", "2", cwd=moved)
    assert r.returncode == 0, r.stderr[-3000:]
    assert only_all(r.stdout + r.stderr), job_counts(r.stdout + r.stderr)
    assert claims.read_bytes() == original
    after = mtimes(results)
    unchanged = lambda m: {k: v for k, v in m.items() if k not in ("claims.csv", "published.json")}  # noqa: E731
    assert unchanged(after) == unchanged(before)


def test_a_second_run_of_a_first_run_runs_only_all(project, tmp_path):
    """The paper-like config's first run in a fresh checkout (data/status empty: the optional dataset was
    probed during that run), then a dry run of the same config: one job, `all`."""
    copy = clone(project, tmp_path / "copy")
    r = smk("-n", "--quiet", "host", "--configfile", "paper.yaml", cwd=copy)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout + r.stderr
    scheduled = sorted({ln.strip() for ln in out.splitlines() if ln.strip().startswith("wildcards: ")})
    assert only_all(out), (job_counts(out), scheduled)


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


def _relabel(figures) -> None:
    axes = figures["fig1"].setdefault("axes", {})
    axes["y"] = axes.get("y", "regret") + " (edited)"


def test_manifest_edits_rerun_only_what_they_touch(test_run, tmp_path):
    """A claim's tolerance renames the claims and the report only; an axis label also its figure's entry; the
    edits undone, the old entries are there again: only `all` (the copy)."""
    copy = clone(test_run[0], tmp_path / "copy")
    manifest = (copy / "config/figures/c2b.yaml").read_text()
    _edit_manifest(copy, _tweak_tolerance)
    r = smk("-n", *TEST, cwd=copy)
    assert r.returncode == 0, r.stderr[-3000:]
    assert job_counts(r.stdout + r.stderr) == {"claims": 1, "report_md": 1, "all": 1, "total": 3}

    _edit_manifest(copy, _relabel)
    # `--quiet host`: the per-job blocks back (the profile hides them), to see which figure is scheduled
    r = smk("-n", "--quiet", "host", *TEST, cwd=copy)
    out = r.stdout + r.stderr
    assert job_counts(out) == {"figure": 1, "claims": 1, "report_md": 1, "all": 1, "total": 4}, job_counts(out)
    assert "wildcards: paper=c2b, figure=fig1, key=" in out

    (copy / "config/figures/c2b.yaml").write_text(manifest)
    r = smk("-n", *TEST, cwd=copy)
    assert only_all(r.stdout + r.stderr), job_counts(r.stdout + r.stderr)


def test_the_test_config_leaves_the_paper_results_untouched(test_run):
    project, before = test_run
    after = tree_digest(project / "results", skip=str(project / TEST_RESULTS))
    assert after == before  # same bytes and the same mtimes: not even rewritten
    # and the paper config still has nothing to do but publish (its own names, its own store entries)
    r = smk("-n", "--configfile", "paper.yaml", cwd=project)
    assert only_all(r.stdout + r.stderr), (r.stdout + r.stderr)[-3000:]
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


def test_every_fixed_path_is_a_copy_of_its_store_entry(test_run, finished_plan):
    """published.json lists every file the plan publishes, each with the store entry it was copied from and
    that entry's key (in its path); the bytes are the entry's."""
    project, plan = test_run[0], finished_plan
    record = json.loads((project / TEST_RESULTS / "published.json").read_text())
    assert record["base_seed"] == 7 and record["results_dir"] == TEST_RESULTS
    # paths relative to the results folder (publish.py), with the sha256 of what was written
    res = project / TEST_RESULTS
    assert {f"{TEST_RESULTS}/{dest}": f"{TEST_RESULTS}/{v['from']}" for dest, v in record["files"].items()} == \
        plan["published"]
    for dest, v in record["files"].items():
        assert f"/{v['key']}/" in v["from"] and (res / dest).read_bytes() == (res / v["from"]).read_bytes()
        assert hashlib.sha256((res / dest).read_bytes()).hexdigest() == v["sha256"]


def test_batched_algorithms_report_batches(test_run):
    t1 = pd.read_csv(test_run[0] / TEST_RESULTS / "tables/c2b/fig1.csv")
    c2b = t1[(t1.algorithm == "c2b") & (t1.status == "ok")]
    B = int(np.floor(np.log(2000)))
    assert (c2b.batches_max >= 1).all() and (c2b.batches_max <= B + 1).all()


def test_cells_match_the_cli_array_for_array(test_run, tmp_path):
    """`banditrepro simulate` of one run writes that run's arrays exactly as the workflow's shard holds them."""
    from banditrepro.cell import SHARED_KEYS, load_npz, load_runs

    project = test_run[0]
    (shard,) = (project / TEST_CELLS / "sushi16/T2000/rmed1").glob("*/runs0-*.npz")
    block = load_runs(shard)
    # the workflow's prepared file, named by its key, where the CLI's flat layout looks for it
    (prepared,) = (project / "data/prepared/sushi16").glob("*.json")
    (tmp_path / "prepared").mkdir()
    shutil.copy(prepared, tmp_path / "prepared/sushi16.json")
    out = tmp_path / "again.npz"
    r = subprocess.run([sys.executable, "-m", "banditrepro", "simulate", "--algorithm", "rmed1", "--dataset",
                        "sushi16", "--prepared-dir", str(tmp_path / "prepared"), "--horizon", "2000",
                        "--seed", "1", "--base-seed", "7", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    one = load_npz(out)
    i = list(block["run"]).index(1)
    assert sorted(one) == sorted(block)
    for key, value in one.items():
        expected = block[key] if key in SHARED_KEYS else block[key][i]
        assert np.array_equal(np.asarray(value), np.asarray(expected)), key


def test_in_process_figures_and_claims_match_the_cli(test_run, finished_plan, tmp_path):
    """The workflow draws figures and checks claims inside the Snakemake process (threads); the
    standalone CLI, given the same summaries and prepared files in a folder made by hand, must write the
    same table and PNG bytes and the same claims."""
    project = test_run[0]
    results, data = by_hand_folder(project, finished_plan, tmp_path / "by-hand")
    # run from an empty folder: every path comes from the options
    cwd = tmp_path / "cli"
    cwd.mkdir()
    cli = [sys.executable, "-m", "banditrepro"]
    common = ["--papers", "c2b", "dp-ts-ucb", "winner-stays", "--max-horizon", "2000",
              "--manifest", str(project / "config/figures"), "--status-dir", str(data / "status"),
              "--prepared-dir", str(data / "prepared"), "--results-dir", str(results)]
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


def _figure_entries(plan: dict, cell: str) -> list[Path]:
    """The store folders of the figures drawing ``cell``."""
    return sorted({Path(f["store"][0]).parent for f in plan["figures"].values() if cell in f["drawn"]})


def test_interrupted_run_resumes_without_recomputing(test_run, finished_plan, tmp_path):
    """The state a kill leaves (one shard not written, a half-written temporary beside it, its summary and
    every store entry after it not made; the older publication still at the fixed paths): the next run
    computes that shard alone, every other shard and summary untouched, and makes the same numbers, so the
    fixed paths are not even rewritten (the run-time table and the report aside: the run times are new)."""
    project = clone(test_run[0], tmp_path / "copy")
    results = project / TEST_RESULTS
    cell = "six-rankers/T2000/btm"
    plan = finished_plan  # the clone's, as it is not edited yet (paths relative to the project)
    (victim,) = (project / s for s in plan["cells"][cell]["shards"])
    summary = project / plan["cells"][cell]["summary"]
    # a summary's .npz holds only numbers drawn from its runs (the kernels' wall seconds, measured again when a
    # shard is computed again, are in its .json sidecar): the same bytes
    numbers = summary.read_bytes()
    kept = {p: m for p, m in mtimes(project / TEST_RESULTS).items()
            if p.startswith(("cells/", "summaries/")) and results / p not in (victim, victim.with_suffix(".json"),
                                                                               summary, summary.with_suffix(".json"))}
    # the run-time table and the report (it shows it) hold the run times measured again: rewritten
    published = {dest: (project / dest).stat().st_mtime_ns for dest in plan["published"]
                 if not dest.endswith(("/tables/runtime.csv", "/report.md"))}
    before = computed(project)
    entries = [project / e for e in _figure_entries(plan, cell)]
    assert entries
    entries += [(project / plan["published"][f"{TEST_RESULTS}/{name}"]).parent
                for name in ("claims.csv", "report.md", "tables/runtime.csv")]
    for p in (victim, summary, summary.with_suffix(".json")):
        p.unlink()
    for e in entries:
        shutil.rmtree(e)
    (victim.parent / f".{victim.name}.leftover.part").write_bytes(b"half a file")  # what a kill leaves behind
    r = smk(*TEST, "--cores", "2", cwd=project)
    assert r.returncode == 0, r.stderr[-3000:]
    assert victim.exists() and all(e.is_dir() for e in entries)
    assert computed(project) == before + [str(victim.relative_to(results))]
    after = mtimes(results)
    assert {p: after[p] for p in kept} == kept  # every other shard and summary: not rewritten
    assert summary.read_bytes() == numbers
    assert {dest: (project / dest).stat().st_mtime_ns for dest in published} == published
    assert not list((results / "batches").glob("*.done"))  # a batch's end is temporary
    meta = json.loads(victim.with_suffix(".json").read_text())
    assert meta["runs"] == [0, 1] and meta["horizon"] == 2000 and len(meta["prepared_sha256"]) == 64


def test_a_shard_deleted_by_hand_changes_nothing_until_its_summary_is_made_again(test_run, tmp_path):
    """A shard gone after its summary was made: the summary, and all made from it, are complete under their
    names, so the next run is `all` alone and publishes the same bytes. A summary asked for again (here
    forced) needs it: the plan sees it missing, and that shard alone is computed, in one batch. (Each run's
    own job table says what it ran: a dry run first would plan the same, ~3 s each.)"""
    project = clone(test_run[0], tmp_path / "copy")
    results = project / TEST_RESULTS
    (victim,) = (project / TEST_CELLS / "sushi16/T2000/rucb").glob("*/runs0-*.npz")
    (summary,) = (results / "summaries/sushi16/T2000/rucb").glob("*.npz")
    before, published = computed(project), mtimes(results)
    victim.unlink()
    r = smk(*TEST, "--cores", "2", cwd=project)
    assert r.returncode == 0 and only_all(r.stdout + r.stderr), (r.stdout + r.stderr)[-3000:]
    assert computed(project) == before and not victim.exists()
    assert mtimes(results) == {k: v for k, v in published.items() if k != str(victim.relative_to(results))}
    # its summary forced: its batch computes the shard, nothing else
    force = ["--force", str(summary.relative_to(project))]
    r = smk(*TEST, *force, "--cores", "2", cwd=project)
    assert r.returncode == 0, r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert counts.get("simulate") == 1 and counts.get("summarize_cell") == 1, counts
    assert not {"prepare_dataset", "fetch_raw", "figure"} & set(counts), counts
    assert victim.exists() and computed(project) == before + [str(victim.relative_to(results))]
    r = smk(*TEST, "--cores", "2", cwd=project)  # the figures after it (same names): the same bytes
    assert r.returncode == 0, r.stderr[-3000:]
    assert (results / "claims.csv").read_bytes() == (test_run[0] / TEST_RESULTS / "claims.csv").read_bytes()
    assert computed(project) == before + [str(victim.relative_to(results))]


def test_a_summary_deleted_by_hand_is_made_again_before_claims_read_it(test_run, tmp_path):
    """The claims read summaries beside the figures' tables (claims/context.py): a summary gone, a claim
    edited, the claims job must not find it missing (it would mark its claims "not run"): the summary is
    made again first, from the shards there (none computed), with the same bytes."""
    project = clone(test_run[0], tmp_path / "copy")
    results = project / TEST_RESULTS
    (summary,) = (results / "summaries/sushi16/T2000/ws-s").glob("*.npz")
    original, before = summary.read_bytes(), computed(project)
    summary.unlink()
    path = project / "config/figures/winner-stays.yaml"
    doc = yaml.safe_load(path.read_text())
    _tweak_tolerance(doc["winner-stays"]["figures"])
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    r = smk(*TEST, "--cores", "2", cwd=project)
    assert r.returncode == 0, r.stderr[-3000:]
    assert summary.read_bytes() == original and computed(project) == before
    old = pd.read_csv(test_run[0] / TEST_RESULTS / "claims.csv")
    new = pd.read_csv(results / "claims.csv")
    assert list(new.claim_id) == list(old.claim_id)
    assert (new.verdict == "not run").sum() == (old.verdict == "not run").sum(), new[new.verdict != old.verdict]


def test_a_batch_end_left_behind_does_not_hide_a_shard_deleted_since(test_run, tmp_path):
    """A run stopped between a batch and its summaries leaves the batch's end (temporary) behind; a shard of
    that batch deleted by hand since gets the same batch name, and Snakemake takes the end for done: the
    summary computes the shard itself (docs/decisions.md#content-addressing, "A stale end marker")."""
    project = clone(test_run[0], tmp_path / "copy")
    results = project / TEST_RESULTS
    cell = "sushi16/T2000/rmed1"
    before = computed(project)
    (victim,) = (project / TEST_CELLS / cell).glob("*/runs0-*.npz")
    (summary,) = (results / "summaries" / cell).glob("*.npz")
    numbers = summary.read_bytes()
    victim.unlink()
    summary.unlink()
    (batch,) = [b for b, shards in plan_of(project, TEST_CONFIG)["batches"].items()
                if str(victim.relative_to(project)) in shards]
    (results / "batches").mkdir(exist_ok=True)
    (results / "batches" / f"{batch}.done").write_text(f"{batch}\n")
    # the summary asked for (as after the stop: the figures drawing it not made yet)
    r = smk(*TEST, "--cores", "2", str(summary.relative_to(project)), cwd=project)
    assert r.returncode == 0, r.stderr[-3000:]
    assert job_counts(r.stdout + r.stderr) == {"summarize_cell": 1, "total": 1}
    assert computed(project) == before + [str(victim.relative_to(results))]
    assert summary.read_bytes() == numbers
