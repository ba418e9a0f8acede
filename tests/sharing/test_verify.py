"""``banditrepro verify`` (banditrepro/sharing/verify.py): an unaltered run passes; one number edited in a shard,
a summary, a table, a claims row or a verdict of reproduction.md (folder or bundle) is caught and named; prepared
data come from this checkout; whether bytes must agree is decided by this checkout's names, never by the source's
records; a shard named otherwise is compared array by array within the stated tolerance; the sample is uniform and
its stated power holds; bad input is one line; ``--record`` reaches the report. The end-to-end tests call the
command in this process (tests/sharing/conftest.py ``in_process``) but for three that spawn it, one per exit status
(0 an unaltered run, 1 an edit found with --all, 2 bad input)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pytest

from banditrepro.atomic import npz_bytes
from banditrepro.sharing import differences, recompute, verify
from tests.sharing.conftest import RESULTS, cli_call, run
from tests.workflow.common import shards_computed


def banditrepro(proj: Path, *args: str, spawn: bool = False) -> subprocess.CompletedProcess:
    """``banditrepro verify ARGS`` in ``proj``: in this process (``in_process``), or as a process of its own
    (``spawn``: the tests of an unaltered run, an edit found with --all and bad input, one per exit status)."""
    return cli_call(["verify", *args, "--project", str(proj)], proj, spawn)


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


def test_a_sample_is_uniform_fixed_by_its_seed_and_its_stated_power_holds():
    shards = [f"s{i}" for i in range(30)]
    chosen = recompute.choose(shards, 3, seed=5)
    assert chosen == recompute.choose(shards, 3, seed=5) and len(set(chosen)) == 3
    assert any(recompute.choose(shards, 3, seed=s) != chosen for s in range(6, 12))
    assert recompute.choose(shards, None, seed=5) == shards
    # the stated probability against 4,000 seeds, for an altered shard first, in the middle and last (a uniform
    # draw does not care where it lies); binomial standard error sqrt(p(1-p)/4000) <= 0.0079, margin 4 of them
    seeds = 4000
    for total, sampled in ((100, 20), (480, 20)):
        p = verify.pass_probability(total, sampled)
        bad = max(1, -(-total // 100))
        for altered in (set(range(bad)), set(range(total // 2, total // 2 + bad)), set(range(total - bad, total))):
            passes = sum(not altered & set(recompute.choose(list(range(total)), sampled, seed=s)) for s in range(seeds))
            margin = 4 * (p * (1 - p) / seeds) ** 0.5
            assert abs(passes / seeds - p) < margin, (total, sorted(altered)[0], passes / seeds, p)


def test_the_first_differing_value_of_a_text_is_named():
    a = "x,y\n1,2\n3,4\n"
    assert differences.text_difference(a, "x,y\n1,2\n3,5\n", ".csv") == "row 2, column 'y': '4' stored, '5' re-derived"
    assert differences.text_difference("a\nb\n", "a\nc\n") == "line 2: 'b' stored, 'c' re-derived"


# --- end to end on the shared reference run ---------------------------------------------------------------

@pytest.mark.workflow
def test_an_unaltered_run_passes_says_what_was_not_checked_and_how_to_draw_its_sample_again(project):
    """The sample drawn again from its seed, with --record: the record reaches the report and reproduction.md."""
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    r = banditrepro(project, RESULTS, "--sample", "4", spawn=True)  # no --seed: a fresh one, printed
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    seed = int(re.fullmatch(r"sample drawn with seed (\d+); to draw it again: banditrepro verify (\S+) --sample 4 "
                            r"--seed \1", lines[-2]).group(1))
    shards = sum(1 for _ in (project / RESULTS / "cells").rglob("runs*.npz"))
    cells = json.loads((project / RESULTS / "published.json").read_text())["cells"]
    claims = len(list(csv.reader(io.StringIO((project / RESULTS / "claims.csv").read_text())))) - 1
    tables = len(list((project / RESULTS / "tables").glob("*/*.csv")))
    published = len(json.loads((project / RESULTS / "published.json").read_text())["files"])
    unchecked = [ln for ln in lines if ln.startswith("not checked: ")]
    # the shards' measured seconds and the job log: nothing else of the folder goes unchecked
    assert [ln.split(" (")[0] for ln in unchecked] == [
        "not checked: cells/**/runs*.json", "not checked: logs/shards-computed.log"], unchecked
    assert lines[-1] == (
        f"no mismatch in what was checked: checked: 4 of {shards} shards recomputed, 4 byte-identical; {len(cells)} "
        f"summaries, {tables} tables, {claims} claims, 3 of runtime.csv, report.md, reproduction.md re-derived equal; "
        f"{published} published files equal to their store entry; not checked: 2 files (listed above); a folder "
        f"with 1% of its {shards} shards altered passes this sample with probability "
        f"{verify.pass_probability(shards, 4):.3g}")
    assert "verified" not in lines[-1].split(":")[0]  # never "verified" for what was not checked
    assert not mismatches(r) and sorted(p.relative_to(project) for p in project.rglob("*")) == before  # nothing written
    again = banditrepro(project, RESULTS, "--sample", "4", "--seed", str(seed), "--record")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.splitlines()[-3] == lines[-2]  # the last line: "recorded in …"
    record = json.loads((project / RESULTS / "verification.json").read_text())
    assert record["seed"] == seed and len(record["shards"]["sampled"]) == 4
    # the record reaches the report and reproduction.md
    assert record["result"] == "pass" and record["stack"]["numba"]
    computed = shards_computed(project / RESULTS)
    run(project)  # the report is named by the record: made again, and no shard computed
    assert shards_computed(project / RESULTS) == computed
    for name in ("report.md", "reproduction.md"):
        text = (project / RESULTS / name).read_text()
        assert "## Software and provenance" in text and record["summary"] in text, name


@pytest.mark.workflow
def test_prepared_data_missing_here_are_prepared_in_a_scratch_folder_not_taken_from_the_source(project):
    prepared = project / "data" / "prepared" / "utility10"
    held = {p.name: p.read_bytes() for p in prepared.iterdir()}
    for p in prepared.iterdir():
        p.unlink()
    r = banditrepro(project, RESULTS, "--sample", "2")
    assert r.returncode == 0 and not mismatches(r), r.stdout + r.stderr
    assert not any(prepared.iterdir()), "verify wrote into the project's data folder"
    assert held  # what the run drew was there before


@pytest.mark.workflow
def test_a_number_edited_in_a_shard_is_caught_with_all(project):
    shard = a_shard(project)
    with np.load(shard) as z:
        key = next(k for k in sorted(z.files) if k.startswith("final_"))
        run0 = int(z["run"][0])
    old, new = edit_npz(shard, key, (0,))
    r = banditrepro(project, RESULTS, "--all", spawn=True)
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
def test_a_number_edited_in_a_summary_a_table_a_claims_row_or_a_verdict_of_reproduction_md_is_named(project):
    """Four edits in one folder, each named by its own MISMATCH line (and no other line)."""
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
    text = (res / "reproduction.md").read_text()
    flipped = flip_first_verdict(text)
    assert flipped != text
    (res / "reproduction.md").write_text(flipped)
    r = banditrepro(project, RESULTS, "--sample", "1")
    assert r.returncode == 1, r.stdout + r.stderr
    found = mismatches(r)
    rel_summary = str(summary.relative_to(res))
    assert any(m.startswith(f"MISMATCH {rel_summary}: {key}[3]: ") for m in found), found
    assert (f"MISMATCH {table.relative_to(res)}: row 1, column {rows[0][col]!r}: {rows[1][col]!r} stored, "
            f"{stored!r} re-derived") in found, found
    assert f"MISMATCH claims.csv: row 1, column 'verdict': {claims[1][verdict]!r} stored, {was!r} re-derived" in found
    assert any(m.startswith("MISMATCH reproduction.md: line ") and "re-rendered" in m for m in found), found
    # the edited table, claims.csv and reproduction.md no longer equal their store entries either; the summary's
    # edit reaches no table (tables are re-derived from re-derived summaries), nor the reports (re-rendered from
    # re-derived claims: reproduction.md differs only by its own edit)
    assert sorted(m.split(":")[0] for m in found) == sorted([
        f"MISMATCH {rel_summary}", f"MISMATCH {table.relative_to(res)}", f"MISMATCH {table.relative_to(res)}",
        "MISMATCH claims.csv", "MISMATCH claims.csv", "MISMATCH reproduction.md", "MISMATCH reproduction.md"]), found


def flip_first_verdict(text: str) -> str:
    """The first claim heading's verdict of reproduction.md (``### `id` — **verdict**``) turned into another."""
    was = re.search(r"— \*\*([^*]+)\*\*", text).group(1)
    return text.replace(f"— **{was}**", f"— **{'reproduced' if was != 'reproduced' else 'not reproduced'}**", 1)


def _records(proj: Path) -> tuple[Path, dict]:
    published = proj / RESULTS / "published.json"
    return published, json.loads(published.read_text())


@pytest.mark.workflow
def test_a_record_claiming_another_stack_does_not_stop_bytes_and_a_record_not_its_parts_key_is_refused(project):
    from banditrepro.workflow import names

    published, record = _records(project)
    cells = sorted(record["cells"])
    # one record claims another numba, with the key of those parts (a consistent record of another machine) ...
    honest = record["cells"][cells[0]]
    honest["stack"] = {**honest["stack"], "numba": "0.0.1"}
    honest["key"] = names.key_of_parts({k: honest[k] for k in verify.PARTS})
    published.write_text(json.dumps(record))
    r = banditrepro(project, RESULTS, "--sample", "46", "--seed", "1")
    # ... yet this checkout names the shard's folder as it is: bytes compared, never "within tolerance"
    assert r.returncode == 0 and not mismatches(r), r.stdout + r.stderr
    assert ", 46 byte-identical;" in r.stdout.splitlines()[-1] and "within" not in r.stdout.splitlines()[-1]
    # another record's key is not the key of its parts: the reader refuses the folder (bad input, one line)
    record["cells"][cells[1]]["stack"] = {**record["cells"][cells[1]]["stack"], "numba": "0.0.1"}
    published.write_text(json.dumps(record))
    r = banditrepro(project, RESULTS, "--sample", "1")
    assert r.returncode == 2 and not r.stdout, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "is not what its parts name" in r.stderr, r.stderr


def _seed_drawing(proj: Path, shard: Path) -> int:
    """A seed whose sample of one shard is ``shard`` (verify's pool: cells in order, each's shards by first run)."""
    pool = sorted((proj / RESULTS / "cells").rglob("runs*.npz"),
                  key=lambda p: (str(p.parent.parent), int(p.name[4:].split("-")[0])))
    at = pool.index(shard)
    return next(s for s in range(100000) if recompute.choose(list(range(len(pool))), 1, seed=s) == [at])


def _rewrite_curve(path: Path, factor: float) -> None:
    """Multiply one value of a curve of a shard by ``factor`` (decoded, changed, encoded again)."""
    from banditrepro.cell import decode_curves, encode_curves

    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    key = next(k for k in sorted(arrays) if k.endswith("regret") and not k.startswith(("final_", "half_")))
    curves = decode_curves(arrays[key]).copy()
    curves[0, -1] = np.float32(curves[0, -1] * factor)
    arrays[key] = encode_curves(curves)
    path.write_bytes(npz_bytes(arrays))


@pytest.mark.workflow
def test_a_shard_named_otherwise_is_compared_array_by_array_within_the_tolerance(project):
    from banditrepro.workflow import names

    published, record = _records(project)
    cell = next(c for c in sorted(record["cells"]) if c.startswith("utility10/"))  # one shard of 3 runs
    rec = record["cells"][cell]
    rec["stack"] = {**rec["stack"], "numba": "0.0.1"}  # what another machine records, with the key of its parts
    rec["key"] = names.key_of_parts({k: rec[k] for k in verify.PARTS})
    published.write_text(json.dumps(record))
    folder = project / RESULTS / "cells" / cell
    old = next(folder.iterdir())
    old.rename(folder / rec["key"])
    shard = next((folder / rec["key"]).glob("runs*.npz"))
    seed = _seed_drawing(project, shard)
    r = banditrepro(project, RESULTS, "--sample", "1", "--seed", str(seed))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 of 46 shards recomputed, 0 byte-identical, 1 equal within 1e-09" in r.stdout.splitlines()[-1]
    assert any("stack differ (published.json)" in ln for ln in r.stdout.splitlines() if ln.startswith("note: "))
    _rewrite_curve(shard, 1 + 1e-6)  # four times the curves' tolerance, far below a final value's change
    r = banditrepro(project, RESULTS, "--sample", "1", "--seed", str(seed))
    assert r.returncode == 1, r.stdout + r.stderr
    rel = str(shard.relative_to(project / RESULTS))
    assert any(m.startswith(f"MISMATCH {rel}: run 0, ") and "regret[" in m and "named otherwise here" in m
               for m in mismatches(r)), r.stdout


def rebundle(bundle: Path, out: Path, edits: dict) -> Path:
    """``bundle`` with each member ``name`` of ``edits`` holding ``edits[name](bytes)`` and its checksums.sha256 line
    made to match: a bundle that passes ``sha256sum -c``, so that only verify's own checks can catch it."""
    with tarfile.open(bundle, "r:gz") as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]
    data = dict((m.name, b) for m, b in members)
    sums = data["checksums.sha256"].decode()
    for name, edit in edits.items():
        new = edit(data[name])
        assert new != data[name]
        sums = sums.replace(f"{hashlib.sha256(data[name]).hexdigest()}  {name}",
                            f"{hashlib.sha256(new).hexdigest()}  {name}")
        data[name] = new
    data["checksums.sha256"] = sums.encode()
    with tarfile.open(out, "w:gz") as tar:
        for m, _ in members:
            if m.isfile():
                m.size = len(data[m.name])
                tar.addfile(m, io.BytesIO(data[m.name]))
            else:
                tar.addfile(m)
    return out


@pytest.mark.workflow
def test_a_verdict_flipped_in_a_bundles_reproduction_md_and_an_altered_prepared_file_are_caught(project, bundled,
                                                                                             tmp_path):
    """One bundle carrying both edits (its checksums made to match): each is named by its own MISMATCH line."""
    with tarfile.open(bundled[0], "r:gz") as tar:
        name = next(m.name for m in tar.getmembers() if m.name.startswith("data/prepared/utility10/"))

    def alter(b: bytes) -> bytes:
        rec = json.loads(b)
        rec["description"] = rec.get("description", "") + " (altered)"
        return json.dumps(rec).encode()

    out = rebundle(bundled[0], tmp_path / "edited.tar.gz", {
        "results/reproduction.md": lambda b: flip_first_verdict(b.decode()).encode(), name: alter})
    r = banditrepro(project, str(out), "--sample", "1")
    assert r.returncode == 1, r.stdout + r.stderr
    assert any(m.startswith("MISMATCH reproduction.md: line ") for m in mismatches(r)), r.stdout
    assert any(m.startswith(f"MISMATCH {name}: differs from the file this checkout prepares") for m in mismatches(r))


@pytest.mark.workflow
def test_bad_input_is_one_line_and_exit_2(project, tmp_path):
    for i, args in enumerate(([str(tmp_path / "nowhere")], [str(tmp_path / "x.tar.gz")], ["--sample", "-1"])):
        r = banditrepro(project, *args, spawn=i == 0)  # the first as a process: exit status 2 as a shell sees it
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not r.stdout, (args, r.stderr)
    (tmp_path / "b.tar.gz").write_bytes(b"not a bundle")
    r = banditrepro(project, str(tmp_path / "b.tar.gz"), "--record")
    assert r.returncode == 2 and "--record" in r.stderr
