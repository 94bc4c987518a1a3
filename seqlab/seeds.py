"""Every seed seqlab derives from another: one rule, so a rerun draws the same numbers.

A derived seed is the SHA-256 of the parts joined by ``:`` (each part as ``str()`` writes it),
read as a big-endian integer from the digest's first ``nbytes`` bytes. SHA-256 rather than
Python's ``hash``: ``hash`` of a string is salted per process, so it would give every rerun and
every worker a different draw. The width is the caller's because the derived values are part
of what was already handed out (exam variants, pools, grader inputs) and must not change:
``random.Random`` takes 16 bytes for the exam draws, the symbolic checks' sample points take 8.
"""

from __future__ import annotations

import hashlib
import random

RNG_SEED_BYTES = 16


def derive_seed(*parts: object, nbytes: int = RNG_SEED_BYTES) -> int:
    """A seed that depends on ``parts`` alone (their order included), stable across processes."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:nbytes], "big")


def derived_rng(*parts: object) -> random.Random:
    """A ``random.Random`` seeded by :func:`derive_seed` of ``parts``."""
    return random.Random(derive_seed(*parts))
