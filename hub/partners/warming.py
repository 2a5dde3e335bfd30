"""Reading every partner's card at once when a hub opens, so that every tool is described by
its card, or as unreachable with the reason, from the first tool list on."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import anyio

from hub.errors import ClientError

__all__ = ["WARM_TIMEOUT", "read_cards"]

log = logging.getLogger("hub.partners.directory")

_WARM_CONCURRENCY = 16
WARM_TIMEOUT = 10.0
"""Seconds `Partners.warm` waits for the partners' cards when a hub opens."""


async def read_cards(
    names: Sequence[str], read: Callable[[str], Awaitable[object]], *, within: float
) -> tuple[dict[str, str | None], list[str]]:
    """Read the cards of `names` (at most 16 in flight, for at most `within` seconds).

    Returns:
        By name, None for a card that was read, else why it was not; and the names whose
        card was not read in time (absent from the first).
    """
    outcome: dict[str, str | None] = {}
    limiter = anyio.CapacityLimiter(_WARM_CONCURRENCY)

    async def one(name: str) -> None:
        async with limiter:
            try:
                await read(name)
                outcome[name] = None
            except ClientError as exc:
                outcome[name] = str(exc)
                # The kind of fault only: the call that meets it again logs where the
                # partner is and what it answered, once.
                log.warning("%s; a call will try again", exc)

    with anyio.move_on_after(within):
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(one, name)
    return outcome, [name for name in names if name not in outcome]
