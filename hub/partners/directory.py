"""`Partners`: the partner agents of agents.yaml, each with its card, client, breaker and tool.

One `Partners` serves the whole hub. It reads each partner's card through one `CardCache`
(so a hundred callers on a cold cache cost one GET), builds the partner's `A2AClient` from
the card and the entry's overrides (protocol, auth headers, timeouts), and keeps one circuit
breaker per partner that outlives clients, cards and registry reloads.

When a partner's card changes, its client and tool are rebuilt from the new card on the next
use; when the registry is replaced (agents.yaml edited), partners that were removed or
changed are dropped and the new entries take their place.

Partners can also be added while the hub runs (`add`: `spawn_agent`, or learned from a peer
hub's `sync_state`). They are served like the file's, after them, and are kept across
reloads of agents.yaml, except one whose name the file comes to use: the file wins, and the
runtime partner is dropped with a warning. With a shared store (replicas on PostgreSQL) they
are recorded there and served by every replica (`PartnerSync`); otherwise they live in
memory only. Their URLs, and every request sent to them, pass the SSRF guard of the
`FederationPolicy` (a client of their own, `GuardedTransport`), so a caller cannot point the
hub at an internal address.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import TracebackType

import anyio
import httpx

from hub.client import (
    A2AClient,
    BreakerConfig,
    BreakerSnapshot,
    BreakerState,
    CardCache,
    CircuitBreaker,
    RetryPolicy,
    Timeouts,
    build_http_client,
    fault_of,
)
from hub.errors import CardFetchError, ClientError, ConfigError, ProtocolError, UnknownAgentError
from hub.partners.conversations import Conversations
from hub.partners.runtime import FederationPolicy, RuntimePartner, RuntimePartners
from hub.partners.stats import StatsBook
from hub.protocol import AgentCard
from hub.protocol.trace import current_scope
from hub.protocol.urls import shown_url
from hub.registry import AgentEntry, Registry, RegistryDiff, RegistryWatcher
from hub.telemetry.outgoing import card_read_failed
from hub.tools.remote import RemoteAgentTool

__all__ = ["PartnerHealth", "Partners"]

log = logging.getLogger(__name__)

_WARM_CONCURRENCY = 16
WARM_TIMEOUT = 10.0
"""Seconds `warm` waits for the partners' cards when a hub opens."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PartnerHealth:
    """One partner's health, as `a2a-hub agents check` shows it.

    Attributes:
        name: the partner's name.
        ok: its card could be read and its breaker lets calls through.
        card_ms: how long reading (revalidating) the card took, in milliseconds.
        interface: `BINDING VERSION URL` the client would call, when the card was read.
        breaker: the circuit breaker's state.
        error: why the partner is not ok.
    """

    name: str
    ok: bool
    card_ms: float | None
    interface: str | None
    breaker: BreakerSnapshot
    error: str | None = None


@dataclass(slots=True)
class _Partner:
    entry: AgentEntry
    breaker: CircuitBreaker
    card: AgentCard | None = None
    client: A2AClient | None = None
    tool: RemoteAgentTool | None = None
    runtime: RuntimePartner | None = None
    """Set for a partner added while the hub runs."""
    card_error: str | None = None
    """Why its card could not be read when last tried (None: read, or not tried yet)."""


def _allowed() -> frozenset[str] | None:
    """The partners the current caller may reach (None: all), from its call scope."""
    scope = current_scope()
    return scope.agents if scope is not None else None


class Partners(Mapping[str, RemoteAgentTool]):
    """The registry's enabled partners, by name, as tools (`partners["research"]`).

    Inside a request (or a task it started) whose caller is scoped to some partners, the
    others do not exist: lookups fail as for a name agents.yaml does not list, and iteration
    and `len` skip them.

    Use it as an async context manager: it closes the HTTP clients it made.

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
        self._http = http
        self._own_http = http is None
        self._cards = cards
        self._breaker_config = breaker or BreakerConfig()
        self._retry = retry
        self._breakers: dict[str, CircuitBreaker] = {}
        self._registry = registry
        self._partners = {entry.name: self._new(entry) for entry in registry}
        self.federation = federation or FederationPolicy()
        """Who may add partners while the hub runs, and where they may be."""
        self._runtime = RuntimePartners(self.federation)
        self.on_added: Callable[[RuntimePartner], Awaitable[None]] | None = None
        """Called with each partner `add` lets in, before it is served (replicas record it
        in their shared store there: `PartnerSync`); an error undoes the add."""
        self.conversations = Conversations()
        """The partner context each hub conversation continues, per partner."""
        self.stats = StatsBook()
        """Recent latency and error rate per partner, recorded by whoever calls them."""
        self._listeners: dict[object, Callable[[], None]] = {}

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
        """Close the HTTP clients this object made."""
        if self._own_http and self._http is not None:
            await self._http.aclose()
            self._http = None
            self._cards = None
        await self._runtime.aclose()

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
        allowed = _allowed()
        return iter(name for name in self._partners if allowed is None or name in allowed)

    def __len__(self) -> int:
        allowed = _allowed()
        if allowed is None:
            return len(self._partners)
        return sum(1 for name in self._partners if name in allowed)

    @property
    def registry(self) -> Registry:
        """The partners of agents.yaml (those added at run time are not in it)."""
        return self._registry

    def names(self) -> tuple[str, ...]:
        """Every partner's name, agents.yaml's first, whatever the caller's scope."""
        return tuple(self._partners)

    def entry(self, name: str) -> AgentEntry:
        """The partner's agents.yaml entry (or the entry it was added with at run time).

        Raises:
            UnknownAgentError: no enabled partner has that name.
        """
        return self._partner(name).entry

    def breaker(self, name: str) -> CircuitBreaker:
        """The partner's circuit breaker."""
        return self._partner(name).breaker

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
        cards = self._runtime.cards if partner.runtime is not None else self.cards
        read = cards.refresh if force else cards.get
        started = time.perf_counter()
        try:
            card = await read(self._card_url(entry), headers=entry.auth.http_headers())
        except CardFetchError as exc:
            # Named as agents.yaml names the partner; its URL is for the log only.
            failed = CardFetchError(
                f"agent '{name}': its agent card could not be read ({fault_of(exc)})",
                detail=exc.detail or str(exc),
            )
            self._card_failed(partner, failed, time.perf_counter() - started)
            raise failed from exc
        if partner.card_error is not None:
            partner.card_error = None
            self._changed()
        self._observe(partner, card)
        return card

    def _card_failed(self, partner: _Partner, error: CardFetchError, seconds: float) -> None:
        """A card that could not be read is a failed call: the breaker and the partner call
        metrics count it, and the partner's tool says it is unreachable."""
        partner.breaker.record_failure()
        card_read_failed(partner.entry.name, outcome=type(error).__name__, seconds=seconds)
        if partner.card is None and partner.card_error != str(error):
            partner.card_error = str(error)
            self._changed()

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
        if partner.client is None or partner.client.card is not card:
            entry = partner.entry
            partner.client = A2AClient(
                card,
                http=self._runtime.http if partner.runtime is not None else self.http,
                agent_name=entry.name,
                protocol_version=entry.protocol.version,
                binding=entry.protocol.binding,
                headers=entry.auth.http_headers(),
                timeouts=Timeouts(
                    connect=entry.timeout.connect,
                    read=entry.timeout.read,
                    deadline=entry.timeout.deadline,
                ),
                retry=self._retry,
                breaker=partner.breaker,
            )
        return partner.client

    async def warm(self, *, within: float = WARM_TIMEOUT) -> dict[str, str | None]:
        """Read every partner's card at once (at most 16 in flight, for at most `within`
        seconds), so that every tool is described by its card, or as unreachable with the
        reason; the hub does this when it opens.

        Returns:
            By name: None for a card that was read, else why it was not.
        """
        outcome: dict[str, str | None] = {}
        limiter = anyio.CapacityLimiter(_WARM_CONCURRENCY)

        async def one(name: str) -> None:
            async with limiter:
                try:
                    await self.card(name)
                    outcome[name] = None
                except ClientError as exc:
                    outcome[name] = str(exc)
                    # The kind of fault only: the call that meets it again logs where the
                    # partner is and what it answered, once.
                    log.warning("%s; a call will try again", exc)

        names = list(self._partners)
        with anyio.move_on_after(within):
            async with anyio.create_task_group() as group:
                for name in names:
                    group.start_soon(one, name)
        late = [name for name in names if name not in outcome]
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
        started = time.perf_counter()
        error = None
        interface = None
        try:
            await self.refresh(name)
            client = await self.client(name)
            chosen = client.interface
            interface = (
                f"{chosen.protocol_binding} {client.protocol_version} {shown_url(chosen.url)}"
            )
        except ClientError as exc:
            error = exc.for_log()  # for the operator: where the partner is and what it said
        card_ms = (time.perf_counter() - started) * 1000
        snapshot = partner.breaker.snapshot()
        if error is None and snapshot.state.value == "open":
            error = f"circuit open after {snapshot.consecutive_failures} failures"
        return PartnerHealth(
            name=name,
            ok=error is None,
            card_ms=card_ms if interface is not None else None,
            interface=interface,
            breaker=snapshot,
            error=error,
        )

    # -- partners added at run time -----------------------------------------------------------

    def runtime_partners(self) -> tuple[RuntimePartner, ...]:
        """The partners added while the hub runs, in the order they were added."""
        return self._runtime.all()

    def origin(self, name: str) -> str | None:
        """Where a partner added at run time came from; None for one of agents.yaml.

        Raises:
            UnknownAgentError: no partner has that name.
        """
        runtime = self._partner(name).runtime
        return runtime.origin if runtime is not None else None

    async def add(
        self, entry: AgentEntry, *, origin: str, description: str | None = None
    ) -> AgentCard:
        """Add a partner while the hub runs, served like agents.yaml's until a restart or
        `remove` (never written to the file), once `RuntimePartners.admit` let it in: a free
        name, a card URL the guard allows, a usable card.

        Args:
            entry: the partner, as an agents.yaml entry (with a `url`, no inline card).
            origin: where it comes from (`spawn_agent by ops`, `learned from <hub URL>`).
            description: what it is for, as its adder said.

        Returns:
            The partner's card.

        Raises:
            AgentNameTakenError, LimitExceededError, InvalidParamsError, UnsafeUrlError,
            AgentCardError: see `RuntimePartners.admit`.
        """
        scope = _allowed()
        card = await self._runtime.admit(entry, self._registry, scope)
        runtime = self._runtime.keep(
            entry, self._registry, scope, origin=origin, description=description
        )
        if self.on_added is not None:
            try:
                await self.on_added(runtime)
            except BaseException:
                self._runtime.pop(entry.name)
                raise
        partner = self._new(entry)
        partner.runtime = runtime
        partner.card = card
        self._partners[entry.name] = partner
        self._changed()
        return card

    def adopt(self, runtimes: Sequence[RuntimePartner]) -> None:
        """Serve exactly `runtimes` as the partners added at run time: those other replicas
        added or forgot (`PartnerSync`). A new one is taken as recorded (its card is read on
        first use); one whose name is taken here is skipped with a warning."""
        wanted = {runtime.entry.name: runtime for runtime in runtimes}
        for name in [name for name in self._runtime if name not in wanted]:
            self.remove(name)
        added = False
        for name, runtime in wanted.items():
            if name in self._runtime:
                continue
            try:
                kept = self._runtime.keep(
                    runtime.entry,
                    self._registry,
                    None,
                    origin=runtime.origin,
                    description=runtime.description,
                )
            except ProtocolError as exc:
                log.warning("partner '%s' added on another replica is not served: %s", name, exc)
                continue
            partner = self._new(runtime.entry)
            partner.runtime = kept
            self._partners[name] = partner
            added = True
        if added:
            self._changed()

    def remove(self, name: str) -> RuntimePartner:
        """Remove a partner added at run time (agents.yaml's are removed by editing it).

        Raises:
            UnknownAgentError: no partner of that name was added at run time.
        """
        runtime = self._runtime.pop(name)
        if runtime is None:
            known = ", ".join(self._runtime) or "none"
            raise UnknownAgentError(
                f"agent '{name}' was not added at run time (known: {known}); agents.yaml "
                "partners are removed by editing the file"
            )
        self._partners.pop(name, None)
        self._breakers.pop(name, None)
        log.info("partner '%s' (%s) removed", name, runtime.origin)
        self._changed()
        return runtime

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` whenever the set of tools changes: a partner added or removed (an
        agents.yaml edit, a runtime partner) or a card that rebuilt its tool. Returns the
        function that unsubscribes it."""
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    def _changed(self) -> None:
        for listener in list(self._listeners.values()):
            listener()

    # -- registry reloads --------------------------------------------------------------------

    def update(self, registry: Registry, diff: RegistryDiff | None = None) -> None:
        """Serve `registry` from now on: removed and changed partners are dropped (their
        breakers too), added ones appear; the others keep their clients and tools.

        Partners added at run time stay, after the file's, except one whose name (`-` and
        `_` counting as the same) the new registry uses: it is dropped, with a warning.
        """
        diff = diff or self._registry.diff(registry)
        for name in (*diff.removed, *diff.changed):
            self._partners.pop(name, None)
            self._breakers.pop(name, None)
        for runtime, clash in self._runtime.clashing(registry):
            name = runtime.entry.name
            log.warning(
                "agents.yaml now lists '%s': the partner '%s' added at run time (%s) is dropped",
                clash,
                name,
                runtime.origin,
            )
            self._runtime.pop(name)
            self._partners.pop(name, None)
            self._breakers.pop(name, None)
        kept = self._partners
        partners = {entry.name: kept.get(entry.name) or self._new(entry) for entry in registry}
        for name in self._runtime:
            partners[name] = kept[name]
        self._partners = partners
        self._registry = registry
        self._changed()

    @asynccontextmanager
    async def watching(
        self, *, interval: float = 1.0, env: Mapping[str, str] | None = None
    ) -> AsyncIterator[RegistryWatcher | None]:
        """Follow the registry's file while the block runs: an edit of agents.yaml replaces
        the registry (a broken edit keeps the last good one and logs why). Yields None when
        the registry was not read from a file."""
        source = self._registry.source
        if source is None:
            yield None
            return
        watcher = RegistryWatcher(source, env=env, interval=interval, initial=self._registry)
        unsubscribe = watcher.subscribe(lambda old, new, diff: self.update(new, diff))
        try:
            async with watcher:
                yield watcher
        finally:
            unsubscribe()

    # -- internals ---------------------------------------------------------------------------

    def _new(self, entry: AgentEntry) -> _Partner:
        breaker = self._breakers.get(entry.name)
        if breaker is None:
            breaker = CircuitBreaker(entry.name, self._breaker_config)
            self._breakers[entry.name] = breaker
        return _Partner(entry=entry, breaker=breaker, card=entry.card)

    def _partner(self, name: str) -> _Partner:
        allowed = _allowed()
        partner = self._partners.get(name)
        if partner is None or (allowed is not None and name not in allowed):
            # A partner outside the caller's scope gets the very error of an unknown name.
            raise self._registry.unknown(name, among=allowed, added=tuple(self._runtime))
        return partner

    @staticmethod
    def _card_url(entry: AgentEntry) -> str:
        url = entry.card_url
        if url is None:
            raise ConfigError(f"agent '{entry.name}' has neither a url nor an inline card")
        return url

    def _observe(self, partner: _Partner, card: AgentCard) -> None:
        if card is partner.card:
            return
        changed = partner.card != card
        if partner.card is not None and changed:
            log.info("partner '%s' changed its card; its tool is rebuilt", partner.entry.name)
            partner.tool = None
            partner.client = None
        partner.card = card
        if changed:
            self._changed()

    def _tool(self, partner: _Partner) -> RemoteAgentTool:
        tool = partner.tool
        if tool is None or tool.card is not partner.card or tool.unreachable != partner.card_error:
            name = partner.entry.name
            tool = partner.tool = RemoteAgentTool(
                name, partner.card, lambda: self.client(name), unreachable=partner.card_error
            )
        return tool
