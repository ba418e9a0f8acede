"""Argmax with exact ties broken uniformly at random (docs/decisions.md#ties), shared by the kernels
whose choice is a plain argmax over an array of K scores.

Reservoir counting: the j-th tie replaces the incumbent with probability 1/j, so one pass and one
uniform draw per tie give a uniform choice. The RNG is consumed only on ties, so a kernel's stream does
not depend on how often scores coincide elsewhere.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> int(argmax_random_ties(np.array([0.1, 0.7, 0.3]), rng))
1
>>> sorted({int(argmax_random_ties(np.array([1.0, 0.0, 1.0]), rng)) for _ in range(50)})
[0, 2]
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def argmax_random_ties(scores, rng):
    """Index of the largest entry of ``scores``; exact ties broken uniformly at random."""
    best = scores[0]
    arg = 0
    ties = 1
    for j in range(1, scores.shape[0]):
        v = scores[j]
        if v > best:
            best = v
            arg = j
            ties = 1
        elif v == best:
            ties += 1
            if rng.integers(0, ties) == 0:
                arg = j
    return arg
