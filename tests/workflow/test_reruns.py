"""What reruns after an edit, end to end in copies of the finished session runs (tests/workflow/conftest.py;
the narrowed reference, tests/conftest.py, for forced preparation).

Every stored result is named by what its bytes depend on (docs/decisions.md#content-addressing) and the
profile sets `rerun-triggers: mtime`, so reruns follow names: an edit that changes no name (a comment, a
docstring, a new registry entry) reruns nothing but `all`; a kernel's or a shared helper's body renames
exactly its algorithms' cells, so their shards, summaries and the figures showing them; the summary code
renames every summary but no shard; prepared datasets forced to run again compute no shard. (More runs per
cell compute only the new runs: tests/workflow/test_content_addressing.py, switching a config back.)"""

import importlib
from pathlib import Path

import pytest

from banditrepro import closure
from tests.workflow.common import (
    MIRROR_ARG,
    TEST_CELLS,
    TEST_CONFIG,
    TEST_RESULTS,
    clone,
    computed,
    edit_function,
    job_counts,
    mtimes,
    only_all,
    plan_of,
    run_narrowed,
    scheduled_cells,
    smk,
)

pytestmark = pytest.mark.workflow

TEST = ["--configfile", TEST_CONFIG, *MIRROR_ARG]


def renamed_figures(plan: dict, before: dict, cells: set[str]) -> set[str]:
    """The figures an edit renames: those drawing a renamed cell and those whose drawing code's digest
    changed (a figure kind's modules and their imports, digests.figure_code); checked against the names."""
    out = {s for s, f in plan["figures"].items()
           if cells & set(f["drawn"]) or f["code"] != before["figures"][s]["code"]}
    assert out == {s for s, f in plan["figures"].items() if f["key"] != before["figures"][s]["key"]}
    return out


def expected_jobs(plan: dict, before: dict, cells: set[str]) -> dict[str, int]:
    """The jobs a dry run lists when exactly ``cells`` are renamed (new summaries): their summaries, the
    figures renamed (``renamed_figures``), claims, report, run-time table if one of them is always available;
    `all`. (Batches of new shards: counted apart, from the dry run's blocks.)"""
    optional = set(plan["optional"])
    cells = {c for c in cells if c.split("/")[0] not in optional}  # not drawn offline: never asked for
    runtime = {plan["cells"][c]["summary"] for c in cells} & set(plan["runtime"])
    jobs = {"summarize_cell": len(cells), "figure": len(renamed_figures(plan, before, cells)), "claims": 1,
            "report_md": 1, "runtime_table": 1 if runtime else 0, "all": 1}
    return {k: v for k, v in jobs.items() if v}


def _dry_run(copy: Path) -> str:
    r = smk("-n", "--quiet", "host", *TEST, cwd=copy)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    return out


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _rucb_docstring(pkg: Path) -> None:
    path = pkg / "algorithms" / "rucb.py"
    path.write_text(path.read_text().replace('"""', '"""A docstring edit. ', 1))


def _new_registry_entry(pkg: Path) -> None:
    path = pkg / "algorithms" / "builtin.py"
    path.write_text(path.read_text().replace('"rucb": "rucb",', '"rucb": "rucb",\n    "rucb-again": "rucb",'))


# edits that cannot change a number: no name changes, a dry run afterwards lists `all` alone
# (docs/decisions.md#code-digests)
NO_NUMBER_EDITS = {
    "comment in the registry": lambda pkg: _append(pkg / "algorithms/builtin.py", "\n# a comment\n"),
    "new registry entry": _new_registry_entry,
    "comment in the download code": lambda pkg: _append(pkg / "datasets/fetch.py", "\n# a comment\n"),
    "comment in the preparation code": lambda pkg: _append(pkg / "datasets/derive.py", "\n# a comment\n"),
    "docstring of a kernel": _rucb_docstring,
    "comment in the summary code": lambda pkg: _append(pkg / "aggregate.py", "\n# a comment\n"),
}


# A new function in the preparation code renames every prepared dataset, hence every shard: a prepared file is
# named by the code that derives it (docs/decisions.md#content-addressing, "the preparation code"); only its
# comments, docstrings and formatting rename nothing, which the case above checks.


def test_an_edit_that_changes_no_number_reruns_nothing(test_run, tmp_path):
    """Every edit of ``NO_NUMBER_EDITS`` made in one copy: a dry run lists `all` alone, so none of them renames
    anything (an edit adds or leaves text, so one cannot undo another's rename). One copy and one dry run
    instead of one per edit (each Snakemake start costs ~2 s); if the dry run lists more, each edit is tried
    alone, to name the ones that rename."""
    copy = clone(test_run[0], tmp_path / "copy")
    for edit in NO_NUMBER_EDITS.values():
        edit(copy / "src" / "banditrepro")
    out = _dry_run(copy)
    if not only_all(out):
        renaming = []
        for i, (name, edit) in enumerate(sorted(NO_NUMBER_EDITS.items())):
            alone = clone(test_run[0], tmp_path / f"alone-{i}")
            edit(alone / "src" / "banditrepro")
            if not only_all(_dry_run(alone)):
                renaming.append(name)
        raise AssertionError(f"these edits rerun more than `all`: {renaming}; together: {job_counts(out)}")


def _algo(cell: str) -> str:
    return cell.split("/")[2]


def test_a_kernel_edit_reschedules_exactly_its_algorithms_cells(test_run, finished_plan, tmp_path):
    """RUCB's kernel edited: RUCB's cells get new names, so their shards are computed (in batches), their
    summaries made and the figures drawing them drawn again, and claims, report and the run-time table after
    them; nothing else (no other cell's shard or summary, no preparation)."""
    copy = clone(test_run[0], tmp_path / "copy")
    edit_function(copy / "src/banditrepro/algorithms/rucb.py", "rucb_kernel")
    plan = plan_of(copy, TEST_CONFIG)
    out = _dry_run(copy)
    rucb = {c for c in plan["cells"] if _algo(c).partition("+")[0] == "rucb"}
    assert rucb and scheduled_cells(out, plan) == {c for c in rucb if c.split("/")[0] not in plan["optional"]}
    counts = job_counts(out)
    jobs = {k: v for k, v in counts.items() if k not in ("simulate", "total")}
    assert jobs == expected_jobs(plan, finished_plan, rucb), counts
    # the missing shards are exactly RUCB's (every one of them: a new name)
    missing = {c for c, v in plan["cells"].items() if v["missing"] and c.split("/")[0] not in plan["optional"]}
    assert missing == {c for c in rucb if c.split("/")[0] not in plan["optional"]}


def test_editing_the_shared_rng_helper_reschedules_exactly_its_users(test_run, finished_plan, tmp_path):
    copy = clone(test_run[0], tmp_path / "copy")
    helper = importlib.import_module("banditrepro.algorithms.ccb").randint.__module__
    src = copy / "src"
    edit_function(closure.module_file(helper, src / "banditrepro"), "randint")
    plan = plan_of(copy, TEST_CONFIG)
    out = _dry_run(copy)
    cells = scheduled_cells(out, plan)
    algos = {_algo(c).split("+")[0] for c in cells}
    # CCB, IF, QSA, SCB and Winner Stays (W and S) draw with randint; nothing else is rescheduled
    assert algos == {"ccb", "if", "qsa", "scb", "ws-w", "ws-s"}, algos
    users = {c for c in plan["cells"] if _algo(c).split("+")[0] in algos}
    assert cells == {c for c in users if c.split("/")[0] not in plan["optional"]}
    counts = job_counts(out)
    jobs = {k: v for k, v in counts.items() if k not in ("simulate", "total")}
    assert jobs == expected_jobs(plan, finished_plan, users), counts


def test_a_summary_code_edit_renames_every_summary_and_no_shard(test_run, finished_plan, tmp_path):
    """The summary code (aggregate.py's closure) is in every summary's name, not in a shard's: every summary
    is made again from the shards there, none computed; the figures, claims, report and run-time table
    after them too."""
    copy = clone(test_run[0], tmp_path / "copy")
    edit_function(copy / "src/banditrepro/aggregate.py", "t_quantile")
    plan = plan_of(copy, TEST_CONFIG)
    online = {c for c in plan["cells"] if c.split("/")[0] not in plan["optional"]}
    assert online and not any(plan["cells"][c]["missing"] for c in online)  # every shard keeps its name
    counts = job_counts(_dry_run(copy))
    # every summary a figure asks for (a cell of an optional dataset not obtainable here: never asked)
    assert counts == {**expected_jobs(plan, finished_plan, set(plan["cells"])), "total": counts["total"]}, counts
    assert counts["figure"] == len(plan["figures"])  # every figure draws summaries (or imports their code)


def test_forced_preparation_computes_no_shard(narrowed_reference, tmp_path):
    """-R prepare_dataset re-derives every prepared dataset (same bytes, same names): a shard's name covers
    its data's name, so every shard is complete and no batch is planned, locally or in cluster mode; only
    what reads a prepared file runs again (the figures, and claims and report after them). On a clone of the
    session's narrowed reference (tests/conftest.py: five datasets, five figures): the property holds for any
    config, and the narrowed one redraws a third as many figures as the test config. Cluster mode in a dry
    run; locally the run itself, whose job table shows what ran."""
    copy = clone(narrowed_reference, tmp_path / "copy")
    results = copy / TEST_RESULTS
    before, shards = computed(copy), mtimes(copy / TEST_CELLS)
    not_run = {"simulate", "batch_spec", "summarize_cell"}
    r = run_narrowed(copy, "batch_minutes=20", args=("-n", "-R", "prepare_dataset"))
    out = r.stdout + r.stderr
    counts = job_counts(out)
    assert counts["prepare_dataset"] >= 5 and not not_run & set(counts), counts
    # the profile's quiet dry run prints its job table once (Snakemake prints it before and after)
    assert out.count("Job stats") == 1, out[-3000:]
    r = run_narrowed(copy, args=("-R", "prepare_dataset"))
    counts = job_counts(r.stdout + r.stderr)
    assert counts["prepare_dataset"] >= 5 and not not_run & set(counts), counts
    assert computed(copy) == before and mtimes(copy / TEST_CELLS) == shards  # no shard computed or rewritten
    assert (results / "claims.csv").read_bytes() == (narrowed_reference / TEST_RESULTS / "claims.csv").read_bytes()


def test_test_config_cells_exist(test_run):
    assert list((test_run[0] / TEST_CELLS).glob("*/T*/*/*/runs0-*.npz"))
