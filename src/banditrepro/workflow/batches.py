"""Batches: the Snakemake jobs that compute missing shards.

A *batch* is one job of rule ``simulate`` (one SLURM submission on a cluster) computing a list of missing
shards of one dataset, named ``<dataset>-<digest of its shards' paths>``. The shards are never Snakemake
outputs: Snakemake removes the outputs of a job before it runs and after it fails, and a cluster job cancelled
after 31 of its 54 shards would lose all 54 (docs/decisions.md#content-addressing). What Snakemake tracks is the batch's
end, ``<results>/batches/<batch>.done`` (temporary: removed once the summaries that needed it ran).

The body (``run_batch``) computes each of its shards whose file does not exist, in order, and skips the
others: a shard is complete when its file exists, because its name covers everything its bytes depend on and
it is written atomically, last. So a killed batch loses only the shard it was writing, and a retry, a requeue
or the same command after ``kill -9`` computes only the rest, at once: there is nothing to wait for. Two
writers of one shard (a requeued job beside its not yet dead first attempt) cost CPU only: they write the
same bytes and each replaces the file atomically. A stop request (Ctrl-C, SIGTERM: workflow/stop.py) ends a
batch before its next shard.

In cluster mode the main process writes each batch's *spec* (``<results>/batches/<batch>.json``: its shards
and estimated seconds) in a local job before submitting it, and the node reads it (``read_spec``), checking it
against its name: a node plans the shards missing when it starts, which is not what was submitted once other
batches have finished.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

from banditrepro import ReproError
from banditrepro.filehash import file_sha256
from banditrepro.layout import shard_file
from banditrepro.workflow.cells import split_key

# A batch's SLURM time limit: the estimate (jobsize: ns/step medians, right within a factor of a few) times
# SAFETY, plus START_MINUTES for the node's two Snakemake start-ups, the kernels' numba cache loads and a
# slow shared file system; doubled on each retry (a batch killed at its limit retries with twice, then four
# times the limit, and computes only the shards it had not finished).
SAFETY = 3.0
START_MINUTES = 5
DIGEST_CHARS = 12  # of a batch's name: 48 bits of the digest of its shards' paths (Plan.shard_id)
NAME_PATTERN = rf"[a-z0-9][a-z0-9-]*-[0-9a-f]{{{DIGEST_CHARS}}}"


@dataclass(frozen=True)
class Batch:
    name: str  # <dataset>-<digest of its shards' paths under the results folder>
    dataset: str
    shards: tuple  # ((cell, first run, last run), ...), in the plan's order
    seconds: float  # estimated work

    def minutes(self, attempt: int = 1, limit: int | None = None) -> int:
        return requested_minutes(self.seconds, attempt, limit)


def requested_minutes(seconds: float, attempt: int = 1, limit: int | None = None) -> int:
    """SLURM runtime (minutes) of a batch of ``seconds`` estimated work at its ``attempt``-th try (Snakemake
    counts from 1), at most ``limit`` (the partition's)."""
    minutes = (START_MINUTES + math.ceil(seconds * SAFETY / 60)) * 2 ** (max(1, int(attempt)) - 1)
    return min(minutes, limit) if limit else minutes


def batch_name(dataset: str, relpaths) -> str:
    digest = hashlib.sha256("\n".join(relpaths).encode()).hexdigest()
    return f"{dataset}-{digest[:DIGEST_CHARS]}"


def pack(shards, seconds, dataset_of, shard_id, target_seconds: float, algorithm_of=None) -> list[Batch]:
    """Batches of ``shards`` (in a fixed order, grouped by dataset and, locally, by algorithm), each of one
    dataset (a batch reads one prepared file) and cut greedily: a batch takes the next shard while its
    estimated work stays within ``target_seconds`` (a shard longer than that is a batch alone).
    ``seconds(*shard)``: a shard's work; ``shard_id(*shard)``: its path under the results folder (base seed
    and code digest included), which names the batch (docs/decisions.md#batch-identity). ``algorithm_of``
    (local runs: the kernel, all its parameter sets): a batch also holds one algorithm only, so a kernel that
    fails blocks only its own cells and adding an algorithm (a challenger) never regroups another's shards."""
    out, current, work = [], [], 0.0
    group = (lambda c: (dataset_of(c), algorithm_of(c))) if algorithm_of else dataset_of

    def close():
        if current:
            ds = dataset_of(current[0][0])
            out.append(Batch(batch_name(ds, [shard_id(*s) for s in current]), ds, tuple(current), work))

    for s in shards:
        w = seconds(*s)
        if current and (group(s[0]) != group(current[0][0]) or work + w > target_seconds):
            close()
            current, work = [], 0.0
        current.append(s)
        work += w
    close()
    return out


def check_limit(batches, partition_minutes) -> None:
    """A batch longer than the partition allows would be refused or killed by SLURM: stop at parse time."""
    if partition_minutes is None or not batches:
        return
    longest = max(batches, key=lambda b: b.seconds)
    if longest.minutes() > partition_minutes:
        raise ReproError(
            f"configuration error: partition_minutes: a batch asks for {longest.minutes()} min "
            f"(batch_minutes plus margin, banditrepro/workflow/batches.py) but the partition allows "
            f"{partition_minutes}; lower batch_minutes")


def dataset_of_batch(name: str) -> str:
    """The dataset of a batch name (``<dataset>-<digest>``)."""
    return name.rpartition("-")[0]


def spec(batch: Batch, shard_ids) -> dict:
    """What the node of a cluster batch reads: its shards as (cell, first, last) and their estimated work."""
    return {"batch": batch.name, "dataset": batch.dataset, "seconds": batch.seconds,
            "shards": [[c, a, b] for c, a, b in batch.shards], "paths": list(shard_ids)}


def write_spec(path, batch: Batch, shard_ids) -> None:
    from banditrepro.atomic import write_json

    write_json(path, spec(batch, shard_ids), durable=True)


def read_spec(path, name: str, missing_ok: bool = False) -> Batch | None:
    """The batch a spec file describes, checked against its name (the digest of its shards' paths): a spec of
    another batch, or an edited one, is refused. None if it does not exist and ``missing_ok``."""
    import json

    try:
        d = json.loads(Path(path).read_text())
    except FileNotFoundError:
        if missing_ok:
            return None
        raise ReproError(f"batch {name}: its spec {path} is missing: run snakemake again") from None
    except (OSError, ValueError) as exc:
        raise ReproError(f"batch {name}: its spec {path} cannot be read ({exc}): delete it and run snakemake "
                         "again") from None
    shards = tuple((c, int(a), int(b)) for c, a, b in d.get("shards", []))
    # the name covers the paths, the node computes the shards: both must be the batch's
    if batch_name(d.get("dataset", ""), d.get("paths", [])) != name or not _paths_of(d.get("paths", []), shards):
        raise ReproError(f"batch {name}: its spec {path} describes other shards: delete it and run snakemake again")
    return Batch(name, d["dataset"], shards, float(d["seconds"]))


def _paths_of(paths, shards) -> bool:
    """Whether ``paths`` are the paths of ``shards``, one each (``.../<cell>/<shards key>/<shard file>``)."""
    if len(paths) != len(shards):
        return False
    for p, (cell, first, last) in zip(paths, shards):
        folder, _, file = str(p).rpartition("/")
        if file != shard_file(first, last) or not f"/{folder.rpartition('/')[0]}".endswith(f"/{cell}"):
            return False
    return True


def check_names(plan, batch: Batch) -> None:
    """A node must name a spec's shards as the submitting host did: another numpy, numba, code or config there
    would write them under other names (computed twice, and the summaries would not find them). One line."""
    try:
        mine = batch_name(batch.dataset, [plan.shard_id(*s) for s in batch.shards])
    except KeyError:
        mine = None
    if mine != batch.name:
        from banditrepro.workflow.names import numerics_stack

        stack = ", ".join(f"{k} {v}" for k, v in numerics_stack().items())
        raise ReproError(f"batch {batch.name}: this host names its shards otherwise (its code, config or stack "
                         f"differ from the submitting host's; here: {stack}): run on hosts with one installation")


def io_failure(exc: OSError, what) -> ReproError | None:
    """One line for an I/O error (disk full, quota, EIO, ESTALE ...) naming the file: never taken for a
    kernel's failure (docs/decisions.md#only-corruption-deletes). None for an OSError without an errno."""
    from banditrepro.atomic import io_error_text

    return ReproError(io_error_text(exc, what)) if exc.errno else None


def compute_shard(plan, shard, prepared: str, compute=None, prepared_sha256: str | None = None) -> list:
    """One shard of the plan, written atomically under its name; the results (one per run). A kernel that raises
    fails naming its cell; an I/O error names the file."""
    from banditrepro.cell import simulate_shard

    cell, first, last = shard
    path = plan.shard(*shard)
    _, horizon, algo = split_key(cell)
    try:
        return (compute or simulate_shard)(algo, prepared, horizon, first, last, plan.config["base_seed"],
                                           path, prepared_sha256)
    except ReproError:
        raise
    except OSError as exc:
        raise (io_failure(exc, exc.filename or path) or _kernel_failure(algo, cell, first, last, exc)) from None
    except Exception as exc:  # a kernel that raises (a plugin, a challenger): its job fails naming it
        raise _kernel_failure(algo, cell, first, last, exc) from None


def run_batch(plan, batch: Batch, prepared: str, done_path: str | None, compute=None) -> str:
    """The batch body: every shard of ``batch`` whose file does not exist, computed in order; then its end
    (``done_path``). ``compute(algo_id, prepared, horizon, first, last, base_seed, out)`` writes a shard
    (cell.simulate_shard). Returns the job log's text. A stop request ends it before its next shard."""
    import os

    from banditrepro.atomic import write_text
    from banditrepro.workflow import stop

    sha = file_sha256(prepared)  # recorded in each shard's sidecar (provenance; its name holds the data key)
    lines, done = [], 0
    for shard in batch.shards:
        stop.check()
        path = plan.shard(*shard)
        rel = plan.shard_id(*shard)
        if os.path.exists(path):
            lines.append(f"{rel}: complete, skipped")
            continue
        results = compute_shard(plan, shard, prepared, compute, sha)
        log_computed(plan.layout.shards_log, rel)
        done += 1
        lines += [f"{rel}: computed"] + [f"  {r.describe()}" for r in results]
    if done_path:
        write_text(done_path, f"{batch.name}\n")
    lines.append(f"batch {batch.name}: {done} of {len(batch.shards)} shards computed, the rest complete")
    return "\n".join(lines) + "\n"


def log_computed(path, rel: str) -> None:
    """One line per shard computed (what each job did: the fault tests read it): path, host, pid, SLURM job.
    Appended in one write under O_APPEND, so lines of concurrent writers never interleave."""
    import os
    import socket

    line = f"{rel} {socket.gethostname()} {os.getpid()} {os.environ.get('SLURM_JOB_ID', '-')}\n"
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _kernel_failure(algo, cell, first, last, exc) -> ReproError:
    return ReproError(f"algorithm {algo!r} failed on {cell} (runs {first}-{last}): {type(exc).__name__}: {exc}")
