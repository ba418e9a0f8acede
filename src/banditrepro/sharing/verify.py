"""``banditrepro verify``: check a results folder or a bundle without trusting it and without recomputing all of it.

Nothing the source says about itself decides anything: its config (published.json) is the only thing taken from
it, to build the plan this checkout makes of that config; everything else is checked against that plan.

1. Shards. A sample of ``--sample N`` shards (``--all``: every shard), drawn uniformly at random with ``--seed S``
   (default: a fresh seed, printed with the command that repeats the draw), is recomputed from each shard's name
   alone (algorithm, dataset, horizon, runs, base seed) in a process of its own, from *this checkout's* prepared
   data (banditrepro/sharing/localdata.py: a prepared file shipped in a bundle is compared with it, never used).
   Whether the bytes must agree is decided by this checkout's own names: where a shard's folder carries the key
   this checkout gives its cell, byte for byte; elsewhere every array is compared within a stated tolerance,
   and the source's published.json record explains why only if its key is the key of its recorded parts.
   The draw and the recomputation: banditrepro/sharing/recompute.py.
2. Everything after the shards is re-derived (banditrepro/sharing/rederive.py) and compared; every published
   file is compared with its store entry.
3. Every other file of the source is named on a ``not checked: <path> (<why>)`` line; the last line says
   "verified" only when every file was checked and every shard recomputed.

What a sample proves: a folder in which ⌈M/100⌉ of its M shards were altered (wherever they lie: the draw is
uniform) passes a uniform sample of N with the hypergeometric probability C(M - m, N) / C(M, N); the last line
gives it. Nothing is written into the source but ``verification.json`` with ``--record``.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from banditrepro import ReproError
from banditrepro.layout import shard_file, shards_rel, split_key
from banditrepro.sharing.localdata import results_rel
from banditrepro.sharing.recompute import CURVE_TOLERANCE, TOLERANCE, check_shards
from banditrepro.workflow.names import PARTS  # a record's parts: what its key must be the key of

ALTERED = 0.01  # the fraction of altered shards the sample's power is stated for
RECORD = "verification.json"


def add_arguments(p) -> None:
    from banditrepro.arguments import _SEED, _integer

    p.add_argument("source", nargs="?", help="a results folder or a bundle (.tar.gz; default <project>/results)")
    p.add_argument("--sample", type=_integer(0, 10**9), default=20, help="shards to recompute (default 20)")
    p.add_argument("--seed", type=_SEED, default=None,
                   help="draws the sample (default: a fresh random seed, printed with the command repeating it)")
    p.add_argument("--all", action="store_true", help="recompute every shard")
    p.add_argument("--jobs", type=_integer(1, 512), default=os.cpu_count() or 1,
                   help="processes recomputing shards (default: the cores)")
    p.add_argument("--record", action="store_true",
                   help=f"write {RECORD} into the folder (report.md and reproduction.md show it after the next "
                        "snakemake run)")


def run(args) -> int:
    import secrets
    import shlex

    from banditrepro.sharing.sources import is_bundle, open_source

    root = args.project_info.root
    if root is None:
        raise ReproError(f"no project folder here ({args.project_info.hint()})")
    given = args.source or str(root / "results")
    if args.record and is_bundle(given):
        raise ReproError("--record writes into a results folder, not into a bundle: verify the folder instead")
    # a seed nobody knows before the folder is checked: a known one lets a folder be altered where it will not look
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    with open_source(given, data_dir=root / "data") as src:
        result = verify(src, root, sample=None if args.all else args.sample, seed=seed, jobs=args.jobs)
        for line in result.lines:
            print(line)
        if not args.all:
            print(f"sample drawn with seed {seed}; to draw it again: banditrepro verify {shlex.quote(given)} "
                  f"--sample {args.sample} --seed {seed}")
        print(result.summary())
        if args.record:
            write_record(src, result)
            print(f"recorded in {src.results / RECORD}")
    return 0 if result.ok else 1


# --- what was checked --------------------------------------------------------------------------------------


@dataclass
class Result:
    source: str
    seed: int
    shards_total: int = 0
    sampled: list = field(default_factory=list)  # shard paths under the results folder
    identical: int = 0
    within_tolerance: int = 0
    summaries: int = 0
    tables: int = 0
    claims: int = 0
    leaderboards: int = 0
    rederived: int = 0  # of runtime.csv, report.md, reproduction.md: re-derived equal
    store_equal: int = 0  # published files equal to their store entry
    mismatches: list = field(default_factory=list)  # one line each
    lines: list = field(default_factory=list)  # what is printed before the summary (mismatches and notes)
    checked: set = field(default_factory=set)  # paths (as localdata.source_files names them) checked
    skipped: dict = field(default_factory=dict)  # path -> why it is not checked
    bundle_sha256: str | None = None
    tolerance: float = TOLERANCE
    describes: dict | None = None  # the store entries checked (banditrepro/records.py): a report shows only its own

    @property
    def ok(self) -> bool:
        return not self.mismatches

    @property
    def reported(self) -> set:
        """The paths a mismatch line names."""
        return {m.split(":", 1)[0] for m in self.mismatches}

    def mismatch(self, line: str) -> None:
        self.mismatches.append(line)
        self.lines.append(f"MISMATCH {line}")

    def note(self, line: str) -> None:
        self.lines.append(line)

    def skip(self, path: str, why: str) -> None:
        self.skipped.setdefault(path, why)

    def readable(self, path) -> bool:
        """Whether a stored shard can be read; a mismatch line if not. Read here, never through the summary
        code, which deletes a corrupt file so that the next run makes it again: verify changes nothing."""
        from banditrepro.cell import load_runs

        try:
            load_runs(path)
            return True
        except ReproError as exc:
            if results_rel(path) not in self.reported:
                self.mismatch(f"{results_rel(path)}: cannot be read ({exc})")
            return False

    def pass_probability(self) -> float:
        """The probability that a folder with ``ALTERED`` of its shards altered passes this sample."""
        return pass_probability(self.shards_total, len(self.sampled))

    def summary(self) -> str:
        n = len(self.sampled)
        shards = f"checked: {n} of {self.shards_total} shards recomputed, {self.identical} byte-identical"
        if self.within_tolerance:
            shards += (f", {self.within_tolerance} equal within {TOLERANCE:g} (curves {CURVE_TOLERANCE:.2g}; not "
                       "byte-compared: named otherwise here)")
        derived = (f"{self.summaries} summaries, {self.tables} tables, {self.claims} claims"
                   + (f", {self.leaderboards} leaderboards" if self.leaderboards else "")
                   + f", {self.rederived} of runtime.csv, report.md, reproduction.md re-derived equal; "
                   f"{self.store_equal} published files equal to their store entry")
        unchecked = f"not checked: {len(self.skipped)} files (listed above)" if self.skipped else ""
        power = (f"a folder with {ALTERED:.0%} of its {self.shards_total} shards altered passes this sample with "
                 f"probability {self.pass_probability():.3g}")
        if not self.ok:
            head = f"NOT verified ({len(self.mismatches)} mismatches)"
        elif not self.skipped and n == self.shards_total:
            head = "verified"
        else:  # never "verified" for what was not checked
            head = "no mismatch in what was checked"
        return f"{head}: " + "; ".join(x for x in (shards, derived, unchecked, power) if x)

    def record(self) -> dict:
        from banditrepro.workflow.names import numerics_stack
        from banditrepro.workflow.software import stack

        return {"source": self.source, "bundle_sha256": self.bundle_sha256, "seed": self.seed,
                "result": "pass" if self.ok else "fail", "summary": self.summary(),
                "shards": {"total": self.shards_total, "sampled": sorted(self.sampled), "byte_identical":
                           self.identical, "within_tolerance": self.within_tolerance, "tolerance": TOLERANCE,
                           "curve_tolerance": CURVE_TOLERANCE},
                "re_derived_equal": {"summaries": self.summaries, "tables": self.tables, "claims": self.claims,
                                     "leaderboards": self.leaderboards, "runtime_and_reports": self.rederived},
                "not_checked": dict(sorted(self.skipped.items())),
                "pass_probability_if_1pct_altered": self.pass_probability(), "mismatches": self.mismatches,
                "notes": [ln for ln in self.lines if not ln.startswith("MISMATCH ")],
                "stack": {**numerics_stack(), "python_full": stack()["python"]}, "describes": self.describes}


def pass_probability(total: int, sampled: int, altered: float = ALTERED) -> float:
    """P(a uniform sample of ``sampled`` of ``total`` shards misses every one of the ceil(altered x total)
    altered): hypergeometric, C(total - bad, sampled) / C(total, sampled), wherever the altered shards lie."""
    if total <= 0:
        return 1.0
    bad = max(1, math.ceil(altered * total))
    if sampled > total - bad:
        return 0.0
    return math.comb(total - bad, sampled) / math.comb(total, sampled)


def write_record(src, result: Result) -> None:
    """verification.json in the results folder: what was checked, the seed, the stack, when, the result."""
    import datetime

    from banditrepro.atomic import write_json

    rec = result.record()
    rec["checked_at"] = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    write_json(src.results / RECORD, rec)


# --- the checks ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellCheck:
    cell: str
    key: str  # the key of the folder whose shards are checked: the shards' actual path
    byte: bool  # that key is the one this checkout gives the cell: bytes must agree
    why: str  # tolerance mode: why the names differ (from a trusted record), or that nothing trusted says
    trusted_record: bool  # the source's record names this folder, and its key is the key of its parts
    shards: tuple  # ((first, last, path), ...) holding runs 0..runs-1


def verify(src, root, sample: int | None, seed: int, jobs: int) -> Result:
    """Check ``src`` (sources.Source) with this checkout at ``root``; ``sample`` None: every shard."""
    from banditrepro.sharing.localdata import compare_shipped, inventory, local_data
    from banditrepro.sharing.rederive import rederive

    plan = src.plan(root)
    result = Result(src.given, seed, bundle_sha256=src.bundle_sha256)
    result.describes = _describes(plan)
    with tempfile.TemporaryDirectory(prefix="banditrepro-verify-") as tmp:
        scratch = Path(tmp)
        unrun = unavailable_datasets(plan, src)
        data = scratch / "data"
        local, absent = local_data(plan, root, data, {d for d in plan.names.data if d not in unrun})
        _status_view(plan, src, data)
        compare_shipped(src, plan, local, result)
        cells = _cells(plan, src, result, unrun, absent)
        check_shards(plan, cells, local, sample, seed, jobs, scratch / "recomputed", result)
        rederive(plan, src, cells, data, scratch, result)
    inventory(src, result)
    return result


def _describes(plan) -> dict:
    """The store entries a verification of ``plan``'s folder is about (banditrepro/records.py)."""
    from banditrepro.records import describes

    return describes(plan.names)


def _status_view(plan, src, data: Path) -> None:
    """The source's probe verdicts of its optional datasets, used as recorded (the probe ran on its machine)."""
    from banditrepro.sharing.localdata import copy_into

    for dataset in plan.optional_datasets():
        status = Path(src.data) / "status" / f"{dataset}.json"
        if status.is_file():
            copy_into(status, data / "status" / status.name)


def record_key_ok(cell: str, rec, result: Result) -> bool:
    """Whether the source's record of a cell has the key of its own parts (names.key_of_parts); a mismatch line
    if not: such a record explains nothing."""
    from banditrepro.workflow import names

    try:
        key = names.key_of_parts({k: rec[k] for k in PARTS})
    except (KeyError, TypeError):
        result.mismatch(f"published.json: the record of {cell} lacks the parts of its key: it explains nothing")
        return False
    if key != rec.get("key"):
        result.mismatch(f"published.json: the record of {cell} gives key {rec.get('key')}, its parts give {key}: "
                        "it explains nothing")
        return False
    return True


def _key_folders(src) -> dict:
    """cell -> key -> {first: last} of every shard folder the source holds (the shards' actual paths, as the reader
    listed and checked them; the longest shard where several start alike, as the plan follows them)."""
    found: dict = {}
    for sh in src.shards():
        held = found.setdefault(sh.cell, {}).setdefault(sh.key, {})
        held[sh.first] = max(sh.last, held.get(sh.first, sh.last))
    return found


def _cells(plan, src, result: Result, unrun: set, absent: dict) -> list[CellCheck]:
    """Every cell of the plan with the source's shards that hold its runs: those under the key this checkout gives
    the cell (bytes must agree), else those of the folder the source's record names or of its only folder
    (tolerance). A cell whose runs are not all stored is a mismatch."""
    from banditrepro.workflow.plan import plan_shards

    recorded = src.cells
    trusted = {cell: record_key_ok(cell, rec, result) for cell, rec in sorted(recorded.items())
               if isinstance(rec, dict)}
    if all(trusted.values()):
        result.checked.add("published.json")
    out, folders_of = [], _key_folders(src)
    for cell in sorted(plan.names.shards):
        dataset = split_key(cell)[0]
        if dataset in unrun:
            continue
        folders = folders_of.get(cell, {})
        if dataset in absent:
            for key in folders:
                result.skip(f"{shards_rel(cell, key)}/", f"{dataset} cannot be prepared here: {absent[dataset]}")
            continue
        ours, rec = plan.names.shards[cell], recorded.get(cell) if isinstance(recorded.get(cell), dict) else {}
        if ours in folders:
            key, byte, why = ours, True, ""
        elif rec.get("key") in folders or len(folders) == 1:
            key, byte = (rec["key"] if rec.get("key") in folders else next(iter(folders))), False
            mine = plan.names.parts[cell]
            differ = [k for k in PARTS if rec.get(k) != mine[k]]
            why = (f"{', '.join(differ)} differ (published.json)" if trusted.get(cell) and rec.get("key") == key
                   and differ else "nothing trusted says why")
        else:
            result.mismatch(f"{shards_rel(cell, ours)}: no shard stored under this checkout's name"
                            + (f" ({len(folders)} other folders, none the record names)" if folders else ""))
            continue
        runs = plan.cell_runs[cell]
        existing = folders[key]
        held = [(a, b) for a, b in plan_shards(runs, runs, existing) if existing.get(a) == b]
        covered = held[-1][1] + 1 if held else 0
        if covered < runs:
            result.mismatch(f"{shards_rel(cell, key)}: holds runs 0-{covered - 1} of 0-{runs - 1}")
        folder = src.results / shards_rel(cell, key)
        out.append(CellCheck(cell, key, byte, why, bool(trusted.get(cell)) and rec.get("key") == key,
                             tuple((a, b, folder / shard_file(a, b)) for a, b in held)))
    other = [c for c in out if not c.byte]
    if other:
        whys = sorted({c.why for c in other})
        result.note(f"note: this checkout names {len(other)} of {len(out)} cells otherwise than their folders do "
                    f"({'; '.join(whys)}): every array of their shards is compared within {TOLERANCE:g} (curves "
                    f"{CURVE_TOLERANCE:.2g}), not byte for byte")
    if unrun:
        result.note(f"note: {', '.join(sorted(unrun))} not run (an optional dataset its probe found unavailable): "
                    "their cells are not checked")
    return out


def unavailable_datasets(plan, src) -> set[str]:
    """The optional datasets of the plan that the source's run did not draw: their probe status (the source's,
    else none) says unavailable. Their cells were planned but never computed (their panels say *not run*)."""
    return {dataset for dataset in plan.optional_datasets() if not src.probe(dataset).available}


