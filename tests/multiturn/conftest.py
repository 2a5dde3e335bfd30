"""Partners that ask and take an answer (`tests.multiturn.partners`), each opening its
follow-up streams its own way, started once per module on loopback sockets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import pytest

from hub.registry import AgentEntry, Registry
from hub.testing import serve_on_loopback
from tests.multiturn.partners import asking_partner

ASKERS = {
    # (a) a follow-up stream opens with a status update, on the 0.3 wire (the 0.3 SDKs).
    "status03": asking_partner(opening="status", protocol="0.3"),
    # (b) it opens with the stored task, still INPUT_REQUIRED (the JS SDK 1.3.0 server).
    "snapshot": asking_partner(opening="snapshot"),
    "snapshotrest": asking_partner(opening="snapshot", binding="HTTP+JSON"),
    # (c) the a2a-sdk 1.3.0 server as it comes: a status update first, on the 1.0 wire.
    "plain": asking_partner(opening="status"),
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """One event loop per module, so the partners start once per module."""
    return "asyncio"


@pytest.fixture(scope="module")
async def askers() -> AsyncIterator[dict[str, str]]:
    """Every asking partner's URL, by the name agents.yaml gives it."""
    async with AsyncExitStack() as stack:
        yield {
            name: await stack.enter_async_context(serve_on_loopback(build))
            for name, build in ASKERS.items()
        }


def registry_of(askers: dict[str, str]) -> Registry:
    """agents.yaml listing every asking partner."""
    return Registry([AgentEntry(name=name, url=url) for name, url in askers.items()])
