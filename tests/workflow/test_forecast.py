"""The CPU forecast and counts of `banditrepro estimate` (banditrepro/workflow/costs.py, estimate.py;
docs/performance.md, "Cost in runs, and the forecast"): a cell's kernel seconds per run come from the sidecars
in the cell's own shard folder (its current key), else from the reference table shipped with the package, else
from the kernel's ns/step; the table covers the default config; the batches and summaries it counts are the
jobs a run starts; it reads no shard and writes nothing; the report says what the forecast is made of. In
process with hand-made sidecars, and against Snakemake's dry run."""

from __future__ import annotations

import builtins
import io
import json
import math
import os
from pathlib import Path

import pytest
import yaml

from banditrepro import jobsize
from banditrepro.workflow import costs
from banditrepro.workflow.estimate import estimate, load_config, report
from banditrepro.workflow.plan import build_plan, split_key
from tests.workflow.common import ROOT, TEST_CONFIG, job_counts, smk


def _test_config() -> dict:
    return yaml.safe_load((ROOT / TEST_CONFIG).read_text())


def _plan(tmp_path, monkeypatch, config=None):
    monkeypatch.chdir(tmp_path)  # the results folder (relative) is looked up from here: empty
    return build_plan(config or _test_config(), ROOT)


def _sidecar(plan, cell, first, times, *, folder=None, **changes):
    """A shard sidecar of ``cell`` as a batch writes it (banditrepro.cell.shard_sidecar), runs first.. with
    kernel CPU ``times``, in the cell's shard folder or ``folder``."""
    dataset, horizon, algo = split_key(cell)
    folder = Path(folder or plan.cell_folder(cell))
    folder.mkdir(parents=True, exist_ok=True)
    side = {"algorithm_id": algo, "instance": dataset, "horizon": horizon,
            "runs": list(range(first, first + len(times))), "kernel_cpu_seconds": list(times),
            "wall_seconds": list(times), "prepared_sha256": "a" * 64, **changes}
    (folder / f"runs{first}-{first + len(times) - 1}.json").write_text(json.dumps(side))


def _sibling(plan, cell, seed=8) -> Path:
    """The same cell's shard folder under another base seed: another key in the same <d>/T<h>/<algo> folder
    (as another code, data or numerics stack would give)."""
    other = build_plan({**_test_config(), "base_seed": seed}, ROOT, scan=False)
    folder = Path(other.cell_folder(cell))
    assert folder.parent == Path(plan.cell_folder(cell)).parent and folder != Path(plan.cell_folder(cell))
    return folder


def test_a_cells_kernel_cost_comes_from_its_sidecars_then_the_table_then_ns_per_step(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch)
    here, table, neither = sorted(plan.cell_runs)[:3]
    reference = {(split_key(c)[2], split_key(c)[0], split_key(c)[1]): 0.5 for c in (here, table)}
    # sidecars of `here` in its shard folder: two shards, one without its .npz (a write killed after the
    # sidecar: its times were measured all the same)
    _sidecar(plan, here, 0, [0.010, 0.020])
    _sidecar(plan, here, 2, [0.030])
    Path(plan.shard(here, 0, 1)).write_bytes(b"")  # an .npz is never read: an empty one changes nothing
    # not counted: a sibling key folder (another seed, or older code: a sidecar does not say which), a sidecar
    # of another cell, one without kernel times, one cut short
    _sidecar(plan, here, 0, [9.0], folder=_sibling(plan, here))
    _sidecar(plan, here, 3, [9.0], algorithm_id="other")
    _sidecar(plan, here, 4, [None], wall_seconds=[9.0])
    (Path(plan.cell_folder(here)) / "runs5-5.json").write_text("{not json")
    kernels = costs.KernelCosts(plan, reference)
    seconds, source = kernels.lookup(here)
    assert source == "measured" and seconds == pytest.approx(0.02)  # (0.01 + 0.02 + 0.03) / 3, not the table's
    assert kernels.lookup(table) == (0.5, "reference")
    _, horizon, algo = split_key(neither)
    assert kernels.lookup(neither) == (pytest.approx(jobsize.kernel_seconds(algo, horizon)), "ns_per_step")
    from banditrepro import algorithms

    ns = algorithms.get(algo.split("+")[0]).cost_ns_per_step
    assert jobsize.kernel_seconds(algo, horizon) == pytest.approx(horizon * ns * 1e-9)
    # without a reference table (an installation without it): sidecars, else ns/step
    bare = costs.KernelCosts(plan, {})
    assert bare.lookup(here)[1] == "measured" and bare.lookup(table)[1] == "ns_per_step"
    # only a sibling's sidecars: not measured here
    _sidecar(plan, table, 0, [9.0], folder=_sibling(plan, table))
    assert costs.KernelCosts(plan, {}).lookup(table)[1] == "ns_per_step"


def test_the_estimate_prices_the_shards_to_compute_with_those_costs(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch)
    cells = sorted(plan.cell_runs)
    measured_cell = cells[0]
    _sidecar(plan, measured_cell, 100, [1.0, 3.0])  # a sidecar of runs the plan does not hold still measures
    table = {(split_key(c)[2], split_key(c)[0], split_key(c)[1]): 0.25 for c in cells[1:]}
    monkeypatch.setattr(costs, "load_reference", lambda path=costs.REFERENCE: table)
    n = estimate(plan)
    # nothing computed yet: every shard (an optional dataset not probed yet counts as available)
    todo = [(c, a, b) for c, held in plan.cell_shards.items() for a, b in held]
    assert n["new_shards"] == len(todo) and n["batches"] == len(plan.batches)
    runs = {c: sum(b - a + 1 for cc, a, b in todo if cc == c) for c in {c for c, _, _ in todo}}
    assert n["new_runs"] == sum(runs.values())
    expected = sum(r * (2.0 if c == measured_cell else 0.25) for c, r in runs.items())
    assert n["kernel_cpu_seconds"] == pytest.approx(expected)
    assert n["kernel_sources"] == {"measured": 1, "reference": len(runs) - 1, "ns_per_step": 0}
    assert n["rest_cpu_seconds"] == pytest.approx(costs.pipeline_seconds(n["new_shards"], n["new_runs"]))
    assert n["cpu_hours"] == pytest.approx((n["kernel_cpu_seconds"] + n["rest_cpu_seconds"]) / 3600)
    assert n["estimated_minutes"] == pytest.approx([b.seconds / 60 for b in plan.batches])
    assert n["requested_minutes"] == [b.minutes(1) for b in plan.batches]


def _make_shards(plan, every: int) -> list:
    """Every ``every``-th shard of the plan made, as empty files (reading one would fail), with a sidecar."""
    made = plan.all_shards()[::every]
    for cell, a, b in made:
        Path(plan.shard(cell, a, b)).parent.mkdir(parents=True, exist_ok=True)
        Path(plan.shard(cell, a, b)).write_bytes(b"")
        _sidecar(plan, cell, a, [0.01] * (b - a + 1))
    return made


def _unavailable(plan) -> set:
    """Every optional dataset probed unavailable (its probe's verdict on disk, as the checkpoint leaves it)."""
    optional = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d)}
    for d in optional:
        path = Path(plan.layout.status_file(d))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"available": False, "dataset": d, "reason": "no network in this test"}))
    return optional


def _tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(folder.rglob("*"))}


def test_the_estimate_reads_no_shard_and_writes_nothing(tmp_path, monkeypatch):
    """`banditrepro estimate` is read-only: planning lists the cells' folders, the forecast reads sidecars,
    and whether a summary or store entry is to be made is whether its file exists."""
    config = _test_config()
    first = _plan(tmp_path, monkeypatch, dict(config))
    made = _make_shards(first, every=2)
    cell, a, b = next(s for s in first.all_shards() if s not in made)
    _sidecar(first, cell, a, [0.01] * (b - a + 1))  # a write killed after the sidecar: the shard is missing
    skipped = _unavailable(build_plan(dict(config), ROOT, scan=False))
    before = _tree(tmp_path)
    opened = []
    real_open, real_io_open, real_os_open = builtins.open, io.open, os.open

    def spy(real):
        def open_(file, mode="r", *args, **kwargs):
            opened.append((str(file), mode))
            return real(file, mode, *args, **kwargs)
        return open_

    def os_spy(path, flags, *args, **kwargs):
        opened.append((str(path), "w" if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) else "r"))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy(real_open))
    monkeypatch.setattr(io, "open", spy(real_io_open))
    monkeypatch.setattr(os, "open", os_spy)
    plan = build_plan(config, ROOT)
    numbers = estimate(plan)
    report(numbers)
    monkeypatch.undo()
    assert not [f for f, mode in opened if any(c in str(mode) for c in "wax+")]
    assert not [f for f, _ in opened if f.endswith(".npz")]
    assert any(f.endswith(".json") and "/cells/" in f for f, _ in opened)  # it did read sidecars
    assert _tree(tmp_path) == before
    # and it priced what is missing: the shards not made, of the datasets a run computes
    kept = [s for s in plan.all_shards() if s not in made and split_key(s[0])[0] not in skipped]
    assert numbers["new_shards"] == len(kept) > 0


@pytest.mark.workflow
@pytest.mark.parametrize("cluster", [False, True], ids=["local", "cluster"])
def test_the_estimate_counts_the_jobs_a_dry_run_lists(tmp_path, monkeypatch, cluster):
    """Some shards exist: the batches estimate counts (only missing shards are packed) are the `simulate`
    jobs Snakemake plans (SLURM submissions in cluster mode, each after its spec), and its summaries and
    figures are the dry run's."""
    overrides = ["batch_minutes=1e1"] if cluster else []
    config = load_config(ROOT, [ROOT / TEST_CONFIG], overrides)
    plan = _plan(tmp_path, monkeypatch, json.loads(json.dumps(config)))
    made = _make_shards(plan, every=3)
    skipped = _unavailable(plan)
    numbers = estimate(build_plan(config, ROOT))
    r = smk("-n", "--directory", str(tmp_path), "--configfile", str(ROOT / TEST_CONFIG),
            *(["--config", *overrides] if overrides else []))
    assert r.returncode == 0, r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    missing = [s for s in plan.all_shards() if s not in made and split_key(s[0])[0] not in skipped]
    assert numbers["new_shards"] == len(missing) > 0
    assert counts["simulate"] == numbers["batches"] > 0
    assert counts.get("batch_spec", 0) == (numbers["batches"] if cluster else 0)
    assert counts["summarize_cell"] == numbers["summaries"] and counts["figure"] == numbers["figures"]


def test_the_rest_of_the_pipeline_is_paid_when_something_is_computed():
    assert costs.pipeline_seconds(0, 0) == 0
    assert costs.PIPELINE_FIXED > 0 and costs.PIPELINE_PER_SHARD >= 0 and costs.PIPELINE_PER_RUN >= 0
    assert costs.pipeline_seconds(10, 200) == pytest.approx(
        costs.PIPELINE_FIXED + 10 * costs.PIPELINE_PER_SHARD + 200 * costs.PIPELINE_PER_RUN)


# measured on the reference machine, default config, warm, each in an empty results folder: runs -> (shards,
# runs in cells, kernel CPU-s, CPU-s of the whole run) (docs/performance.md, "Cost in runs, and the forecast")
MEASURED = {20: (196, 9_180, 78.5, 102.1), 100: (292, 21_900, 326.9, 356.1), 200: (444, 37_800, 633.8, 665.4)}


@pytest.mark.parametrize("runs", sorted(MEASURED))
def test_the_forecast_of_the_default_config_is_within_20_percent_of_the_measured_cpu(tmp_path, monkeypatch, runs):
    """What issue 31 asks: the reference table and the pipeline's constants reproduce the documented
    measurement (cells of the optional network dataset aside: the measured runs had no network)."""
    config = load_config(ROOT, overrides=[f"runs={runs}", "results_dir=results/nothing-here"])
    monkeypatch.chdir(tmp_path)
    plan = build_plan(config, ROOT, scan=False)
    optional = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d)}
    cells = {c: n for c, n in plan.cell_runs.items() if split_key(c)[0] not in optional}
    shards, held, kernel, cpu = MEASURED[runs]
    assert (sum(len(plan.cell_shards[c]) for c in cells), sum(cells.values())) == (shards, held)
    kernels = costs.KernelCosts(plan)
    forecast = sum(n * kernels.lookup(c)[0] for c, n in cells.items())
    assert {kernels.lookup(c)[1] for c in cells} == {"reference"}
    assert abs(forecast / kernel - 1) < 0.2
    assert abs((forecast + costs.pipeline_seconds(shards, held)) / cpu - 1) < 0.2


def test_the_reference_table_covers_every_cell_of_the_default_config(tmp_path, monkeypatch):
    """A config change (a new algorithm, parameter, dataset or horizon) without a new table fails here."""
    config = load_config(ROOT, overrides=["results_dir=results/nothing-here"])
    monkeypatch.chdir(tmp_path)
    plan = build_plan(config, ROOT, scan=False)
    table = costs.load_reference()
    optional = {d for d in plan.catalog.datasets if plan.catalog.is_optional(d)}  # network only: not measured
    wanted = {(a, d, h) for d, h, a in map(split_key, plan.cell_runs) if d not in optional}
    missing = sorted(wanted - set(table))
    assert not missing, (f"{len(missing)} cells of the default config are not in {costs.REFERENCE.name}, e.g. "
                         f"{missing[:3]}: after a warm default run, regenerate it with {costs.CALIBRATE}")
    assert all(math.isfinite(s) and s > 0 for s in table.values())


def test_the_reference_table_is_package_data():
    """An installed (not editable) package has the table: pyproject's package-data names it."""
    import fnmatch
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    rel = "/".join(costs.REFERENCE.parts[-3:])  # banditrepro/workflow/kernel_costs.csv
    assert costs.REFERENCE.is_file()
    assert any(fnmatch.fnmatch(rel, f"{package.replace('.', '/')}/{pattern}")
               for package, patterns in data.items() for pattern in patterns), data


def test_calibrating_writes_the_mean_kernel_seconds_of_a_results_folder(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch)
    a, b = sorted(plan.cell_runs)[:2]
    _sidecar(plan, a, 0, [0.1, 0.2])
    _sidecar(plan, a, 2, [0.3])
    _sidecar(plan, a, 0, [9.0], folder=_sibling(plan, a))  # another key: maybe older code, not this code's speed
    _sidecar(plan, b, 0, [0.4])
    rows = costs.calibrate(plan)
    out = tmp_path / "table.csv"
    costs.write_reference(rows, out, "measured here\nin a test")
    assert out.read_text().startswith("# measured here\n# in a test\nalgorithm_id,")
    key = lambda c: (split_key(c)[2], split_key(c)[0], split_key(c)[1])  # noqa: E731
    assert costs.load_reference(out) == pytest.approx({key(a): 0.2, key(b): 0.4})
    assert sorted(r["runs"] for r in rows) == [1, 3]
    assert costs.load_reference(tmp_path / "absent.csv") == {}


def test_the_report_gives_the_forecast_cpu_as_kernels_plus_the_rest_and_where_the_kernel_costs_came_from():
    numbers = {"cells": 3, "shards": 5, "new_shards": 4, "new_runs": 60, "batches": 2, "cluster": False,
               "estimated_minutes": [0.1, 0.2], "requested_minutes": [6, 6], "cpu_hours": 105.4 / 3600,
               "kernel_cpu_seconds": 81.2, "rest_cpu_seconds": 24.2,
               "kernel_sources": {"measured": 1, "reference": 2, "ns_per_step": 0}, "files": 40, "bytes": 2e6}
    lines = report(numbers).splitlines()
    assert ("CPU forecast: 0.03 CPU-hours (105 CPU-s): kernels 81, the rest of the pipeline 24 (Snakemake, shard "
            "files, summaries, figures, report)") in lines
    assert ("kernel costs of the 3 cells: 1 measured in this results folder, 2 from the reference machine's "
            "table, 0 from the kernels' ns/step") in lines
    assert not any("ms per run" in line for line in lines)
    nothing = report({**numbers, "batches": 0, "new_shards": 0, "new_runs": 0})
    assert "CPU forecast" not in nothing
    assert "summaries to make: 7; figures: 2" in report({**numbers, "summaries": 7, "figures": 2}).splitlines()
