"""Seeded random streams: every draw of the bridge comes from a generator keyed by the collection
seed and a tuple of keys (ints or strings), so the same seed gives the same bytes whatever the
order of work or the number of worker processes."""

from __future__ import annotations

import hashlib

import numpy as np

_MASK = (1 << 64) - 1


def key_int(key: int | str) -> int:
    """A stable non-negative 64-bit integer for a key (strings hashed with BLAKE2b, not Python's
    randomized `hash`)."""
    if isinstance(key, (int, np.integer)):
        return int(key) & _MASK
    digest = hashlib.blake2b(str(key).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def generator(seed: int, *keys: int | str) -> np.random.Generator:
    """A PCG64 generator for `(seed, *keys)`; distinct key tuples give independent streams."""
    entropy = [key_int(seed)] + [key_int(k) for k in keys]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def derived_seed(seed: int, *keys: int | str) -> int:
    """A 31-bit integer seed (what Meta-World's `seed()` accepts) for `(seed, *keys)`."""
    return int(generator(seed, *keys).integers(0, 2**31 - 1))
