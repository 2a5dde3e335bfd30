"""A connection of its own that LISTENs on one channel for as long as a replica runs,
reconnecting when it is lost: how replicas hear of each other's task, push config and
runtime partner changes."""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import Callable

import anyio

from hub.store.outage import Outage
from hub.store.postgres.database import unreachable

__all__ = ["listen"]

log = logging.getLogger("hub.store")


class _Inbox:
    """What the driver's callbacks (run outside any task) hand to the listening task:
    payloads, and whether the connection was lost."""

    def __init__(self) -> None:
        self.payloads: deque[str] = deque()
        self.lost = False
        self._arrived = anyio.Event()

    def put(self, _db: object, _pid: int, _channel: str, payload: str) -> None:
        self.payloads.append(payload)
        self._arrived.set()

    def cut(self, _db: object) -> None:
        self.lost = True
        self._arrived.set()

    async def wait(self, seconds: float) -> bool:
        """Wait for a payload or the loss, at most `seconds`; False if none came."""
        with anyio.move_on_after(seconds):
            await self._arrived.wait()
        arrived = self._arrived.is_set()
        self._arrived = anyio.Event()
        return arrived


async def listen(
    dsn: str,
    channel: str,
    heard: Callable[[str], None],
    *,
    connected: Callable[[], None],
    where: str,
    outage: Outage,
    probe_every: float = 5.0,
) -> None:
    """LISTEN on `channel` on a connection of its own until cancelled, calling `heard` with
    each payload (in this task), and `connected` each time the connection is (re)made; it
    reconnects when the connection is lost (a server restart, or a network cut a periodic
    probe finds). A server that cannot be reached is reported to `outage`, which logs it
    once for the whole store."""
    import asyncpg

    pause = 0.1
    while True:
        try:
            db = await asyncpg.connect(dsn, timeout=10)
        except unreachable(asyncpg) as exc:
            outage.failed(exc)
            await anyio.sleep(pause)
            pause = min(pause * 2, 5.0)
            continue
        except asyncpg.PostgresError as exc:
            log.warning("cannot listen for changes on %s (%s); retrying", where, exc)
            await anyio.sleep(pause)
            pause = min(pause * 2, 5.0)
            continue
        inbox = _Inbox()
        try:
            db.add_termination_listener(inbox.cut)
            await db.add_listener(channel, inbox.put)
            pause = 0.1
            outage.answered()
            connected()
            while not inbox.lost:
                if not await inbox.wait(probe_every):  # quiet: is the connection still up?
                    with anyio.fail_after(probe_every):
                        await db.execute("SELECT 1")
                while inbox.payloads:
                    heard(inbox.payloads.popleft())
        except unreachable(asyncpg) as exc:
            outage.failed(exc)  # logged once for the store, whoever noticed it first
        except asyncpg.PostgresError as exc:
            log.warning("lost the change listener on %s (%s); reconnecting", where, exc)
        finally:
            with contextlib.suppress(Exception), anyio.CancelScope(shield=True):
                await db.close(timeout=1)
