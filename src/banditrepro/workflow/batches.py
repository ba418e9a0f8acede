"""Batches: the Snakemake jobs that compute shards, and the receipts they leave.

A *batch* is one job of rule ``simulate`` (one SLURM submission on a cluster) computing a list of shards of
one dataset. Its only declared output is its *receipt*, ``<results>/batches/<batch>.json``, written last:
the batch's shard names and the sha256 of the prepared dataset they were computed from. The shards are
ours, never Snakemake outputs, because Snakemake removes the outputs of a job before it runs and after it
fails: a cluster job cancelled after 31 of its 54 shards lost all 54 (docs/decisions.md#batches-and-receipts).

The batch body (``run_batch``) computes each of its shards that is not complete (``cell.shard_complete``:
the ``.npz`` exists and its sidecar records the current prepared file's sha256), in order, under a claim
(workflow/shard_claims.py), and skips the complete ones. So a killed batch loses only the shard it was
writing, a retry or a rerun computes only the rest, and a forced rerun whose prepared file comes out with
the same bytes recomputes nothing.

Batches are a pure function of the cells' shard lists and the batch target (``pack``): they do not depend
on which shards exist, so the main process and a cluster node plan the same batches and the node finds its
own from the job's wildcard ``{batch}``. The target: ``batch_minutes`` (cluster mode, set by
profiles/slurm's set-resources) or, when null (local runs), ``shard_seconds``: about one shard per batch.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

from banditrepro import ReproError
from banditrepro.atomic import write_json

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


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def receipt(batch: Batch, relpaths, prepared_sha256: str) -> dict:
    """What a finished batch records (deterministic: the same batch on the same data gives the same bytes)."""
    return {"batch": batch.name, "prepared_sha256": prepared_sha256, "shards": list(relpaths)}


def io_failure(exc: OSError, what) -> ReproError | None:
    """One line for an I/O error (disk full, quota, EIO, ESTALE ...) naming the file: never taken for a
    kernel's failure (docs/decisions.md#only-corruption-deletes). None for an OSError without an errno."""
    from banditrepro.atomic import io_error_text

    return ReproError(io_error_text(exc, what)) if exc.errno else None


def run_batch(plan, batch: Batch, prepared: str, receipt_path: str, compute=None) -> str:
    """The batch body: every shard of ``batch`` not complete, computed in order under its claim; then the
    receipt. ``compute(algo_id, prepared, horizon, first, last, base_seed, out, prepared_sha256)`` writes a
    shard (cell.simulate_shard). Returns the job log's text. A stop request (Ctrl-C, SIGTERM: workflow/stop.py)
    ends it before its next shard, or at once while it waits for a claim."""
    from banditrepro.cell import shard_complete, simulate_shard
    from banditrepro.workflow import shard_claims

    compute = compute or simulate_shard
    sha = file_sha256(prepared)
    me = shard_claims.Holder.me()
    lines, done = [], 0
    for cell, first, last in batch.shards:
        path, rel = plan.shard(cell, first, last), plan.shard_relpath(cell, first, last)
        if not shard_claims.acquire(path, lambda p=path: shard_complete(p, sha), me):
            lines.append(f"{rel}: complete, skipped")
            continue
        try:
            _, horizon, algo = cell.split("/")  # a cell key: <dataset>/T<horizon>/<algo> (plan.cell_key)
            results = compute(algo, prepared, int(horizon[1:]), first, last, plan.config["base_seed"], path, sha)
        except ReproError:
            raise
        except OSError as exc:
            raise (io_failure(exc, exc.filename or path) or _kernel_failure(algo, cell, first, last, exc)) from None
        except Exception as exc:  # a kernel that raises (a plugin, a challenger): its job fails naming it
            raise _kernel_failure(algo, cell, first, last, exc) from None
        finally:
            shard_claims.release(path, me)
        shard_claims.log_computed(plan.layout.shards_log, rel, me)
        done += 1
        lines += [f"{rel}: computed"] + [f"  {r.describe()}" for r in results]
    rels = [plan.shard_relpath(*s) for s in batch.shards]
    # last: the batch is done only when every shard is; synced (docs/decisions.md#durable-writes)
    write_json(receipt_path, receipt(batch, rels, sha), durable=True)
    lines.append(f"batch {batch.name}: {done} of {len(batch.shards)} shards computed, the rest complete")
    return "\n".join(lines) + "\n"


def _kernel_failure(algo, cell, first, last, exc) -> ReproError:
    return ReproError(f"algorithm {algo!r} failed on {cell} (runs {first}-{last}): {type(exc).__name__}: {exc}")
