"""The workflow end to end: lint, dry runs of the default config, one-line config errors, and real runs
in a copy of the project: a small paper-like config (results/), then the test config beside it
(results/test), a `cp -a` copy of the finished folder, and manifest edits that rerun only what they touch."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from banditrepro import jobsize
from banditrepro.manifest import cell_runs, load_manifest
from banditrepro.verdicts import VERDICTS

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "data"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
TEST_CONFIG = ".test/config/config.yaml"
TEST_RESULTS = "results/test"  # results_dir of the test config
TEST_CELLS = f"{TEST_RESULTS}/cells/seed7"
MIRROR_ARG = ["--config", f"data_mirrors=['{MIRROR}']"]  # the project copy is not beside ../shared/data

pytestmark = pytest.mark.workflow


def smk(*args, cwd=ROOT, snakefile=ROOT / "Snakefile", timeout=1500):
    env = {**os.environ, "PYTHONPATH": str(Path(snakefile).parent / "src")}  # shell jobs use this checkout
    return subprocess.run([*SNAKEMAKE, "-s", str(snakefile), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def job_counts(out: str) -> dict[str, int]:
    """The job-stats table of a dry run: rule -> count."""
    return {ln.split()[0]: int(ln.split()[1]) for ln in out.splitlines()
            if len(ln.split()) == 2 and ln.split()[1].isdigit()}


def error_lines(r) -> list[str]:
    """What a user sees on a failed parse, minus Snakemake's two start-up notices."""
    return [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip() and not ln.startswith(
        ("Using workflow specific profile", "Config file "))]


def test_lint():
    r = smk("--lint")
    assert r.returncode == 0, r.stdout + r.stderr


def test_rules_are_snakefmt_formatted():
    r = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _default_cells():
    from banditrepro.datasets.catalog import load_catalog

    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    catalog = load_catalog(ROOT / "config/datasets.yaml")
    figures = load_manifest(ROOT / "config/figures", papers=cfg["papers"], datasets=set(catalog.datasets))
    runs = cell_runs(figures, cfg["runs"])
    return figures, {c: n for c, n in runs.items() if not catalog.is_optional(c[0])}


def test_cell_runs_take_the_most_any_figure_asks_and_the_cap():
    figures, runs = _default_cells()
    weak = next(f for f in figures if f.stem == "winner-stays/fig2-weak-regret")
    assert weak.runs == 200
    for p in weak.panels:
        for a in p.algorithms:
            assert runs[(p.dataset, p.horizon, a.id)] == 200  # heavy-tailed weak regret
    fig1 = next(f for f in figures if f.stem == "c2b/fig1")
    assert {runs[(p.dataset, p.horizon, a.id)] for p in fig1.panels for a in p.algorithms
            if (p.dataset, p.horizon, a.id) in runs} == {20}
    capped = cell_runs(figures, 2, max_runs=3)
    assert max(capped.values()) == 3 and min(capped.values()) == 2


def test_auto_job_size_groups_short_runs_and_keeps_long_ones_apart():
    # C2B-KL at T = 1e5 (~1 ms a run): all 20 runs in one job; Lazy-DP-TS at T = 1e6 (~0.4 s): 5 per ~2 s job;
    # SCB at T = 1e6 (~1.1 s): one each
    assert jobsize.runs_per_job("c2b-kl+B_offset=6", 100_000, 20) == 20
    assert jobsize.runs_per_job("lazy-dp-ts", 1_000_000, 20) == 5
    assert jobsize.runs_per_job("scb", 1_000_000, 20) == 1
    assert 1 < jobsize.runs_per_job("rucb", 100_000, 200) < 200
    assert jobsize.runs_per_job("a-plugin-algorithm", 10_000_000, 20) == 1  # unknown: assumed slow
    assert jobsize.chunks(7, 3) == [(0, 2), (3, 5), (6, 6)]
    for name, T in (("rucb", 100_000), ("c2b", 1_000_000), ("ws-w", 100_000)):
        k = jobsize.runs_per_job(name, T, 200)
        assert k * jobsize.run_seconds(name, T) <= jobsize.TARGET_SECONDS or k == 1


def test_scheduler_keeps_one_pending_reevaluation_timer():
    """workflow/rules/scheduling.smk: Snakemake starts a re-evaluation timer per scheduling pass and each timer
    starts the next pass (56,000 passes for 432 jobs); the patch keeps one pending, daemon timer."""
    import inspect
    import threading
    import time

    from snakemake.scheduling.job_scheduler import JobScheduler

    ns = {}
    exec((ROOT / "workflow/rules/scheduling.smk").read_text(), ns)

    class Scheduler:
        def __init__(self):
            self._open_jobs = threading.Semaphore(0)

        def _schedule_reevalutation(self, delay):
            raise AssertionError("not patched")

    s = Scheduler()
    assert ns["coalesce_reevaluation_timers"](s)
    before = threading.active_count()
    for _ in range(100):  # 100 scheduling passes within one window
        s._schedule_reevalutation(0.05)
    assert threading.active_count() <= before + 1
    assert all(t.daemon for t in threading.enumerate() if isinstance(t, threading.Timer))
    assert s._open_jobs.acquire(timeout=2)  # the one timer wakes the scheduler once...
    time.sleep(0.2)
    assert not s._open_jobs.acquire(blocking=False)  # ...and only once
    s._schedule_reevalutation(0.01)  # once it fired, the next pass can start a new one
    assert s._open_jobs.acquire(timeout=2)
    assert not ns["coalesce_reevaluation_timers"](object())  # other internals: left alone, says so
    # the installed Snakemake has the internals the patch replaces (else runs are silently ~2x slower)
    assert hasattr(JobScheduler, "_schedule_reevalutation")
    assert "self._open_jobs" in inspect.getsource(JobScheduler.__init__)


def test_dry_run_of_the_default_config_groups_the_runs_of_every_cell(tmp_path):
    r = smk("-n", "--directory", str(tmp_path), "--workflow-profile", str(ROOT / "profiles/default"))
    assert r.returncode == 0, r.stderr
    counts = job_counts(r.stdout + r.stderr)
    _, runs = _default_cells()
    expected = sum(len(jobsize.chunks(n, jobsize.runs_per_job(c[2], c[1], n))) for c, n in runs.items())
    simulate = sum(v for k, v in counts.items() if k.startswith("simulate"))
    assert simulate == expected
    # auto grouping: far fewer jobs than run files (one job per run was 2,436 jobs for 2,300 runs)
    assert counts["total"] < sum(runs.values()) / 3
    assert counts["summarize_cell"] == len(runs) and counts["claims"] == 1 and counts["figure"] >= 10


def test_config_errors_are_one_line_naming_key_and_value(tmp_path):
    for text, key, value in (("runs: 2\nrunz: 3\n", "runz", "runz"), ("runs: 0\n", "runs", "0"),
                             ("cells_per_job: often\n", "cells_per_job", "often"),
                             ("results_dir: /tmp/x\n", "results_dir", "/tmp/x")):
        cfg = tmp_path / "c.yaml"
        cfg.write_text(text)
        r = smk("-n", "--directory", str(tmp_path), "--configfile", str(cfg))
        lines = error_lines(r)
        assert r.returncode != 0 and len(lines) == 1, lines
        assert key in lines[0] and value in lines[0] and "Traceback" not in r.stderr


def test_a_claim_kind_typo_fails_the_dry_run_naming_figure_and_claim(tmp_path):
    manifest = tmp_path / "c2b.yaml"
    text = (ROOT / "config/figures/c2b.yaml").read_text()
    doc = yaml.safe_load(text)
    fig_id, fig = next((k, f) for k, f in doc["c2b"]["figures"].items() if f.get("claims"))
    claim = fig["claims"][0]
    claim["test"]["kind"] += "z"
    manifest.write_text(yaml.safe_dump(doc))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"manifest: {manifest}\npapers: [c2b]\n")
    r = smk("-n", "--directory", str(tmp_path), "--configfile", str(cfg))
    lines = error_lines(r)
    assert r.returncode != 0 and len(lines) == 1, lines
    assert f"c2b/{fig_id}" in lines[0] and claim["id"] in lines[0] and claim["test"]["kind"] in lines[0]


def test_unknown_algorithm_in_manifest_is_named(tmp_path):
    manifest = tmp_path / "figures.yaml"
    manifest.write_text((ROOT / "config/figures/c2b.yaml").read_text().replace("name: btm", "name: btmx", 1))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"manifest: {manifest}\n")
    r = smk("-n", "--directory", str(tmp_path), "--configfile", str(cfg))
    assert r.returncode != 0 and "unknown algorithm 'btmx'" in r.stdout + r.stderr


# --- real runs in a copy of the project --------------------------------------------------------------------

PAPER_LIKE = """# a small stand-in for the paper config: default results_dir (results/), its own seed
papers: [c2b]
runs: 2
max_horizon: 300
base_seed: 11
data_mirrors: [{mirror}]
"""


def tree_digest(folder: Path, skip: str | None = None) -> dict[str, tuple[int, str]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(folder.rglob("*")) if p.is_file() and not (skip and str(p).startswith(skip))}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project (code, config, profiles) holding a finished small paper-like run in results/."""
    if not MIRROR.is_dir():
        pytest.skip("offline data mirror ../shared/data not present")
    proj = tmp_path_factory.mktemp("e2e") / "project"
    proj.mkdir()
    for name in ("Snakefile", "workflow", "config", "profiles", "src", "envs", ".test"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, proj / name)
    (proj / "paper.yaml").write_text(PAPER_LIKE.format(mirror=MIRROR))
    r = smk("--configfile", "paper.yaml", "--cores", "2", cwd=proj, snakefile=proj / "Snakefile")
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    # the default profile is quiet: a progress line, not a block per job
    assert "jobs done (100 %)" in r.stderr and len((r.stdout + r.stderr).splitlines()) < 120
    assert (proj / "results/claims.csv").exists() and (proj / "results/cells/seed11").is_dir()
    return proj


@pytest.fixture(scope="module")
def test_run(project):
    """The test config run beside the paper-like results, in the same checkout."""
    before = tree_digest(project / "results")
    r = smk("--configfile", TEST_CONFIG, *MIRROR_ARG, "--cores", "2", cwd=project, snakefile=project / "Snakefile")
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    return project, before


def test_copied_project_folder_has_nothing_to_do(project, tmp_path):
    moved = tmp_path / "moved"
    subprocess.run(["cp", "-a", str(project), str(moved)], check=True)
    r = smk("-n", "--configfile", "paper.yaml", cwd=moved, snakefile=moved / "Snakefile")
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
    r = smk("-n", "--configfile", "paper.yaml", cwd=copy, snakefile=copy / "Snakefile")
    assert r.returncode == 0, r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert counts.get("claims") == 1 and counts.get("report_md") == 1, counts
    assert not [k for k in counts if k.startswith(("simulate", "summarize", "figure", "prepare"))], counts

    def relabel(figs):
        axes = figs["fig1"].setdefault("axes", {})
        axes["y"] = axes.get("y", "regret") + " (edited)"

    _edit_manifest(copy, relabel)
    # `--quiet host`: the per-job blocks back (the profile hides them), to see which figure is scheduled
    r = smk("-n", "--quiet", "host", "--configfile", "paper.yaml", cwd=copy, snakefile=copy / "Snakefile")
    counts = job_counts(r.stdout + r.stderr)
    assert counts.get("figure") == 1 and counts.get("claims") == 1, counts
    assert "results/figures/c2b/fig1.png" in r.stdout + r.stderr
    assert not [k for k in counts if k.startswith(("simulate", "summarize", "prepare"))], counts


def test_the_test_config_leaves_the_paper_results_untouched(test_run):
    project, before = test_run
    after = tree_digest(project / "results", skip=str(project / TEST_RESULTS))
    assert after == before  # same bytes and the same mtimes: not even rewritten
    r = smk("-n", "--configfile", "paper.yaml", cwd=project, snakefile=project / "Snakefile")
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


def test_cells_match_the_cli_byte_for_byte(test_run, tmp_path):
    project = test_run[0]
    cell = project / TEST_CELLS / "sushi16/T2000/rmed1/run1.npz"
    out = tmp_path / "again.npz"
    r = subprocess.run([sys.executable, "-m", "banditrepro", "simulate", "--algorithm", "rmed1", "--dataset",
                        "sushi16", "--prepared-dir", str(project / "data/prepared"), "--horizon", "2000",
                        "--seed", "1", "--base-seed", "7", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == cell.read_bytes()


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


def test_interrupted_run_resumes_without_recomputing(test_run):
    project = test_run[0]
    results = project / TEST_RESULTS
    cells = sorted(results.rglob("*.npz"))
    victim = project / TEST_CELLS / "six-rankers/T2000/btm/run0.npz"
    summary = results / "summaries/six-rankers/T2000/btm.npz"
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in cells if p not in (victim, summary)}
    # the state a kill leaves: this cell and everything downstream of it not written yet
    victim.unlink()
    summary.unlink()
    for sub in ("figures", "tables"):
        shutil.rmtree(results / sub)
    for name in ("claims.csv", "report.md"):
        (results / name).unlink()
    (victim.parent / ".run0.npz.leftover.part").write_bytes(b"half a file")  # what a kill leaves behind
    r = smk("--configfile", TEST_CONFIG, *MIRROR_ARG, "--cores", "2", cwd=project, snakefile=project / "Snakefile")
    assert r.returncode == 0, r.stderr[-3000:]
    assert victim.exists() and (results / "report.md").exists()
    # only the victim's job ran again (it computes the cell's runs together): its siblings, same bytes
    redone = [p for p, (m, _) in before.items() if p.stat().st_mtime_ns != m]
    assert all(p.parent == victim.parent for p in redone), redone
    assert all(p.read_bytes() == before[p][1] for p in redone)
    meta = json.loads(victim.with_suffix(".json").read_text())
    assert meta["run"] == 0 and meta["horizon"] == 2000


def test_html_report_has_a_caption_per_figure(test_run):
    project = test_run[0]
    r = smk("--configfile", TEST_CONFIG, *MIRROR_ARG, "--report", str(project / "report.html"), cwd=project,
            snakefile=project / "Snakefile")
    assert r.returncode == 0, r.stderr[-3000:]
    html = (project / "report.html").read_text()
    assert html.count("Configuration: 2 runs per line") >= 3
