"""The shards ``banditrepro verify`` recomputes: a uniform sample drawn with a seed, each recomputed from its name
alone in a freshly spawned worker process (not the verifier's), from this checkout's prepared data, and compared
with the stored shard: byte for byte where this checkout names the shard's folder as the source does, else every
array within a stated tolerance (banditrepro/sharing/verify.py says when, banditrepro/sharing/differences.py
compares).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from banditrepro import ReproError
from banditrepro.layout import split_key
from banditrepro.sharing.differences import first_difference
from banditrepro.sharing.localdata import check_sidecars, results_rel

# Relative tolerance on float64 values (final_*, half_*, instance fields) where this checkout names a shard's
# folder otherwise than the shard's path does (another numerics stack or code). The same random streams through
# another compiler or numpy differ only by rounding: float64 sums of up to 10^6 per-step terms, each off by an ulp
# at most, move a value by ~T x 2^-53 ~ 1e-10 relative; 1e-9 leaves a factor 10 of margin. A changed random stream
# or algorithm changes a final value by percent (a run's regret is a random sum of O(sqrt T) spread): the verdict
# flips for an edit of more than 1e-9 relative, 10^7 times less than what a changed stream does.
TOLERANCE = 1e-9
# Relative tolerance on the float32 curves: each side rounds a float64 value within 1e-9 of the other's to float32,
# so honest curves may differ by one float32 ulp (2^-24 to 2^-23 relative); 2^-22 allows that ulp with a factor 2
# of margin. An edit of more than 2.4e-7 relative flips the verdict. Integers, booleans and strings (n_batches,
# run indices, names) must agree exactly.
CURVE_TOLERANCE = 2.0 ** -22


def choose(shards: list, n: int | None, seed: int) -> list:
    """``n`` of ``shards`` (None: all) drawn uniformly without replacement, in their listed order: every set of
    ``n`` equally likely, so that ``pass_probability`` holds wherever the altered shards lie. ``seed`` keys the
    stream (SeedSequence), so the same seed draws the same shards from the same list."""
    if n is None or n >= len(shards):
        return list(shards)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), 0x5E1F])))
    return [shards[i] for i in sorted(rng.choice(len(shards), size=n, replace=False))]


def check_shards(plan, cells, local: dict, sample, seed, jobs, scratch: Path, result) -> None:
    """Recompute a uniform sample of ``cells``' shards (verify.CellCheck; ``sample`` None: all) and compare
    each with the stored one: bytes where this checkout names the shard's folder alike, else every array within
    the tolerances; every shard's sidecar is checked against its name."""
    pool = [(c, first, last, path) for c in cells for first, last, path in c.shards]
    result.shards_total = len(pool)
    for c in cells:
        check_sidecars(c, local, result)
    chosen = choose(pool, sample, seed)
    result.sampled = [results_rel(path) for *_, path in chosen]
    tasks = []
    for c, first, last, path in chosen:
        dataset, horizon, algo = split_key(c.cell)
        out = scratch / c.cell / c.key / path.name
        tasks.append((algo, str(local[dataset]), horizon, first, last, int(plan.config["base_seed"]), str(out)))
    for (c, _first, _last, path), out in zip(chosen, _recompute_all(tasks, jobs)):
        rel = results_rel(path)
        if not result.readable(path):
            continue
        if not c.byte:
            diff = first_difference(path, out, rtol=TOLERANCE, rtol32=CURVE_TOLERANCE)
            if diff is None:
                result.within_tolerance += 1
                result.checked.add(rel)
            else:
                result.mismatch(f"{rel}: {diff} (named otherwise here: {c.why}; tolerance {TOLERANCE:g}, curves "
                                f"{CURVE_TOLERANCE:.2g})")
        elif Path(path).read_bytes() == Path(out).read_bytes():
            result.identical += 1
            result.checked.add(rel)
        else:
            result.mismatch(f"{rel}: {first_difference(path, out) or 'bytes differ'}")
    # a shard not drawn is read into its summary (re-derived equal), not recomputed: the last line says what the
    # sample proves of them, so none is listed as "not checked"
    result.checked.update(results_rel(p) for *_, p in pool)


def _recompute(task) -> str:
    """One shard from its name's parts, in a worker process spawned fresh (nothing of the verifier's process);
    a worker computes shards one after another, as a batch job does on a node, since a shard's bytes may not
    depend on what ran before it in its process (content addressing; the batch tests hold production to it)."""
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
    # one spawn per worker, not per shard: a spawn and its imports cost ~1 s, a test-sized shard milliseconds
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx) as ex:
        try:
            return list(ex.map(_recompute, tasks))
        except ReproError:
            raise
        except Exception as exc:  # a kernel that fails here: name it, one line
            raise ReproError(f"recomputing a shard failed: {type(exc).__name__}: {exc}") from None
