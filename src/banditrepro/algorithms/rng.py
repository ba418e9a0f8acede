"""Random-number helpers shared by several kernels (one module, so that a change here reaches every kernel
that draws through it: WS-S/WS-W, CCB, IF, QSA, SCB).

Every draw consumes the cell's ``np.random.Generator`` passed to the kernel (common random numbers across
algorithms by run index); never a global or default generator.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def randint(rng, n):
    """Uniform integer in [0, n) from one uniform double (numba's rng.integers costs ~5x more)."""
    return min(np.int64(rng.random() * n), n - 1)
