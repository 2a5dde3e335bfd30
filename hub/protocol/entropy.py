"""Random bytes for ids, from the operating system's generator, a few kilobytes at a time.

Every task, context, message and artifact id and every trace and span id the hub makes
needs fresh random bits. `os.urandom` answers each call with a system call, which under
load costs several times the id it feeds; `random_bytes` hands out slices of one larger
read instead, so the bits are the same cryptographic ones at a fraction of the cost.

The pool holds pre-cut chunks in a deque: `pop` is atomic, so threads never share a chunk,
and a forked child starts with an empty pool of its own rather than its parent's bytes.
"""

from __future__ import annotations

import os
from collections import deque

__all__ = ["random_bytes"]

_READ = 4096
"""Bytes read from the operating system at once."""

_pools: dict[int, deque[bytes]] = {}


def random_bytes(size: int) -> bytes:
    """`size` random bytes from the operating system's cryptographic generator."""
    pool = _pools.get(size)
    if pool is None:
        pool = _pools.setdefault(size, deque())
    try:
        return pool.pop()
    except IndexError:
        return _refill(pool, size)


def _refill(pool: deque[bytes], size: int) -> bytes:
    count = max(1, _READ // size)
    block = os.urandom(size * count)
    pool.extend([block[start : start + size] for start in range(size, size * count, size)])
    return block[:size]


def _forget() -> None:
    """In a forked child: drop the parent's unused bytes."""
    for pool in _pools.values():
        pool.clear()


os.register_at_fork(after_in_child=_forget)
