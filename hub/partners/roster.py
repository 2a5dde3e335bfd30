"""`Roster`: which partners a hub serves now, agents.yaml's and those added while it runs.

The roster keeps one `PartnerSlot` per partner, and one circuit breaker per partner that
outlives slots, cards and registry reloads. When the registry is replaced (agents.yaml
edited), partners that were removed or changed are dropped and the new entries take their
place.

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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager

from hub.client import BreakerConfig, CircuitBreaker
from hub.errors import ProtocolError, UnknownAgentError
from hub.partners.runtime import FederationPolicy, RuntimePartner, RuntimePartners
from hub.partners.slot import PartnerSlot
from hub.protocol import AgentCard
from hub.protocol.trace import EVERY, Allowed
from hub.registry import AgentEntry, Registry, RegistryDiff, RegistryWatcher

__all__ = ["Roster"]

log = logging.getLogger("hub.partners.directory")


class Roster:
    """The partners served now, by name, each in its slot; `Partners` reaches them.

    Args:
        registry: the partners of agents.yaml to serve.
        breaker: threshold and cool-down of each partner's breaker.
        federation: who may add partners while the hub runs, and where they may be (by
            default nobody, and public addresses only).
    """

    def __init__(
        self,
        registry: Registry,
        *,
        breaker: BreakerConfig | None = None,
        federation: FederationPolicy | None = None,
    ) -> None:
        self._breaker_config = breaker or BreakerConfig()
        self._breakers: dict[str, CircuitBreaker] = {}
        self._registry = registry
        self._partners = {entry.name: self._new(entry) for entry in registry}
        self.federation = federation or FederationPolicy()
        """Who may add partners while the hub runs, and where they may be."""
        self._runtime = RuntimePartners(self.federation)
        self.on_added: Callable[[RuntimePartner], Awaitable[None]] | None = None
        """Called with each partner `add` lets in, before it is served (replicas record it
        in their shared store there: `PartnerSync`); an error undoes the add."""
        self._listeners: dict[object, Callable[[], None]] = {}

    @property
    def registry(self) -> Registry:
        """The partners of agents.yaml (those added at run time are not in it)."""
        return self._registry

    def __contains__(self, name: object) -> bool:
        return name in self._partners

    def names(self) -> tuple[str, ...]:
        """Every partner's name, agents.yaml's first."""
        return tuple(self._partners)

    def unknown(self, name: str, allowed: Allowed = EVERY) -> UnknownAgentError:
        """The error for a lookup of `name` by a caller that may reach `allowed`: a partner
        outside it gets the very error of a name agents.yaml does not list."""
        return self._registry.unknown(name, among=allowed.limit, added=tuple(self._runtime))

    def entry(self, name: str) -> AgentEntry:
        """The partner's agents.yaml entry (or the entry it was added with at run time).

        Raises:
            UnknownAgentError: no enabled partner has that name.
        """
        return self._partner(name).entry

    def breaker(self, name: str) -> CircuitBreaker:
        """The partner's circuit breaker."""
        return self._partner(name).breaker

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
        self,
        entry: AgentEntry,
        *,
        origin: str,
        description: str | None = None,
        allowed: Allowed = EVERY,
    ) -> AgentCard:
        """Add a partner while the hub runs, served like agents.yaml's until a restart or
        `remove` (never written to the file), once `RuntimePartners.admit` let it in: a free
        name, a card URL the guard allows, a usable card.

        Args:
            entry: the partner, as an agents.yaml entry (with a `url`, no inline card).
            origin: where it comes from (`spawn_agent by ops`, `learned from <hub URL>`).
            description: what it is for, as its adder said.
            allowed: the partners its adder may reach (a name taken by another is refused
                as free of any partner it knows).

        Returns:
            The partner's card.

        Raises:
            AgentNameTakenError, LimitExceededError, InvalidParamsError, UnsafeUrlError,
            AgentCardError: see `RuntimePartners.admit`.
        """
        scope = allowed.limit
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

    def _new(self, entry: AgentEntry) -> PartnerSlot:
        breaker = self._breakers.get(entry.name)
        if breaker is None:
            breaker = CircuitBreaker(entry.name, self._breaker_config)
            self._breakers[entry.name] = breaker
        return PartnerSlot(entry=entry, breaker=breaker, card=entry.card)

    def _partner(self, name: str) -> PartnerSlot:
        partner = self._partners.get(name)
        if partner is None:
            raise self.unknown(name)
        return partner
