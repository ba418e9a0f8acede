"""``banditrepro verify``, after the shards: every summary, figure table, claims.csv, leaderboard, the run-time table,
report.md and reproduction.md made again from the source's shards into a scratch folder with this checkout's code,
and each compared with the source's file; every published file compared with its store entry.

What is compared how:

- summaries (``.npz`` and the ``.json`` sidecar), tables, claims.csv, leaderboards (CSV, Markdown), runtime.csv:
  byte for byte with the re-derived file. The sidecars and runtime.csv carry seconds measured on the source's
  machine, but they are re-derived from the shards' sidecars, so the same bytes are due.
- report.md and reproduction.md: re-rendered (banditrepro/report.py) and compared line by line with the cells
  of measured seconds masked in both (``mask_measured``: the run-time table's ``*seconds*`` and ``ns_per_step``
  columns, the only measured numbers either report prints). The provenance lines (a recorded verify, a merge)
  show the record as it was when the report was rendered; where they alone differ (a ``verify --record`` after
  the last run), they are named on a "not checked:" line, not passed.
- figure and leaderboard images (PNG, PDF), software.json: byte for byte with their store entry (images are not
  re-drawn: their bytes depend on the fonts; the stack is the source machine's).
"""

from __future__ import annotations

import csv
from pathlib import Path

from banditrepro import ReproError
from banditrepro.layout import sidecar_of, split_key, summary_rel
from banditrepro.sharing import settled
from banditrepro.sharing.differences import npz_difference, text_difference
from banditrepro.sharing.localdata import copy_into

# the run-time table's columns that hold seconds measured on the machine that ran the kernels
MEASURED_COLUMNS = ("kernel_seconds_mean", "kernel_seconds_total", "ns_per_step")
RUNTIME_HEADING = "## Run time of the kernels"
PROVENANCE = ("- Verified (", "- Merged in: ")  # report.provenance_section's lines showing a record's bytes
MASK = "<measured>"


def mask_measured(text: str) -> str:
    """``text`` with the measured cells of the run-time table replaced by ``MASK`` (rows and header kept)."""
    out, inside, cols = [], False, []
    for line in text.splitlines():
        if line.startswith("## "):
            inside, cols = line == RUNTIME_HEADING, []
        elif inside and line.startswith("|"):
            cells = line.strip().strip("|").split("|")
            if not cols:
                cols = [i for i, c in enumerate(cells) if c.strip() in MEASURED_COLUMNS]
            elif not set(line) <= set("|-"):
                cells = [f" {MASK} " if i in cols else c for i, c in enumerate(cells)]
                line = "|" + "|".join(cells) + "|"
        out.append(line)
    return "\n".join(out)


def rederive(plan, src, cells, data: Path, scratch: Path, result) -> None:
    """Every file after the shards, re-derived into ``scratch`` and compared (module docstring)."""
    from banditrepro import leaderboard
    from banditrepro.aggregate import write_runtime_table, write_summary
    from banditrepro.claims import write_claims
    from banditrepro.figures import write_table
    from banditrepro.report import build_report, build_reproduction
    from banditrepro.workflow import digests, names
    from banditrepro.workflow.config import recorded_config
    from banditrepro.workflow.plan import build_plan

    results = scratch / "results"
    for record in ("verification.json", "received.json"):  # the report shows them (and is named by their bytes)
        if (src.results / record).is_file():
            copy_into(src.results / record, results / record)
    fresh = build_plan(recorded_config(src.config), plan.root, scan=False, where=(results, data))
    fresh.rename_outputs()
    st = fresh.store
    summary_code = digests.summary_code()
    recorded = src.cells
    for c in cells:
        if not c.shards or c.shards[-1][1] + 1 < plan.cell_runs[c.cell]:
            continue  # already a mismatch (runs missing)
        if not all([result.readable(p) for *_, p in c.shards]):
            continue
        dataset, horizon, algo = split_key(c.cell)
        runs = plan.cell_runs[c.cell]
        out = Path(fresh.layout.summary(dataset, horizon, algo))
        write_summary([p for *_, p in c.shards], out, runs)
        # the name this checkout gives a summary of the shards' folder: byte-equal due whatever named the shards
        key = names.summary_key(c.key, runs, summary_code)
        tolerance = None
        if not (src.results / summary_rel(c.cell, key)).is_file() and c.trusted_record \
                and recorded[c.cell].get("summary"):
            # named by other summary code: found by the source's record, compared within the tolerance
            key, tolerance = Path(str(recorded[c.cell]["summary"])).name, result.tolerance
        rel = summary_rel(c.cell, key)
        theirs = src.results / rel
        if not theirs.is_file():
            result.mismatch(f"{rel}: missing")
            continue
        diff = npz_difference(theirs, out, tolerance or 0.0)
        if diff:
            result.mismatch(f"{rel}: {diff}" + (f" (named otherwise here; tolerance {tolerance:g})" if tolerance
                                                else ""))
            continue
        result.summaries += 1
        result.checked.add(rel)
        side = src.results / sidecar_of(rel)
        if side.is_file() and side.read_bytes() == Path(sidecar_of(str(out))).read_bytes():
            result.checked.add(sidecar_of(rel))
        elif side.is_file():
            result.mismatch(f"{sidecar_of(rel)}: not what its shards' sidecars give")
    if any(m.startswith(("cells/", "summaries/")) and "missing" in m for m in result.mismatches):
        result.note("note: tables, claims, leaderboards and reports not re-derived: summaries are missing")
        return
    for fig in fresh.figures:
        try:
            write_table(fig, st, st.table(fig.paper, fig.id))
        except ReproError as exc:
            for s in ("csv", "md", "tex"):
                result.skip(_rel(fresh, fresh.layout.table(fig.paper, fig.id, s)), f"cannot be re-derived here: {exc}")
            continue
        before = len(result.mismatches)
        for suffix in ("csv", "md", "tex"):
            compare_file(src, fresh, fresh.layout.table(fig.paper, fig.id, suffix), st.table(fig.paper, fig.id, suffix),
                         result)
        result.tables += len(result.mismatches) == before  # a table counts as equal in its three forms
    write_claims(fresh.figures, st, st.claims_csv)
    result.claims = compare_file(src, fresh, fresh.layout.claims_csv, st.claims_csv, result, rows=True) or 0
    for paper in leaderboard.papers(fresh.figures):
        leaderboard.write_tables(fresh.figures, st, paper, st.leaderboard(paper, "csv"), st.leaderboard(paper, "md"))
        before = len(result.mismatches)
        for suffix in ("csv", "md"):
            compare_file(src, fresh, fresh.layout.leaderboard(paper, suffix), st.leaderboard(paper, suffix), result)
        result.leaderboards += len(result.mismatches) == before
    write_runtime_table(fresh.runtime_inputs(), st.runtime_csv)
    result.rederived += compare_file(src, fresh, fresh.layout.runtime_csv, st.runtime_csv, result) is not None
    if (src.results / "software.json").is_file():  # the report names the source's stack, as it was recorded
        copy_into(src.results / "software.json", st.software_json)
    build_report(fresh.figures, st, st.claims_csv, st.runtime_csv, st.report_md)
    build_reproduction(fresh.figures, st, st.claims_csv, fresh.deviations_file(), st.reproduction_md)
    for fixed, ours in ((fresh.layout.report_md, st.report_md), (fresh.layout.reproduction_md, st.reproduction_md)):
        result.rederived += compare_report(src, _rel(fresh, fixed), Path(ours), result)
    compare_store(src, fresh, result)
    settled.rederive(src, fresh, st, result)  # claims-settled.csv (sharing/settled.py)


def _rel(fresh, path) -> str:
    return Path(path).relative_to(fresh.layout.results_dir).as_posix()


def compare_file(src, fresh, fixed, ours, result, rows: bool = False) -> int | None:
    """The source's file at the fixed path ``fixed`` (a path of ``fresh``'s layout) against the re-derived ``ours``;
    a mismatch line names the first differing row and column (CSV) or line. Returns the data rows of a CSV that
    agrees (``rows``), else 0 when it agrees, None when it does not."""
    rel = _rel(fresh, fixed)
    theirs = src.results / rel
    if not theirs.is_file():
        result.mismatch(f"{rel}: missing")
        return None
    a, b = theirs.read_bytes(), Path(ours).read_bytes()
    if a != b:
        diff = text_difference(a.decode(errors="replace"), b.decode(errors="replace"), theirs.suffix)
        result.mismatch(f"{rel}: {diff}")
        return None
    result.checked.add(rel)
    return sum(1 for _ in csv.reader(a.decode().splitlines())) - 1 if rows else 0


def compare_report(src, rel: str, ours: Path, result) -> bool:
    """A report re-rendered against the source's, measured seconds masked (module docstring)."""
    theirs = src.results / rel
    if not theirs.is_file():
        result.mismatch(f"{rel}: missing")
        return False
    a, b = theirs.read_text(errors="replace"), ours.read_text()
    keep = [[ln for ln in mask_measured(t).splitlines() if not ln.startswith(PROVENANCE)] for t in (a, b)]
    if keep[0] != keep[1]:
        result.mismatch(f"{rel}: {text_difference(chr(10).join(keep[0]), chr(10).join(keep[1]))} (re-rendered, "
                        "measured seconds masked)")
        return False
    result.checked.add(rel)
    said = [[ln for ln in t.splitlines() if ln.startswith(PROVENANCE)] for t in (a, b)]
    if said[0] != said[1]:
        result.skip(f"{rel} (its provenance lines)", "they show verification.json or received.json as they were "
                                                     "when it was rendered, not as they are now: the next snakemake "
                                                     "run renders it again")
    return True


def compare_store(src, fresh, result) -> None:
    """Each published file against its store entry, under the name this checkout gives the entry; where the
    source holds no entry of that name, the entry its published.json names (inside its store) stands in."""
    from banditrepro.workflow.publish import pairs

    files = src.published.get("files") if isinstance(src.published.get("files"), dict) else {}
    by_fixed = {}
    for fixed, entry in files.items():
        frm = entry.get("from") if isinstance(entry, dict) else None
        if isinstance(fixed, str) and isinstance(frm, str):
            by_fixed[_under_results(fixed, src)] = _under_results(frm, src)
    for store, fixed, _key in pairs(fresh):
        rel_fixed, rel_store = _rel(fresh, fixed), _rel(fresh, store)
        theirs = src.results / rel_fixed
        entry = src.results / rel_store
        named = by_fixed.get(rel_fixed)
        if not entry.is_file() and named and named.startswith("store/") and ".." not in named.split("/"):
            rel_store, entry = named, src.results / named
        if not theirs.is_file():
            if rel_fixed not in result.reported:
                result.mismatch(f"{rel_fixed}: missing")
            continue
        if not entry.is_file():
            result.skip(rel_fixed, "no store entry to compare it with (this checkout names it otherwise)")
            continue
        if entry.read_bytes() != theirs.read_bytes():
            result.mismatch(f"{rel_fixed}: differs from its store entry {rel_store}")
            continue
        # equal bytes: the entry is checked as far as the fixed file is (re-derived, or an image or the stack,
        # which only their store entry is there to compare with)
        result.store_equal += 1
        result.checked.update((rel_fixed, rel_store))


def _under_results(path: str, src) -> str:
    """A path published.json records (project-relative, ``<results_dir>/…``, or already results-relative) as a
    path under the results folder; a path outside it stays as it is (and is never opened: not ``store/…``)."""
    prefix = str(src.published.get("results_dir") or "").rstrip("/")
    if prefix and path.startswith(prefix + "/"):
        return path[len(prefix) + 1:]
    return path
