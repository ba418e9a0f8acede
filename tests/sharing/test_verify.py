"""``banditrepro verify`` (banditrepro/sharing/verify.py): an unaltered run passes; one number edited in a shard,
a summary, a table or a claims row is caught and named; a source named by another stack is compared within
the stated tolerance and never reported byte-identical; bad input is one line; ``--record`` reaches the report."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from banditrepro.atomic import npz_bytes
from banditrepro.sharing import differences, verify
from banditrepro.workflow.names import key_of_parts
from tests.sharing.conftest import RESULTS, run
from tests.workflow.common import shards_computed

CLI = [sys.executable, "-m", "banditrepro"]


def banditrepro(proj: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "verify", *args, "--project", str(proj)], cwd=proj, capture_output=True,
                          text=True, timeout=900)


def mismatches(r) -> list[str]:
    return [ln for ln in r.stdout.splitlines() if ln.startswith("MISMATCH ")]


def edit_npz(path: Path, key: str, index: tuple, delta: float = 1.0) -> tuple[float, float]:
    """Add ``delta`` to one value of one array of an .npz (the other arrays' bytes kept); (old, new)."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    a = arrays[key].copy()
    old = float(a[index])
    a[index] = old + delta
    arrays[key] = a
    path.write_bytes(npz_bytes(arrays))
    return old, float(a[index])


def write_csv(path: Path, rows: list) -> None:
    """Rows as pandas writes them (minimal quoting, "\\n"): only the edited value differs."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue())


def a_shard(proj: Path) -> Path:
    return sorted((proj / RESULTS / "cells").rglob("runs*.npz"))[0]


# --- units ------------------------------------------------------------------------------------------------


def test_the_power_of_a_sample_is_hypergeometric():
    # one altered shard in 100 (1 %): a sample of 20 misses it with probability 80/100
    assert verify.pass_probability(100, 20) == pytest.approx(0.8, abs=1e-12)
    # 480 shards, 5 altered: C(475, 20) / C(480, 20)
    expected = np.prod([(475 - i) / (480 - i) for i in range(20)])
    assert verify.pass_probability(480, 20) == pytest.approx(expected, rel=1e-12)
    assert verify.pass_probability(100, 0) == 1.0 and verify.pass_probability(100, 100) == 0.0


def test_a_sample_is_spread_over_strata_and_fixed_by_its_seed():
    shards = [f"s{i}" for i in range(30)]
    strata = [("paper", "algo", i % 3) for i in range(30)]
    chosen = verify.choose(shards, strata, 3, seed=5)
    assert sorted(int(s[1:]) % 3 for s in chosen) == [0, 1, 2]  # one of each stratum
    assert chosen == verify.choose(shards, strata, 3, seed=5)
    assert any(verify.choose(shards, strata, 3, seed=s) != chosen for s in range(6, 12))
    assert verify.choose(shards, strata, None, seed=5) == shards


def test_the_first_differing_value_of_a_text_is_named():
    a = "x,y\n1,2\n3,4\n"
    assert differences.text_difference(a, "x,y\n1,2\n3,5\n", ".csv") == "row 2, column 'y': '4' stored, '5' re-derived"
    assert differences.text_difference("a\nb\n", "a\nc\n") == "line 2: 'b' stored, 'c' re-derived"


# --- end to end on the shared reference run ---------------------------------------------------------------

@pytest.mark.workflow
def test_an_unaltered_run_passes_and_says_what_its_sample_proves(project):
    r = banditrepro(project, RESULTS, "--sample", "4", "--seed", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    cells = json.loads((project / RESULTS / "published.json").read_text())["cells"]
    shards = sum(1 for _ in (project / RESULTS / "cells").rglob("runs*.npz"))
    claims = len(list(csv.reader(io.StringIO((project / RESULTS / "claims.csv").read_text())))) - 1
    tables = len(list((project / RESULTS / "tables").glob("*/*.csv")))
    assert r.stdout.splitlines()[-1] == (
        f"verified: 4 of 4 sampled shards byte-identical; {len(cells)} summaries, {tables} tables, {claims} claims "
        f"re-derived equal; a folder with 1% of its {shards} shards altered passes this sample with probability "
        f"{verify.pass_probability(shards, 4):.3g}")
    assert not mismatches(r) and not (project / RESULTS / "verification.json").exists()  # nothing written


@pytest.mark.workflow
def test_a_number_edited_in_a_shard_is_caught_with_all(project):
    shard = a_shard(project)
    with np.load(shard) as z:
        key = next(k for k in sorted(z.files) if k.startswith("final_"))
        run0 = int(z["run"][0])
    old, new = edit_npz(shard, key, (0,))
    r = banditrepro(project, RESULTS, "--all")
    assert r.returncode == 1, r.stdout + r.stderr
    rel = str(shard.relative_to(project / RESULTS))
    found = mismatches(r)
    assert f"MISMATCH {rel}: run {run0}, {key}: {new!r} stored, {old!r} recomputed" in found, found
    # the summary re-derived from the edited shard differs from the stored one too
    assert any(m.startswith("MISMATCH summaries/") for m in found), found
    assert r.stdout.splitlines()[-1].startswith("NOT verified")


@pytest.mark.workflow
def test_an_edited_shard_is_caught_when_sampled(project):
    r = banditrepro(project, RESULTS, "--sample", "3", "--seed", "11", "--record")
    assert r.returncode == 0, r.stdout + r.stderr
    sampled = json.loads((project / RESULTS / "verification.json").read_text())["shards"]["sampled"]
    assert len(sampled) == 3
    shard = project / RESULTS / sampled[1]
    with np.load(shard) as z:
        key = next(k for k in sorted(z.files) if k.startswith("final_"))
    edit_npz(shard, key, (0,), delta=1e-6)
    r = banditrepro(project, RESULTS, "--sample", "3", "--seed", "11")
    assert r.returncode == 1 and any(m.startswith(f"MISMATCH {sampled[1]}: run ") for m in mismatches(r)), r.stdout


@pytest.mark.workflow
def test_a_number_edited_in_a_summary_a_table_or_a_claims_row_is_named(project):
    res = project / RESULTS
    summary = sorted((res / "summaries").rglob("*.npz"))[0]
    with np.load(summary) as z:
        key = next(k for k in sorted(z.files) if k.endswith("_mean"))
    edit_npz(summary, key, (3,))
    table = sorted((res / "tables").glob("*/*.csv"))[0]
    rows = list(csv.reader(io.StringIO(table.read_text())))
    col = next(j for j, v in enumerate(rows[1]) if "." in v and v.replace(".", "", 1).isdigit())  # a measured value
    stored = rows[1][col]
    rows[1][col] = f"{float(stored) + 1:g}"
    write_csv(table, rows)
    claims = list(csv.reader(io.StringIO((res / "claims.csv").read_text())))
    verdict = claims[0].index("verdict")
    was = claims[1][verdict]
    claims[1][verdict] = "reproduced" if was != "reproduced" else "not reproduced"
    write_csv(res / "claims.csv", claims)
    r = banditrepro(project, RESULTS, "--sample", "1")
    assert r.returncode == 1, r.stdout + r.stderr
    found = mismatches(r)
    rel_summary = str(summary.relative_to(res))
    assert any(m.startswith(f"MISMATCH {rel_summary}: {key}[3]: ") for m in found), found
    assert (f"MISMATCH {table.relative_to(res)}: row 1, column {rows[0][col]!r}: {rows[1][col]!r} stored, "
            f"{stored!r} re-derived") in found, found
    assert f"MISMATCH claims.csv: row 1, column 'verdict': {claims[1][verdict]!r} stored, {was!r} re-derived" in found
    assert len(found) == 3, found  # the summary's edit reaches no table: tables are re-derived from re-derived ones


@pytest.mark.workflow
def test_a_source_named_by_another_stack_is_compared_within_tolerance_not_as_bytes(project):
    published = project / RESULTS / "published.json"
    record = json.loads(published.read_text())
    for name, cell in record["cells"].items():
        cell["stack"] = {**cell["stack"], "numba": "0.0.1"}  # what another machine would have recorded
        old, cell["key"] = cell["key"], key_of_parts(cell)  # ... under the name its stack gives (the reader
        cells = project / RESULTS / "cells" / name  # checks each record's key against its parts)
        (cells / old).rename(cells / cell["key"])
    published.write_text(json.dumps(record))
    r = banditrepro(project, RESULTS, "--sample", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert any(ln.startswith("note: this checkout names") and "stack differ" in ln for ln in r.stdout.splitlines())
    last = r.stdout.splitlines()[-1]
    assert last.startswith("verified: 0 of 2 sampled shards byte-identical, 2 equal within 1e-09 (not "
                           "byte-compared"), last


@pytest.mark.workflow
def test_bad_input_is_one_line_and_exit_2(project, tmp_path):
    for args in ([str(tmp_path / "nowhere")], [str(tmp_path / "x.tar.gz")], ["--sample", "-1"]):
        r = banditrepro(project, *args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not r.stdout, (args, r.stderr)
    (tmp_path / "b.tar.gz").write_bytes(b"not a bundle")
    r = banditrepro(project, str(tmp_path / "b.tar.gz"), "--record")
    assert r.returncode == 2 and "--record" in r.stderr


@pytest.mark.workflow
def test_a_recorded_verification_reaches_the_report_and_reproduction(project):
    r = banditrepro(project, RESULTS, "--sample", "2", "--record")
    assert r.returncode == 0, r.stdout + r.stderr
    record = json.loads((project / RESULTS / "verification.json").read_text())
    assert record["result"] == "pass" and record["seed"] == 0 and record["stack"]["numba"]
    before = shards_computed(project / RESULTS)
    run(project)  # the report is named by the record: made again, and no shard computed
    assert shards_computed(project / RESULTS) == before
    for name in ("report.md", "reproduction.md"):
        text = (project / RESULTS / name).read_text()
        assert "## Software and provenance" in text and record["summary"] in text, name
