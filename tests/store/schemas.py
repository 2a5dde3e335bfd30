"""Where a migration step sits among a store's steps, so a test can build a store of the
schema just before it, whichever steps were added after."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["step_adding"]


def step_adding(migrations: Sequence[Sequence[str]], statement: str) -> int:
    """The index of the first step holding a statement that contains `statement` (a store
    of schema version index has had every step before it)."""
    for index, step in enumerate(migrations):
        if any(statement in text for text in step):
            return index
    raise LookupError(f"no migration step holds {statement!r}")
