"""The CPU forecast of `banditrepro estimate` (banditrepro/workflow/costs.py; docs/performance.md, "Cost in
runs, and the forecast"): a cell's kernel seconds per run come from the sidecars in the results folder, else
from the reference table shipped with the package, else from the kernel's ns/step; the table covers the
default config; the report says what the forecast is made of. In process, with hand-made sidecars."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from banditrepro import jobsize
from banditrepro.workflow import costs
from banditrepro.workflow.estimate import estimate, load_config, report
from banditrepro.workflow.plan import build_plan, split_key
from tests.workflow.common import ROOT, TEST_CONFIG


def _plan(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the results folder (relative) is looked up from here: empty
    return build_plan(yaml.safe_load((ROOT / TEST_CONFIG).read_text()), ROOT)


def _sidecar(plan, cell, first, times, *, seed=None, code=None, **changes):
    """A shard sidecar of ``cell`` as a batch writes it (banditrepro.cell.shard_sidecar), runs first.. with
    kernel CPU ``times``; ``seed``/``code``: under another base seed's or code digest's folder."""
    dataset, horizon, algo = split_key(cell)
    folder = Path(plan.cell_folder(cell))
    if seed is not None:
        folder = Path(str(folder).replace(f"/seed{plan.config['base_seed']}/", f"/seed{seed}/"))
    if code is not None:
        folder = folder.parent / code
    folder.mkdir(parents=True, exist_ok=True)
    side = {"algorithm_id": algo, "instance": dataset, "horizon": horizon,
            "runs": list(range(first, first + len(times))), "kernel_cpu_seconds": list(times),
            "wall_seconds": list(times), "prepared_sha256": "a" * 64, **changes}
    (folder / f"runs{first}-{first + len(times) - 1}.json").write_text(json.dumps(side))


def test_a_cells_kernel_cost_comes_from_its_sidecars_then_the_table_then_ns_per_step(tmp_path, monkeypatch):
    plan = _plan(tmp_path, monkeypatch)
    here, table, neither = sorted(plan.cell_runs)[:3]
    reference = {(split_key(c)[2], split_key(c)[0], split_key(c)[1]): 0.5 for c in (here, table)}
    # sidecars of `here`: two shards, one under another base seed (a kernel's speed does not depend on it)
    _sidecar(plan, here, 0, [0.010, 0.020])
    _sidecar(plan, here, 2, [0.030], seed=8)
    # not counted: another code's folder, a sidecar of another cell, one without kernel times, one cut short
    _sidecar(plan, here, 0, [9.0], code="0" * 12)
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
    runs = {c: sum(b - a + 1 for cc, a, b in todo if cc == c) for c in {c for c, _, _ in todo}}
    assert n["new_runs"] == sum(runs.values())
    expected = sum(r * (2.0 if c == measured_cell else 0.25) for c, r in runs.items())
    assert n["kernel_cpu_seconds"] == pytest.approx(expected)
    assert n["kernel_sources"] == {"measured": 1, "reference": len(runs) - 1, "ns_per_step": 0}
    assert n["rest_cpu_seconds"] == pytest.approx(costs.pipeline_seconds(n["new_shards"], n["new_runs"]))
    assert n["cpu_hours"] == pytest.approx((n["kernel_cpu_seconds"] + n["rest_cpu_seconds"]) / 3600)


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
    _sidecar(plan, a, 2, [0.3], seed=8)
    _sidecar(plan, a, 0, [9.0], code="0" * 12)  # older code: not this code's speed
    _sidecar(plan, b, 0, [0.4])
    rows = costs.calibrate(plan.layout.results_dir)
    out = tmp_path / "table.csv"
    costs.write_reference(rows, out, "measured here\nin a test")
    assert out.read_text().startswith("# measured here\n# in a test\nalgorithm_id,")
    key = lambda c: (split_key(c)[2], split_key(c)[0], split_key(c)[1])  # noqa: E731
    assert costs.load_reference(out) == pytest.approx({key(a): 0.2, key(b): 0.4})
    assert [r["runs"] for r in rows] == [3, 1] or [r["runs"] for r in rows] == [1, 3]
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
