"""Random streams of a cell, derived from ``np.random.SeedSequence`` with stable integer keys.

A cell's generator depends only on (base seed, instance key, run index), never on the algorithm, the
scheduling, ``hash()`` or the clock. All algorithms of one run therefore start from the same stream
(common random numbers, docs/decisions.md#seeds-and-runs).
"""

from __future__ import annotations

import zlib

import numpy as np


def stable_key(name: str) -> int:
    """A 32-bit integer that names ``name`` identically in every process (CRC-32 of its UTF-8 bytes)."""
    return zlib.crc32(name.encode("utf-8"))


def cell_seed_sequence(base_seed: int, instance: str, run: int) -> np.random.SeedSequence:
    if run < 0 or base_seed < 0:
        raise ValueError("seeds must be non-negative integers")
    return np.random.SeedSequence(entropy=int(base_seed), spawn_key=(stable_key(instance), int(run)))


INSTANCE_KEY = stable_key("instance")  # names the instance stream, apart from the algorithm's (key, run)


def instance_seed_sequence(base_seed: int, instance: str, run: int) -> np.random.SeedSequence:
    """The stream that draws run ``run``'s instance of a generative dataset: it depends on (base seed, dataset,
    run) only, so every algorithm of a run duels on the same instance, and it is a sibling of the algorithm's
    stream (spawn key (dataset, run, INSTANCE_KEY)), which it leaves unchanged."""
    if run < 0 or base_seed < 0:
        raise ValueError("seeds must be non-negative integers")
    return np.random.SeedSequence(entropy=int(base_seed), spawn_key=(stable_key(instance), int(run), INSTANCE_KEY))


def cell_generator(base_seed: int, instance: str, run: int) -> np.random.Generator:
    """The generator a cell passes to its kernel (PCG64, the numpy default)."""
    return np.random.Generator(np.random.PCG64(cell_seed_sequence(base_seed, instance, run)))
