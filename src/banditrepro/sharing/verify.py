"""``banditrepro verify``: check a results folder or a bundle without trusting it and without recomputing all of it.

1. A sample of its shards (``--sample N``, chosen with ``--seed S`` and spread over papers, algorithms and
   horizons; ``--all``: every shard) is recomputed from each shard's name alone (algorithm, dataset, horizon,
   runs, base seed: the name covers everything else), each in a fresh process, and compared byte for byte.
2. Every summary is re-derived from the stored shards, every figure table, claims.csv and every leaderboard
   from the re-derived summaries, into a scratch folder, and compared byte for byte with the stored files.
   Nothing in the source is written (but ``verification.json`` with ``--record``).

What a sample proves: a folder in which a fraction of the shards was altered passes a sample of N of its M
shards with the hypergeometric probability of drawing none of them; the last line but one gives it for 1 %.

Where this checkout would name a cell's shards otherwise than the source does (another numerics stack, other
kernel code: the parts of the name published.json records differ), bytes cannot be expected to agree: the
cell's recomputed runs are then compared by their final values within ``TOLERANCE`` and reported as such,
never as byte-identical; summaries named otherwise likewise.
"""

from __future__ import annotations

import csv
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from banditrepro import ReproError
from banditrepro.sharing.differences import first_difference, npz_difference, text_difference

# Relative tolerance on each run's final values where the verifier's stack or code differs from the source's.
# Same random streams through another compiler or numpy differ only by rounding: float64 sums of up to 10^6
# per-step terms, each off by an ulp at most, move a final value by ~T x 2^-53 ~ 1e-10 relative; 1e-9 leaves
# a factor 10 of margin. A changed random stream or algorithm changes a final value by percent (a run's regret
# is a random sum of O(sqrt T) spread), so the verdict flips only for a change 10^7 times smaller than that.
TOLERANCE = 1e-9
ALTERED = 0.01  # the fraction of altered shards the sample's power is stated for
RECORD = "verification.json"


def add_arguments(p) -> None:
    from banditrepro.arguments import _SEED, _integer

    p.add_argument("source", nargs="?", help="a results folder or a bundle (.tar.gz; default <project>/results)")
    p.add_argument("--sample", type=_integer(0, 10**9), default=20, help="shards to recompute (default 20)")
    p.add_argument("--seed", type=_SEED, default=0, help="chooses the sample (default 0)")
    p.add_argument("--all", action="store_true", help="recompute every shard")
    p.add_argument("--jobs", type=_integer(1, 512), default=os.cpu_count() or 1,
                   help="processes recomputing shards (default: the cores)")
    p.add_argument("--record", action="store_true",
                   help=f"write {RECORD} into the folder (report.md and reproduction.md show it after the next "
                        "snakemake run)")


def run(args) -> int:
    from banditrepro.sharing.sources import is_bundle, open_source

    root = args.project_info.root
    if root is None:
        raise ReproError(f"no project folder here ({args.project_info.hint()})")
    given = args.source or str(root / "results")
    if args.record and is_bundle(given):
        raise ReproError("--record writes into a results folder, not into a bundle: verify the folder instead")
    with open_source(given, data_dir=root / "data") as src:
        result = verify(src, root, sample=None if args.all else args.sample, seed=args.seed, jobs=args.jobs)
        for line in result.lines:
            print(line)
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
    not_sampled: list = field(default_factory=list)  # lines: shards that could not be recomputed here
    summaries: int = 0
    tables: int = 0
    claims: int = 0
    leaderboards: int = 0
    mismatches: list = field(default_factory=list)  # one line each
    lines: list = field(default_factory=list)  # what is printed before the summary (mismatches and notes)
    bundle_sha256: str | None = None

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def mismatch(self, line: str) -> None:
        self.mismatches.append(line)
        self.lines.append(f"MISMATCH {line}")

    def note(self, line: str) -> None:
        self.lines.append(line)

    def pass_probability(self) -> float:
        """The probability that a folder with ``ALTERED`` of its shards altered passes this sample."""
        return pass_probability(self.shards_total, len(self.sampled))

    def summary(self) -> str:
        n = len(self.sampled)
        parts = [f"{self.identical} of {n} sampled shards byte-identical"]
        if self.within_tolerance:
            parts[0] += (f", {self.within_tolerance} equal within {TOLERANCE:g} (not byte-compared: named "
                         "otherwise here)")
        parts.append(f"{self.summaries} summaries, {self.tables} tables, {self.claims} claims"
                     + (f", {self.leaderboards} leaderboards" if self.leaderboards else "") + " re-derived equal")
        power = (f"; a folder with {ALTERED:.0%} of its {self.shards_total} shards altered passes this sample with "
                 f"probability {self.pass_probability():.3g}")
        head = "verified" if self.ok else f"NOT verified ({len(self.mismatches)} mismatches)"
        return f"{head}: {'; '.join(parts)}{power}"

    def record(self) -> dict:
        from banditrepro.workflow.names import numerics_stack
        from banditrepro.workflow.software import stack

        return {"source": self.source, "bundle_sha256": self.bundle_sha256, "seed": self.seed,
                "result": "pass" if self.ok else "fail", "summary": self.summary(),
                "shards": {"total": self.shards_total, "sampled": sorted(self.sampled), "byte_identical":
                           self.identical, "within_tolerance": self.within_tolerance, "tolerance": TOLERANCE},
                "re_derived_equal": {"summaries": self.summaries, "tables": self.tables, "claims": self.claims,
                                     "leaderboards": self.leaderboards},
                "pass_probability_if_1pct_altered": self.pass_probability(), "mismatches": self.mismatches,
                "notes": [ln for ln in self.lines if not ln.startswith("MISMATCH ")],
                "stack": {**numerics_stack(), "python_full": stack()["python"]}}


def pass_probability(total: int, sampled: int, altered: float = ALTERED) -> float:
    """P(a sample of ``sampled`` of ``total`` shards misses every one of the ceil(altered x total) altered):
    hypergeometric, C(total - bad, sampled) / C(total, sampled)."""
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
    stored_key: str  # the key of the source's shards
    differs: tuple  # the parts of the name this checkout gives otherwise (empty: the same name)
    shards: tuple  # ((first, last, path), ...) holding runs 0..runs-1, from the source


def verify(src, root, sample: int | None, seed: int, jobs: int) -> Result:
    """Check ``src`` (sources.Source) with this checkout at ``root``; ``sample`` None: every shard."""
    plan = src.plan(root)
    result = Result(src.given, seed, bundle_sha256=src.bundle_sha256)
    cells = _cells(plan, src, result)
    with tempfile.TemporaryDirectory(prefix="banditrepro-verify-") as tmp:
        scratch = Path(tmp)
        data = _data_view(plan, src, root, scratch / "data")
        _check_shards(plan, cells, data, sample, seed, jobs, scratch / "recomputed", result)
        _rederive(plan, src, cells, data, scratch, result)
    return result


def _cells(plan, src, result: Result) -> list[CellCheck]:
    """Every cell of the plan, with the source's shards that hold its runs; a cell whose runs are not all
    stored is a mismatch."""
    from banditrepro.workflow import digests, names
    from banditrepro.workflow.cells import split_key
    from banditrepro.workflow.plan import existing_shards, plan_shards

    recorded = src.cells
    out = []
    unrun = unavailable_datasets(plan, src)
    for cell in sorted(plan.cell_names):
        dataset, horizon, algo = split_key(cell)
        if dataset in unrun:
            continue
        rec = recorded.get(cell)
        ours = names.cell_parts(algo, digests.cell_code(algo), plan.names.data[dataset], horizon,
                                plan.config["base_seed"])
        key = rec["key"] if rec else plan.cell_names[cell]
        differs = tuple(k for k in ours if rec and rec.get(k) != ours[k])
        folder = src.results / "cells" / cell / key
        runs = plan.cell_runs[cell]
        existing = existing_shards(folder)
        held = [(a, b) for a, b in plan_shards(runs, runs, existing) if existing.get(a) == b]
        covered = held[-1][1] + 1 if held else 0
        if covered < runs:
            result.mismatch(f"cells/{cell}/{key}: holds runs 0-{covered - 1} of 0-{runs - 1}" if covered else
                            f"cells/{cell}/{key}: no shard stored (the cell's {runs} runs are missing)")
        out.append(CellCheck(cell, key, differs, tuple((a, b, folder / f"runs{a}-{b}.npz") for a, b in held)))
    if unrun:
        result.note(f"note: {', '.join(sorted(unrun))} not run (an optional dataset its probe found unavailable): "
                    "their cells are not checked")
    differ = sorted({p for c in out for p in c.differs})
    if differ:
        n = sum(bool(c.differs) for c in out)
        result.note(f"note: this checkout names {n} of {len(out)} cells otherwise than the source ({', '.join(differ)} "
                    f"differ): their runs are compared within {TOLERANCE:g}, not byte for byte")
    return out


def unavailable_datasets(plan, src) -> set[str]:
    """The optional datasets of the plan that the source's run did not draw: their probe status (the source's,
    else none) says unavailable. Their cells were planned but never computed (their panels say *not run*)."""
    return {dataset for dataset in plan.optional_datasets() if not src.probe(dataset).available}


def _data_view(plan, src, root, into: Path) -> Path:
    """A data folder holding (as links) every prepared file and probe status the plan names: the source's
    where it has them (a bundle's), else this project's (a dataset a bundle withholds: prepared here under the
    same name, so the same bytes)."""
    project = Path(root) / "data"
    for dataset in sorted(plan.names.data):
        rel = Path(plan.layout.prepared_file(dataset)).relative_to(plan.layout.data_dir)
        for rel_path in (rel, Path("status") / f"{dataset}.json"):
            found = next((d / rel_path for d in (src.data, project) if (d / rel_path).is_file()), None)
            if found is not None:
                (into / rel_path).parent.mkdir(parents=True, exist_ok=True)
                os.symlink(found.resolve(), into / rel_path)
    return into


def _paper_of(plan) -> dict:
    """cell -> the first paper (in the manifest's order) with a figure drawing it."""
    from banditrepro.workflow.cells import cell_key

    out = {}
    for fig in plan.figures:
        for p in fig.panels:
            for a in p.algorithms:
                out.setdefault(cell_key(p.dataset, p.horizon, a.id), fig.paper)
    return out


def choose(shards: list, strata: list, n: int | None, seed: int) -> list:
    """``n`` of ``shards`` (None: all), spread evenly over ``strata`` (one label per shard): the strata in a
    random order, each's shards in a random order, taken round-robin. ``seed`` keys the stream
    (SeedSequence), so the same seed chooses the same shards."""
    if n is None or n >= len(shards):
        return list(shards)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), 0x5E1F])))
    groups: dict = {}
    for s, label in zip(shards, strata):
        groups.setdefault(label, []).append(s)
    order = [sorted(groups)[i] for i in rng.permutation(len(groups))]
    queues = [[groups[g][i] for i in rng.permutation(len(groups[g]))] for g in order]
    out = []
    while len(out) < n:
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop())
    return out


def _check_shards(plan, cells, data: Path, sample, seed, jobs, scratch: Path, result: Result) -> None:
    from banditrepro.workflow.cells import kernel_of, split_key

    paper = _paper_of(plan)
    pool, strata = [], []
    for c in cells:
        prepared = _prepared(plan, data, c.cell)
        for first, last, path in c.shards:
            if prepared is None:
                result.not_sampled.append(path)
                continue
            pool.append((c, first, last, path, prepared))
            _, horizon, _ = split_key(c.cell)
            strata.append((paper.get(c.cell, ""), kernel_of(c.cell), horizon))
    withheld = sorted({split_key(c.cell)[0] for c in cells if _prepared(plan, data, c.cell) is None and c.shards})
    if withheld:
        result.note(f"note: {len(result.not_sampled)} shards of {', '.join(withheld)} not sampled: their prepared "
                    "data are neither in the source nor prepared here (snakemake <their prepared file> prepares them)")
    result.shards_total = len(pool)
    chosen = choose(pool, strata, sample, seed)
    result.sampled = [_rel(result_path, plan) for *_, result_path, _ in chosen]
    tasks = []
    for c, first, last, path, prepared in chosen:
        _, horizon, algo = split_key(c.cell)
        out = scratch / c.cell / c.stored_key / path.name
        tasks.append((algo, str(prepared), horizon, first, last, int(plan.config["base_seed"]), str(out)))
    for (c, _first, _last, path, _), out in zip(chosen, _recompute_all(tasks, jobs)):
        rel = _rel(path, plan)
        if not _readable(path, rel, result):
            continue
        if c.differs:
            diff = first_difference(path, out, finals_only=True, rtol=TOLERANCE)
            if diff is None:
                result.within_tolerance += 1
            else:
                result.mismatch(f"{rel}: {diff} (recomputed with other {', '.join(c.differs)}; "
                                f"tolerance {TOLERANCE:g})")
        elif Path(path).read_bytes() == Path(out).read_bytes():
            result.identical += 1
        else:
            result.mismatch(f"{rel}: {first_difference(path, out) or 'bytes differ'}")


def _readable(path, rel: str, result: Result) -> bool:
    """Whether a stored shard can be read; a mismatch line if not. Read here, never through the summary code,
    which deletes a corrupt file so that the next run makes it again: verify changes nothing in its source."""
    from banditrepro.cell import load_runs

    try:
        load_runs(path)
        return True
    except ReproError as exc:
        result.mismatch(f"{rel}: cannot be read ({exc})")
        return False


def _rel(path, plan) -> str:
    parts = Path(path).parts
    return "/".join(parts[parts.index("cells"):]) if "cells" in parts else str(path)


def _prepared(plan, data: Path, cell: str) -> Path | None:
    from banditrepro.workflow.cells import dataset_of

    dataset = dataset_of(cell)
    rel = Path(plan.layout.prepared_file(dataset)).relative_to(plan.layout.data_dir)
    return data / rel if (data / rel).exists() else None


def _recompute(task) -> str:
    """One shard from its name's parts, in a fresh process (a process of its own: nothing cached in the
    verifier's, nothing shared with another shard but the kernels' compiled cache)."""
    from banditrepro.cell import simulate_shard

    algo, prepared, horizon, first, last, base_seed, out = task
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    simulate_shard(algo, prepared, horizon, first, last, base_seed, out)
    return out


def _recompute_all(tasks: list, jobs: int) -> list[str]:
    if not tasks:
        return []
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx, max_tasks_per_child=1) as ex:
        try:
            return list(ex.map(_recompute, tasks))
        except ReproError:
            raise
        except Exception as exc:  # a kernel that fails here: name it, one line
            raise ReproError(f"recomputing a shard failed: {type(exc).__name__}: {exc}") from None


# --- re-derivation ----------------------------------------------------------------------------------------


def _rederive(plan, src, cells, data: Path, scratch: Path, result: Result) -> None:
    """Summaries from the source's shards, tables, claims and leaderboards from those summaries, all into
    ``scratch``; each compared with the source's file."""
    from banditrepro import leaderboard
    from banditrepro.aggregate import write_summary
    from banditrepro.claims import write_claims
    from banditrepro.figures import write_table
    from banditrepro.layout import Layout
    from banditrepro.workflow.cells import split_key
    from banditrepro.workflow.plan import build_plan

    config = src.config
    config["results_dir"] = "results"
    fresh = build_plan(config, plan.root, scan=False, where=(scratch / "results", data))
    fresh.rename_outputs()
    stored = Layout(str(src.results))  # the fixed paths a reader opens
    recorded = src.cells
    for c in cells:
        if len(c.shards) == 0 or c.shards[-1][1] + 1 < plan.cell_runs[c.cell]:
            continue  # already a mismatch (runs missing)
        if not all([_readable(p, _rel(p, plan), result) for *_, p in c.shards]):
            continue
        dataset, horizon, algo = split_key(c.cell)
        out = Path(fresh.layout.summary(dataset, horizon, algo))
        write_summary([p for *_, p in c.shards], out, plan.cell_runs[c.cell])
        key = recorded.get(c.cell, {}).get("summary", plan.names.summary[(dataset, horizon, algo)])
        theirs = src.results / "summaries" / c.cell / f"{key}.npz"
        rel = f"summaries/{c.cell}/{key}.npz"
        if not theirs.is_file():
            result.mismatch(f"{rel}: missing")
        elif key != plan.names.summary[(dataset, horizon, algo)]:
            diff = npz_difference(theirs, out, TOLERANCE)
            if diff:
                result.mismatch(f"{rel}: {diff} (named otherwise here; tolerance {TOLERANCE:g})")
            else:
                result.summaries += 1
        elif theirs.read_bytes() != out.read_bytes():
            result.mismatch(f"{rel}: {npz_difference(theirs, out, 0.0) or 'bytes differ'}")
        else:
            result.summaries += 1
    if result.mismatches and any(m.startswith(("cells/", "summaries/")) and "missing" in m for m in result.mismatches):
        result.note("note: tables, claims and leaderboards not re-derived: summaries are missing")
        return
    st = fresh.store
    for fig in fresh.figures:
        write_table(fig, st, st.table(fig.paper, fig.id))
        before = len(result.mismatches)
        for suffix in ("csv", "md", "tex"):
            _compare_file(stored.table(fig.paper, fig.id, suffix), st.table(fig.paper, fig.id, suffix), src, result)
        result.tables += len(result.mismatches) == before  # a table counts as equal in its three forms
    write_claims(fresh.figures, st, st.claims_csv)
    n = _compare_file(stored.claims_csv, st.claims_csv, src, result, rows=True)
    result.claims = n or 0
    for paper in leaderboard.papers(fresh.figures):
        leaderboard.write_tables(fresh.figures, st, paper, st.leaderboard(paper, "csv"), st.leaderboard(paper, "md"))
        before = len(result.mismatches)
        for suffix in ("csv", "md"):
            _compare_file(stored.leaderboard(paper, suffix), st.leaderboard(paper, suffix), src, result)
        result.leaderboards += len(result.mismatches) == before


def _compare_file(theirs, ours, src, result: Result, rows: bool = False) -> int | None:
    """Compare the source's file with the re-derived one; a mismatch line names the first differing row and
    column (CSV) or line. Returns the data rows of a CSV that agrees (``rows``)."""
    theirs, ours = Path(theirs), Path(ours)
    rel = str(theirs.relative_to(src.results))
    if not theirs.is_file():
        result.mismatch(f"{rel}: missing")
        return None
    a, b = theirs.read_bytes(), ours.read_bytes()
    if a == b:
        return sum(1 for _ in csv.reader(a.decode().splitlines())) - 1 if rows else None
    result.mismatch(f"{rel}: {text_difference(a.decode(errors='replace'), b.decode(errors='replace'), theirs.suffix)}")
    return None


