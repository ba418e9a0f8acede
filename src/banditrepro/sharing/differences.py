"""The first value in which two stored results differ, for one line naming it (verify, merge)."""

from __future__ import annotations

import csv

import numpy as np


def value(v) -> str:
    """A value as Python writes it (``68.9068988400002``, not ``np.float64(68.9068988400002)``)."""
    return repr(v.item() if hasattr(v, "item") and np.ndim(v) == 0 else v)


def equal(x: np.ndarray, y: np.ndarray, rtol: float, rtol32: float | None = None) -> np.ndarray:
    """Element-wise equality (NaN equals NaN); floats within ``rtol`` relative if it is not 0 (float32 arrays
    within ``rtol32`` if given); integers, booleans and strings exactly."""
    if x.dtype.kind not in "fc":
        return np.asarray(x == y)
    if x.dtype == np.float32 and rtol32 is not None:
        rtol = max(rtol, rtol32)
    if rtol:
        return np.asarray(np.isclose(x, y, rtol=rtol, atol=0.0, equal_nan=True))
    return np.asarray((x == y) | (np.isnan(x) & np.isnan(y)))


def first_difference(stored, recomputed, rtol: float = 0.0, rtol32: float | None = None) -> str | None:
    """The first value in which two shards differ (array, run, index, both values), or None: every array (curves,
    ``final_*``, ``half_*``, ``n_batches``, instance fields …), floats within ``rtol`` relative (float32 curves
    within ``rtol32``), the others exactly."""
    from banditrepro.cell import SHARED_KEYS, load_runs

    a, b = load_runs(stored), load_runs(recomputed)
    if sorted(a) != sorted(b):
        return f"arrays {sorted(set(a) ^ set(b))} in one only"
    runs = np.asarray(a["run"])
    for k in sorted(a):
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"{k}: shape/type {x.shape} {x.dtype} stored, {y.shape} {y.dtype} recomputed"
        same = equal(x, y, rtol, rtol32)
        if not same.all():
            where = tuple(int(i) for i in np.argwhere(~same)[0]) if same.ndim else ()
            if k in SHARED_KEYS or not where:
                return f"{k}{list(where) if where else ''}: {value(x[where])} stored, {value(y[where])} recomputed"
            at = f"[{', '.join(map(str, where[1:]))}]" if len(where) > 1 else ""
            return f"run {runs[where[0]]}, {k}{at}: {value(x[where])} stored, {value(y[where])} recomputed"
    return None


def text_difference(stored: str, derived: str, suffix: str = "") -> str:
    """The first row and column (CSV) or line in which two texts differ, with both values."""
    if suffix == ".csv":
        sa, sb = list(csv.reader(stored.splitlines())), list(csv.reader(derived.splitlines()))
        header = sa[0] if sa else []
        for i, (ra, rb) in enumerate(zip(sa, sb)):
            for j in range(max(len(ra), len(rb))):
                va = ra[j] if j < len(ra) else ""
                vb = rb[j] if j < len(rb) else ""
                if va != vb:
                    col = header[j] if j < len(header) else str(j)
                    return f"row {i}, column {col!r}: {va!r} stored, {vb!r} re-derived"
        return f"{len(sa)} rows stored, {len(sb)} re-derived"
    la, lb = stored.splitlines(), derived.splitlines()
    for i, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            return f"line {i}: {x[:80]!r} stored, {y[:80]!r} re-derived"
    return f"{len(la)} lines stored, {len(lb)} re-derived"


def npz_difference(stored, derived, rtol: float) -> str | None:
    """The first array and index in which two summaries differ (within ``rtol``), or None."""
    from banditrepro.cell import load_npz

    a, b = load_npz(stored), load_npz(derived)
    if sorted(a) != sorted(b):
        return f"arrays {sorted(set(a) ^ set(b))} in one only"
    for k in sorted(a):
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.shape != y.shape:
            return f"{k}: shape {x.shape} stored, {y.shape} re-derived"
        same = equal(x, y, rtol)
        if not same.all():
            where = tuple(int(i) for i in np.argwhere(~same)[0]) if same.ndim else ()
            return f"{k}{list(where) if where else ''}: {value(x[where])} stored, {value(y[where])} re-derived"
    return None

