"""Compiled bookkeeping shared by every kernel: cumulative regret at the grid points.

State of a run is three arrays: ``cum[m]`` (running totals), ``out[m, g]`` (values stored at grid
points) and ``pos = [steps done, next grid index]``. ``record`` adds ``n`` identical steps in O(number
of grid points crossed), so a batch or an exploitation phase costs no per-step Python or loop work.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def new_recorder(tab, grid):
    M = tab.shape[0]
    return np.zeros(M), np.zeros((M, grid.shape[0])), np.zeros(2, np.int64)


@njit(cache=True, nogil=True, inline="always")
def record(tab, grid, cum, out, pos, i, j, n):
    """Account ``n`` plays of the pair (i, j) (a MAB pull of arm i is (i, i))."""
    M = tab.shape[0]
    while n > 0:
        g = pos[1]
        if g < grid.shape[0]:
            k = min(n, grid[g] - pos[0])
        else:
            k = n
        for m in range(M):
            cum[m] += k * tab[m, i, j]
        pos[0] += k
        n -= k
        if g < grid.shape[0] and pos[0] == grid[g]:
            for m in range(M):
                out[m, g] = cum[m]
            pos[1] += 1
