"""`Partners`: the partner agents of agents.yaml, each with its card, client, breaker and tool.

One `Partners` serves the whole hub, every partner: a caller limited to some reaches them
through a `PartnerView` (`view.py`). Which partners are served (agents.yaml's, those added
at run time, registry reloads) is its `Roster` (`roster.py`); this module reaches them. It
reads each partner's card through one `CardCache` (so a hundred callers on a cold cache cost
one GET), builds the partner's `A2AClient` from the card and the entry's overrides
(protocol, auth headers, timeouts), and rebuilds a partner's client and tool from its new
card on the next use after the card changed. A partner added at run time is read and called
through the guarded client of the `FederationPolicy`; a partner whose entry sets `tls` (a
private CA, a client certificate) through an HTTP client and card cache of its own, one per
set of TLS files. A partner whose entry sets `verify_card` has each card it reads checked
(`hub.trust.verify`) before it is used: a card refused is a card that could not be read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from types import TracebackType

import httpx

from hub.client import (
    A2AClient,
    BreakerConfig,
    BreakerState,
    CardCache,
    CardRecord,
    GrpcChannels,
    RetryPolicy,
    build_http_client,
    fault_of,
)
from hub.errors import CardFetchError, CardRefusedError, ConfigError
from hub.partners.health import PartnerHealth, probe
from hub.partners.roster import Roster
from hub.partners.runtime import FederationPolicy
from hub.partners.slot import PartnerSlot
from hub.partners.warming import WARM_TIMEOUT, read_cards
from hub.protocol import AgentCard
from hub.registry import Registry
from hub.tools.remote import RemoteAgentTool
from hub.trust import PartnerTls

__all__ = ["Partners"]

log = logging.getLogger(__name__)


class Partners(Roster, Mapping[str, RemoteAgentTool]):
    """The registry's enabled partners, by name, as tools (`partners["research"]`): every
    one, whoever calls; `PartnerView` is what a caller limited to some of them gets.

    Use it as an async context manager: it closes the HTTP clients it made and the gRPC
    channels of its gRPC partners (one per target, kept across card changes).

    Args:
        registry: the partners to serve.
        http: the client to call with (made, and closed on exit, when not given).
        cards: the card cache (made on `http` when not given).
        breaker: threshold and cool-down of each partner's breaker.
        retry: retry policy of every client.
        federation: who may add partners while the hub runs, and where they may be (by
            default nobody, and public addresses only).
    """

    def __init__(
        self,
        registry: Registry,
        *,
        http: httpx.AsyncClient | None = None,
        cards: CardCache | None = None,
        breaker: BreakerConfig | None = None,
        retry: RetryPolicy | None = None,
        federation: FederationPolicy | None = None,
    ) -> None:
        super().__init__(registry, breaker=breaker, federation=federation)
        self._http = http
        self._own_http = http is None
        self._cards = cards
        self._retry = retry
        self._tls: dict[PartnerTls, tuple[httpx.AsyncClient, CardCache]] = {}
        self._channels = GrpcChannels()

    async def __aenter__(self) -> Partners:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP clients and the gRPC channels this object made."""
        if self._own_http and self._http is not None:
            await self._http.aclose()
            self._http = None
            self._cards = None
        for http, _ in self._tls.values():
            await http.aclose()
        self._tls.clear()
        await self._runtime.aclose()
        await self._channels.aclose()

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP client partners are called with (made on first use when not given)."""
        if self._http is None:
            self._http = build_http_client()
        return self._http

    @property
    def cards(self) -> CardCache:
        """The partners' card cache."""
        if self._cards is None:
            self._cards = CardCache(self.http)
        return self._cards

    # -- the mapping: enabled partners as tools ----------------------------------------------

    def __getitem__(self, name: str) -> RemoteAgentTool:
        return self._tool(self._partner(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self._partners)

    def __len__(self) -> int:
        return len(self._partners)

    # -- cards and clients -------------------------------------------------------------------

    async def card(self, name: str) -> AgentCard:
        """The partner's card: the inline one, or the cached one (fetched when stale).

        Raises:
            UnknownAgentError: no enabled partner has that name.
            CardFetchError: no valid card could be read.
        """
        return await self._read_card(name, force=False)

    async def refresh(self, name: str) -> AgentCard:
        """Read the partner's card again now (conditionally), whatever its freshness."""
        return await self._read_card(name, force=True)

    async def _read_card(self, name: str, *, force: bool) -> AgentCard:
        partner = self._partner(name)
        entry = partner.entry
        if entry.card is not None:
            return entry.card
        started = time.perf_counter()
        try:
            http, cards = self._reach(partner)
            read = cards.refresh if force else cards.get
            card = await read(partner.card_url, headers=entry.auth.http_headers())
            await self._verify(partner, card, http)
        except CardRefusedError as exc:
            self._read_failed(partner, exc, started)
            raise
        except CardFetchError as exc:
            # Named as agents.yaml names the partner; its URL is for the log only.
            failed = CardFetchError(
                f"agent '{name}': its agent card could not be read ({fault_of(exc)})",
                detail=exc.detail or str(exc),
            )
            self._read_failed(partner, failed, started)
            raise failed from exc
        if partner.card_error is not None:
            partner.card_error = None
            self._changed()
        if partner.observe(card):
            self._changed()
        return card

    def card_record(self, name: str) -> CardRecord | None:
        """What the card cache holds for the partner (its card, when it was fetched, the
        card it last replaced), without any I/O; None for an inline card or one never read.

        Raises:
            UnknownAgentError: no enabled partner has that name.
        """
        partner = self._partner(name)
        if partner.entry.card is not None:
            return None
        if partner.entry.tls is not None and partner.entry.tls not in self._tls:
            return None
        _, cards = self._reach(partner)
        return cards.record(partner.card_url)

    def card_error(self, name: str) -> str | None:
        """Why the partner's card could not be read when last tried; None once it was read
        (or before it was tried).

        Raises:
            UnknownAgentError: no enabled partner has that name.
        """
        return self._partner(name).card_error

    async def client(self, name: str) -> A2AClient:
        """The partner's client, built from its current card.

        Raises:
            UnknownAgentError, CardFetchError, NoSupportedInterfaceError, CircuitOpenError.
        """
        partner = self._partner(name)
        if partner.client is None and partner.breaker.state is BreakerState.OPEN:
            # Its card could not be read, over and over: wait for the cool-down, as its
            # client would, rather than knock again at each call.
            partner.breaker.before_call()
        card = await self.card(name)
        http, _ = self._reach(partner)
        return partner.client_for(
            card, http=http, channels=self._channels, retry=self._retry, token_http=self.http
        )

    async def warm(self, *, within: float = WARM_TIMEOUT) -> dict[str, str | None]:
        """Read every partner's card at once (at most 16 in flight, for at most `within`
        seconds), so that every tool is described by its card, or as unreachable with the
        reason; the hub does this when it opens.

        Returns:
            By name: None for a card that was read, else why it was not.
        """
        outcome, late = await read_cards(list(self._partners), self.card, within=within)
        for name in late:
            partner = self._partners.get(name)
            why = f"agent '{name}': its agent card was not read within {within:g} s"
            outcome[name] = why
            if partner is not None and partner.card is None:
                log.warning("partner '%s': its card was not read within %g s", name, within)
                partner.card_error = why
        if late:
            self._changed()
        return outcome

    async def check(self, name: str) -> PartnerHealth:
        """Revalidate the partner's card now and report its health (never raises for an
        unwell partner; raises UnknownAgentError for an unknown one)."""
        partner = self._partner(name)

        async def revalidate() -> A2AClient:
            await self.refresh(name)
            return await self.client(name)

        return await probe(name, partner.breaker, revalidate)

    # -- internals ---------------------------------------------------------------------------

    async def _verify(self, partner: PartnerSlot, card: AgentCard, http: httpx.AsyncClient) -> None:
        """Accept `card` only when its signature verifies with the entry's `verify_card`
        (once per card read).

        Raises:
            CardRefusedError: why the card is refused.
        """
        keys = partner.entry.verify_card
        if keys is None or partner.verified is card:
            return
        if partner.verifier is None:
            from hub.trust.verify import CardVerifier  # the identity extra, there with keys

            partner.verifier = CardVerifier(keys, http)
        await partner.verifier.verify(partner.entry.name, card)
        partner.verified = card

    def _read_failed(self, partner: PartnerSlot, error: CardFetchError, started: float) -> None:
        if partner.read_failed(error, time.perf_counter() - started):
            self._changed()

    def _reach(self, partner: PartnerSlot) -> tuple[httpx.AsyncClient, CardCache]:
        """The HTTP client and card cache the partner is read and called through.

        Raises:
            CardFetchError: its TLS files are not valid (which file, and why).
        """
        if partner.runtime is not None:
            return self._runtime.http, self._runtime.cards
        tls = partner.entry.tls
        if tls is None:
            return self.http, self.cards
        reached = self._tls.get(tls)
        if reached is None:
            try:
                context = tls.ssl_context()
            except ConfigError as exc:
                raise CardRefusedError(f"agent '{partner.entry.name}': {exc}") from None
            http = build_http_client(tls=context)
            reached = self._tls[tls] = (http, CardCache(http))
        return reached

    def _tool(self, partner: PartnerSlot) -> RemoteAgentTool:
        name = partner.entry.name
        return partner.tool_for(lambda: self.client(name))
