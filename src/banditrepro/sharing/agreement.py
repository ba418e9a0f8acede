"""Whether the copies of a run that ``banditrepro merge`` finds in several places agree (banditrepro/sharing/merge.py,
step 2): a run held twice, in whatever shards, must agree byte for byte in every per-run array's slice of that run
(dtype and bytes) and in the shared arrays, and every shard must hold what its name says (its runs, horizon,
base seed). The lines name both places, the cell, the run and the array; merge writes nothing when there is one.
"""

from __future__ import annotations

import numpy as np

from banditrepro import ReproError
from banditrepro.layout import split_key


def check_runs(cell: str, held: list, base_seed: int | None) -> list[str]:
    """Lines for a cell's runs that two of ``held`` (merge.Held: a shard in one place) hold otherwise (the first
    differing run and array of each pair of places), and for a shard that does not hold what its name says; []
    when all agree."""
    from banditrepro.cell import load_runs

    horizon = split_key(cell)[1]
    first_of: dict = {}  # run -> (Held, block, index) of the first place holding it
    lines, pairs = [], set()
    for h in held:
        try:
            block = load_runs(h.path)
        except ReproError as exc:
            raise ReproError(f"{h.origin}: {exc}; nothing merged") from None
        runs = [int(r) for r in np.asarray(block["run"])]
        wrong = _against_name(block, runs, h, horizon, base_seed)
        if wrong:
            lines.append(f"disagree: {h.rel} of {h.origin} does not hold what its name says ({wrong})")
            continue
        for i, r in enumerate(runs):
            if r not in first_of:
                first_of[r] = (h, block, i)
                continue
            other, ob, oi = first_of[r]
            if (other.origin, h.origin) in pairs:
                continue
            diff = run_difference(ob, oi, block, i)
            if diff:
                pairs.add((other.origin, h.origin))
                lines.append(f"disagree: {cell} run {r}, {diff[0]}: {other.origin} holds {diff[1]} "
                             f"({other.rel}), {h.origin} holds {diff[2]} ({h.rel})")
    return lines


def _against_name(block: dict, runs: list, h, horizon: int, base_seed: int | None) -> str | None:
    if runs != list(range(h.first, h.last + 1)):
        return f"runs {runs[:3]}{'…' if len(runs) > 3 else ''}"
    if int(block["horizon"]) != horizon:
        return f"horizon {block['horizon']}"
    if base_seed is not None and int(block["base_seed"]) != base_seed:
        return f"base seed {block['base_seed']}, this config's {base_seed}"
    return None


def run_difference(a: dict, i: int, b: dict, j: int) -> tuple[str, str, str] | None:
    """(array, value in a, value in b) of the first array in which run ``i`` of block ``a`` and run ``j`` of
    block ``b`` differ in dtype, shape or bytes (the shared arrays, then the per-run arrays' slices), or None."""
    from banditrepro.cell import SHARED_KEYS

    if sorted(a) != sorted(b):
        return "arrays", str(sorted(set(a) - set(b))), str(sorted(set(b) - set(a)))
    for k in sorted(a, key=lambda k: (k not in SHARED_KEYS, k)):
        x, y = (np.asarray(a[k]), np.asarray(b[k])) if k in SHARED_KEYS else (np.asarray(a[k])[i], np.asarray(b[k])[j])
        if x.dtype != y.dtype or x.shape != y.shape:
            return k, f"{x.dtype}{list(x.shape)}", f"{y.dtype}{list(y.shape)}"
        if x.tobytes() != y.tobytes():
            return (k, *_first_value(x, y))
    return None


def _first_value(x: np.ndarray, y: np.ndarray) -> tuple[str, str]:
    from banditrepro.sharing.differences import value

    if x.ndim == 0:
        return value(x), value(y)
    n = next(n for n in range(x.size) if x.flat[n].tobytes() != y.flat[n].tobytes())
    where = list(np.unravel_index(n, x.shape))
    return f"{value(x.flat[n])} at {where}", f"{value(y.flat[n])} at {where}"
