"""`PartnerView`: the partners one caller may reach, a filtered view of the hub's `Partners`.

A caller's credential may limit it to some partners (`agents:` of its credential). Its
requests, and the tasks they start, reach the partners through a view made from its call
scope: the others do not exist for it, lookups fail with the very error of a name
agents.yaml does not list, and iteration and `len` skip them.

A view fails closed: one made without a call scope, or from a scope that never said which
partners it may reach, reaches none. The auth layer says it for every request (every
partner for a credential without a list, and with auth off); the hub's own trusted entry
points (the CLI, `Hub` in Python) use `Partners` itself, or `PartnerView.whole`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hub.client import A2AClient, CardRecord, CircuitBreaker
from hub.partners.directory import Partners
from hub.partners.health import PartnerHealth
from hub.partners.runtime import FederationPolicy
from hub.protocol import AgentCard
from hub.protocol.trace import EVERY, NOTHING, Allowed, CallScope
from hub.registry import AgentEntry
from hub.tools.remote import RemoteAgentTool

__all__ = ["PartnerView"]


class PartnerView(Mapping[str, RemoteAgentTool]):
    """The partners `allowed` lets a caller reach, by name, as tools; the same lookups as
    `Partners`, each refusing a partner outside the view as unknown.

    Args:
        partners: the hub's partners.
        allowed: the partners the caller may reach.
    """

    __slots__ = ("_partners", "allowed")

    def __init__(self, partners: Partners, allowed: Allowed) -> None:
        self._partners = partners
        self.allowed = allowed

    @classmethod
    def of(cls, partners: Partners | PartnerView, scope: CallScope | None) -> PartnerView:
        """What the caller of `scope` may reach of `partners`: none without a scope."""
        return cls.narrowed(partners, scope.agents if scope is not None else NOTHING)

    @classmethod
    def narrowed(cls, partners: Partners | PartnerView, allowed: Allowed) -> PartnerView:
        """`partners` (a view stays within itself) as far as `allowed` lets."""
        if isinstance(partners, PartnerView):
            return cls(partners._partners, partners.allowed & allowed)
        return cls(partners, allowed)

    @classmethod
    def whole(cls, partners: Partners | PartnerView) -> PartnerView:
        """`partners` as given: every partner of `Partners`, a view as it is."""
        return cls.narrowed(partners, EVERY)

    @property
    def directory(self) -> Partners:
        """The hub's partners, every one (for the hub's own bookkeeping, never a caller)."""
        return self._partners

    @property
    def federation(self) -> FederationPolicy:
        """Who may add partners while the hub runs, and where they may be."""
        return self._partners.federation

    def _reachable(self, name: str) -> str:
        if name not in self.allowed or name not in self._partners:
            raise self._partners.unknown(name, self.allowed)
        return name

    # -- the mapping: the partners in view as tools ------------------------------------------

    def __getitem__(self, name: str) -> RemoteAgentTool:
        return self._partners[self._reachable(name)]

    def __contains__(self, name: object) -> bool:
        return name in self.allowed and name in self._partners

    def __iter__(self) -> Iterator[str]:
        allowed = self.allowed
        return iter(name for name in self._partners if name in allowed)

    def __len__(self) -> int:
        if self.allowed.every:
            return len(self._partners)
        return sum(1 for _ in self)

    # -- lookups, as `Partners` has them -------------------------------------------------------

    def entry(self, name: str) -> AgentEntry:
        """See `Partners.entry`."""
        return self._partners.entry(self._reachable(name))

    def breaker(self, name: str) -> CircuitBreaker:
        """See `Partners.breaker`."""
        return self._partners.breaker(self._reachable(name))

    def card_record(self, name: str) -> CardRecord | None:
        """See `Partners.card_record`."""
        return self._partners.card_record(self._reachable(name))

    def card_error(self, name: str) -> str | None:
        """See `Partners.card_error`."""
        return self._partners.card_error(self._reachable(name))

    def origin(self, name: str) -> str | None:
        """See `Partners.origin`."""
        return self._partners.origin(self._reachable(name))

    async def card(self, name: str) -> AgentCard:
        """See `Partners.card`."""
        return await self._partners.card(self._reachable(name))

    async def refresh(self, name: str) -> AgentCard:
        """See `Partners.refresh`."""
        return await self._partners.refresh(self._reachable(name))

    async def client(self, name: str) -> A2AClient:
        """See `Partners.client`."""
        return await self._partners.client(self._reachable(name))

    async def check(self, name: str) -> PartnerHealth:
        """See `Partners.check`."""
        return await self._partners.check(self._reachable(name))

    async def add(
        self, entry: AgentEntry, *, origin: str, description: str | None = None
    ) -> AgentCard:
        """See `Partners.add`: a name taken by a partner outside the view is refused as if
        it were free of any partner the caller knows."""
        return await self._partners.add(
            entry, origin=origin, description=description, allowed=self.allowed
        )
