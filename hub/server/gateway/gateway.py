"""`Gateway`: the partners of agents.yaml, each reachable through the hub at `/agents/{name}`.

It hands out a `PartnerService` per partner (what the bindings call), the partner's card as
the gateway serves it, and the listing of `GET /agents`, each through the `PartnerView` of
the caller's call scope: a partner outside it does not exist.
"""

from __future__ import annotations

import json
from types import TracebackType

import anyio

from hub.config import Settings
from hub.errors import ProtocolError
from hub.partners import Partners, PartnerView
from hub.protocol import AgentCard
from hub.protocol.trace import CallScope
from hub.server.card import CardDocument
from hub.server.gateway.card import CardShelf, GatewayPolicy, gateway_card
from hub.server.gateway.errors import partner_errors
from hub.server.gateway.owners import TaskOwners
from hub.server.gateway.service import PartnerService
from hub.server.gateway.stream import PartnerStreams
from hub.store import GatewayOwnerStore

__all__ = ["Gateway"]

_LISTING_CONCURRENCY = 16


class Gateway:
    """The gateway to the hub's partners. Use as an async context manager (the app's
    lifespan): it owns the pumps of open partner streams.

    Args:
        partners: the hub's partners.
        settings: the hub's settings (its public URL, auth, streaming).
        hub_card: the hub's own card, whose security schemes the partner cards get.
        store: where the owners of partner tasks are recorded (auth on).
    """

    def __init__(
        self,
        *,
        partners: Partners,
        settings: Settings,
        hub_card: AgentCard,
        store: GatewayOwnerStore,
    ) -> None:
        self.partners = partners
        self._owners = TaskOwners(store)
        self._base = settings.server.base_url()
        self._policy = GatewayPolicy(
            hub_card=hub_card,
            streaming=bool(hub_card.capabilities.streaming),
            authenticated=settings.auth.enabled,
            grpc_address=(settings.server.grpc_address() if settings.server.grpc.enabled else None),
        )
        self._streams = PartnerStreams()
        self._shelf = CardShelf()

    async def __aenter__(self) -> Gateway:
        await self._streams.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._streams.__aexit__(exc_type, exc, tb)

    def url(self, agent_name: str) -> str:
        """Where the gateway serves the partner: `{public_url}/agents/{name}`."""
        return f"{self._base}/agents/{agent_name}"

    def service(self, agent_name: str) -> PartnerService:
        """The operations of the partner `agent_name`; an unknown name (or one outside the
        caller's scope) fails on the first call, with `PartnerNotFoundError`."""
        return PartnerService(
            agent_name,
            partners=self.partners,
            streams=self._streams,
            rewrite=lambda card: gateway_card(
                card, url=self.url(agent_name), policy=self._policy, agent_name=agent_name
            ),
            streaming=self._policy.streaming,
            owners=self._owners,
        )

    async def card(self, agent_name: str, scope: CallScope) -> CardDocument:
        """The partner's card as the gateway serves it (read through the card cache), to the
        caller of `scope`.

        Raises:
            ProtocolError: unknown partner (`PartnerNotFoundError`), or its card cannot be
                read (`PartnerUnavailableError`).
        """
        with partner_errors(agent_name):
            card = await PartnerView.of(self.partners, scope).card(agent_name)
        return self._shelf.document(agent_name, card, url=self.url(agent_name), policy=self._policy)

    async def listing(self, scope: CallScope) -> bytes:
        """`GET /agents`: `{"agents": [...]}`, one entry per partner the caller of `scope` may
        reach, in agents.yaml's order, with its card or the error that kept the card from
        being read.
        """
        names = list(PartnerView.of(self.partners, scope))
        entries: dict[str, bytes] = {}
        limiter = anyio.CapacityLimiter(_LISTING_CONCURRENCY)

        async def one(name: str) -> None:
            head = b'{"name":' + _json(name) + b',"url":' + _json(self.url(name))
            async with limiter:
                try:
                    document = await self.card(name, scope)
                except ProtocolError as error:
                    entries[name] = head + b',"error":' + _error(error) + b"}"
                    return
            entries[name] = head + b',"card":' + document.hybrid.body + b"}"

        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(one, name)
        return b'{"agents":[' + b",".join(entries[name] for name in names) + b"]}"


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _error(error: ProtocolError) -> bytes:
    return _json({"code": error.code, "reason": error.reason, "message": error.message})
