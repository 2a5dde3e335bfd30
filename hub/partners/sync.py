"""Partners added at run time, shared by the replicas of one hub through their shared store.

A replica that adds a partner (`spawn_agent`, learned through `sync_state`) records it in
the store; every replica hears of the change and serves the stored set from then on, and a
replica that starts serves what is stored. So they are known to every replica and survive
restarts. A partner is checked (guard, card) by the replica that adds it; the others take
it as recorded, and every request to it still passes the guard of the replica that sends it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from hub.errors import HubError, StoreOutageError
from hub.partners.directory import Partners
from hub.partners.runtime import RuntimePartner
from hub.registry import AgentEntry
from hub.store import RuntimePartnerStore, Storage

__all__ = ["PartnerSync", "dump_runtime_partner", "load_runtime_partner", "shared_partners"]

log = logging.getLogger("hub.partners")


def dump_runtime_partner(runtime: RuntimePartner) -> bytes:
    """A runtime partner as the store keeps it (JSON)."""
    return json.dumps(
        {
            "entry": runtime.entry.model_dump(mode="json", exclude_defaults=True),
            "origin": runtime.origin,
            "description": runtime.description,
        }
    ).encode()


def load_runtime_partner(body: bytes) -> RuntimePartner:
    """A runtime partner from the store's JSON.

    Raises:
        ValueError: the body is not one `dump_runtime_partner` wrote.
    """
    document = json.loads(body)
    return RuntimePartner(
        entry=AgentEntry.model_validate(document["entry"]),
        origin=str(document["origin"]),
        description=document.get("description"),
    )


def shared_partners(store: Storage, partners: Partners) -> PartnerSync | None:
    """The sync of `partners` with `store` when the store is shared (replicas), with every
    partner added here recorded there; None for a store of one hub. Serve the hub inside
    its `running()`."""
    if not isinstance(store, RuntimePartnerStore):
        return None
    sync = PartnerSync(store, partners)
    partners.on_added = sync.record
    return sync


class PartnerSync:
    """Keeps `partners`' runtime partners the same as the store's, on every replica.

    Serve inside `running()`.
    """

    def __init__(self, store: RuntimePartnerStore, partners: Partners) -> None:
        self._store = store
        self._partners = partners
        self._wake = anyio.Event()

    async def record(self, runtime: RuntimePartner) -> None:
        """Store a partner this replica has just added, for every replica."""
        await self._store.put_runtime_partner(runtime.entry.name, dump_runtime_partner(runtime))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Adopt the stored partners, then follow the store's changes while the block runs."""
        await self._adopt()
        async with anyio.create_task_group() as group:
            group.start_soon(self._store.runtime_partner_notices, self._changed)
            group.start_soon(self._follow)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    def _changed(self) -> None:
        self._wake.set()

    async def _follow(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await self._adopt()

    async def _adopt(self) -> None:
        try:
            bodies = await self._store.list_runtime_partners()
        except StoreOutageError:
            return  # the store logs its outage; its reconnection makes this read again
        except HubError as exc:
            log.warning("could not read the partners added at run time: %s", exc)
            return
        runtimes = []
        for body in bodies:
            try:
                runtimes.append(load_runtime_partner(body))
            except (ValueError, KeyError) as exc:
                log.warning("a stored runtime partner is unreadable, skipped: %s", exc)
        self._partners.adopt(runtimes)
