"""`PartnerSlot`: one partner as the directory keeps it, and what is built from its card.

A slot holds the partner's entry, its breaker (which outlives the slot: the directory keeps
breakers by name), the card last read, and the client and tool built from that card. When
the card changes, the client and tool are dropped and built again from the new one on the
next use.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx

from hub.client import A2AClient, CircuitBreaker, GrpcChannels, RetryPolicy, Timeouts
from hub.errors import CardFetchError, ConfigError
from hub.identity.partner_auth import PartnerAuth
from hub.partners.runtime import RuntimePartner
from hub.protocol import AgentCard
from hub.registry import AgentEntry
from hub.telemetry.outgoing import card_read_failed
from hub.tools.remote import RemoteAgentTool

if TYPE_CHECKING:
    from hub.trust.verify import CardVerifier

__all__ = ["PartnerSlot"]

log = logging.getLogger("hub.partners.directory")


@dataclass(slots=True)
class PartnerSlot:
    """One partner served now.

    Attributes:
        entry: its agents.yaml entry (or the entry it was added with at run time).
        breaker: its circuit breaker.
        card: the card last read (the inline one from the start).
        client: the client built from `card`, once asked for.
        tool: the tool built from `card`, once asked for.
        runtime: set for a partner added while the hub runs.
        card_error: why its card could not be read when last tried (None: read, or not
            tried yet).
        verifier: the check of its cards' signatures (`verify_card`), once made.
        verified: the card that check last accepted.
        auth: the tokens its calls carry (`auth.oauth2`, `on_behalf`), once made; kept
            across card changes, so a token outlives a client rebuilt.
    """

    entry: AgentEntry
    breaker: CircuitBreaker
    card: AgentCard | None = None
    client: A2AClient | None = None
    tool: RemoteAgentTool | None = None
    runtime: RuntimePartner | None = None
    card_error: str | None = None
    verifier: CardVerifier | None = None
    verified: AgentCard | None = None
    auth: PartnerAuth | None = None

    @property
    def card_url(self) -> str:
        url = self.entry.card_url
        if url is None:
            raise ConfigError(f"agent '{self.entry.name}' has neither a url nor an inline card")
        return url

    def observe(self, card: AgentCard) -> bool:
        """Take the card just read; True when it differs from the one the tool was built
        from (the tool and client are then built again)."""
        if card is self.card:
            return False
        changed = self.card != card
        if self.card is not None and changed:
            log.info("partner '%s' changed its card; its tool is rebuilt", self.entry.name)
            self.tool = None
            self.client = None
        self.card = card
        return changed

    def read_failed(self, error: CardFetchError, seconds: float) -> bool:
        """A card that could not be read is a failed call: the breaker and the partner call
        metrics count it, and the partner's tool says it is unreachable. True when the tool
        changes with it."""
        self.breaker.record_failure()
        card_read_failed(self.entry.name, outcome=type(error).__name__, seconds=seconds)
        if self.card is None and self.card_error != str(error):
            self.card_error = str(error)
            return True
        return False

    def client_for(
        self,
        card: AgentCard,
        *,
        http: httpx.AsyncClient,
        channels: GrpcChannels,
        retry: RetryPolicy | None,
        token_http: httpx.AsyncClient,
    ) -> A2AClient:
        """The client built from `card` (the one built before, while the card is the same).

        A gRPC interface whose URL names no scheme is called over TLS unless the entry's
        card is read over plain HTTP and the entry has no `tls` files. Token endpoints are
        posted to with `token_http`."""
        if self.client is None or self.client.card is not card:
            entry = self.entry
            card_url = entry.card_url
            auth = self._auth(card, token_http)
            self.client = A2AClient(
                card,
                http=http,
                agent_name=entry.name,
                protocol_version=entry.protocol.version,
                binding=entry.protocol.binding,
                headers=entry.auth.http_headers(),
                timeouts=Timeouts(
                    connect=entry.timeout.connect,
                    read=entry.timeout.read,
                    deadline=entry.timeout.deadline,
                ),
                retry=retry,
                breaker=self.breaker,
                channels=channels,
                tls=None if card_url is None else urlsplit(card_url).scheme != "http",
                grpc=self.runtime is None,  # the SSRF guard sees HTTP calls only
                tls_files=entry.tls.pem() if entry.tls is not None else None,
                auth=auth,
            )
        return self.client

    def _auth(self, card: AgentCard, http: httpx.AsyncClient) -> PartnerAuth | None:
        entry = self.entry
        if entry.auth.oauth2 is None and entry.on_behalf is None:
            return None
        if self.auth is None:
            self.auth = PartnerAuth(
                entry.name, oauth2=entry.auth.oauth2, on_behalf=entry.on_behalf, http=http
            )
        self.auth.use_card(card)
        return self.auth

    def tool_for(self, client: Callable[[], Awaitable[A2AClient]]) -> RemoteAgentTool:
        """The partner's tool, described by its current card (or as unreachable, with why)."""
        tool = self.tool
        if tool is None or tool.card is not self.card or tool.unreachable != self.card_error:
            tool = self.tool = RemoteAgentTool(
                self.entry.name, self.card, client, unreachable=self.card_error
            )
        return tool
