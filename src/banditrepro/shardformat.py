"""How result files store regret curves: format 2 (docs/decisions.md#shard-format).

A run's curves are stored as float32 (the kernels and the summaries add in float64); the values every claim
reads are stored per run in float64 beside them: ``final_<metric>`` = R(T) and ``half_<metric>`` = R at the
last grid point ≤ T/2. In a shard, each metric's (runs, grid) float32 block is written losslessly as
``encode_curves`` makes it: the float32 bit patterns as uint32, differenced along the grid (mod 2^32), split
into four byte planes. Cumulative regret grows slowly and often stops growing, so most differences are small
and their high bytes are zeros that deflate removes: the curves take about a fifth of their float64 bytes.

``SHARD_FORMAT`` is recorded in every file written; files without it are format 1 (float64 curves, written up
to 9042ad1). This module is in every cell's code digest, so changing the format moves every cell to a new
code folder: files of another format are recomputed, never read beside the new ones.
"""

from __future__ import annotations

import numpy as np

SHARD_FORMAT = 2
FORMAT_KEY = "shard_format"
CURVE_DTYPE = np.dtype("<f4")

def half_index(grid: np.ndarray) -> int:
    """Index of the last grid point ≤ T/2 (T = grid[-1]); -1 if there is none (then R(T/2) counts as 0)."""
    return int(np.searchsorted(grid, grid[-1] // 2, side="right")) - 1


def encode_curves(curves: np.ndarray) -> np.ndarray:
    """(runs, grid) curves -> (4, runs, grid) uint8: float32 bit patterns, differenced along the grid modulo
    2^32 (lossless whatever the values), little-endian bytes split into planes."""
    bits = np.ascontiguousarray(curves, dtype=CURVE_DTYPE).view("<u4")
    if bits.ndim != 2:
        raise ValueError(f"curves must be (runs, grid), got shape {bits.shape}")
    delta = np.diff(bits, axis=1, prepend=np.zeros((bits.shape[0], 1), "<u4"))
    planes = delta.view(np.uint8).reshape(*delta.shape, 4)
    return np.ascontiguousarray(np.moveaxis(planes, -1, 0))


def decode_curves(planes: np.ndarray) -> np.ndarray:
    """The float32 (runs, grid) curves ``encode_curves`` encoded; ValueError if ``planes`` is not such a block."""
    planes = np.asarray(planes)
    if planes.dtype != np.uint8 or planes.ndim != 3 or planes.shape[0] != 4:
        raise ValueError(f"not an encoded curve block: {planes.dtype} {planes.shape}")
    delta = np.ascontiguousarray(np.moveaxis(planes, 0, -1)).view("<u4")[..., 0]
    return np.cumsum(delta, axis=1, dtype="<u4").view(CURVE_DTYPE)


def is_curve(key: str) -> bool:
    """Whether an array of a result file is a regret curve (not a per-run final or half value)."""
    return "regret" in key and not key.startswith(("final_", "half_"))
