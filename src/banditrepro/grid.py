"""Time points at which a cell stores cumulative regret R(t)."""

from __future__ import annotations

import numpy as np

MAX_POINTS = 2000


def regret_grid(horizon: int, n_linear: int = 1000, growth: float = 1.4) -> np.ndarray:
    """Sorted unique int64 steps in [1, T]: log-spaced, linear, and always T.

    The log part follows Komiyama's writer (next = max(floor(1.4 next), next + 1)), the linear part
    has ``n_linear`` evenly spaced points, for linear-axis plots. At most ``MAX_POINTS`` points.

    >>> regret_grid(10).tolist()
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    >>> g = regret_grid(10**6); int(g[-1]), len(g) <= MAX_POINTS
    (1000000, True)
    """
    if horizon < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon}")
    log_pts = []
    t = 1
    while t < horizon:
        log_pts.append(t)
        t = max(int(t * growth), t + 1)
    lin = np.linspace(1, horizon, num=min(n_linear, horizon)).round().astype(np.int64)
    grid = np.unique(np.concatenate([np.asarray(log_pts, dtype=np.int64), lin, [horizon]]))
    assert len(grid) <= MAX_POINTS and grid[-1] == horizon
    return grid.astype(np.int64)
