"""Literal reference implementations, written step by step from the papers (slow, plain Python).

Each module re-reads one algorithm from its paper (the paper texts, or docs/decisions.md#c2b-baselines for the
library baselines RUCB and RMED1) together with the decisions of docs/decisions.md, with the paper's step
numbers in comments. Nothing here imports a production kernel: the point is an independent reading that
the agreement tests (tests/algorithms/test_reference_agreement.py) compare with the production code path in
distribution (mean final regret over seeds), so any kernel change that alters behaviour fails CI.

Shared conventions (the only things read from the production code): a duel (i, j) is won by i with
probability P[i, j] (one uniform draw); regret metrics are those of docs/decisions.md#c2b-baselines (see ``regret``);
argmax ties are broken uniformly at random unless the paper (or, for the library baselines,
docs/decisions.md#c2b-baselines) fixes a rule; parameter defaults are those of config/figures/*.yaml.

Every function takes ``rng``, a ``numpy.random.Generator``; ``stream(name, run)`` derives it from
``np.random.SeedSequence`` with stable integer keys, independent of the production cells' streams.
"""

from __future__ import annotations

import zlib

import numpy as np

REFERENCE_ENTROPY = 20261203  # base entropy of every reference stream (not the cells' base seed)


def stream(name: str, run: int) -> np.random.Generator:
    """The generator of reference run ``run`` of algorithm ``name`` (CRC-32 of the name as a stable key)."""
    key = zlib.crc32(name.encode("utf-8"))
    return np.random.default_rng(np.random.SeedSequence(REFERENCE_ENTROPY, spawn_key=(key, int(run))))
