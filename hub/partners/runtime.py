"""Partners added while the hub runs, and the policy that says who may add them and where.

A runtime partner is an agents.yaml entry (`AgentEntry`) that came from a federation directive
instead of the file: `spawn_agent` sent by a caller allowed to, or learned from a peer hub's
`sync_state`. It records where it came from. It is kept in memory, and with replicas in
their shared store too (`hub.partners.sync`); a single hub's restart forgets it.

`FederationPolicy` holds the rules, from the `federation` settings and the credentials'
`federation` permissions: which callers may add partners, the SSRF guard their URLs pass
(public addresses only, unless allow-listed), and how many there may be at once.

`RuntimePartners` keeps them for `Partners`, and checks a new one before it is let in: a free
name, a card URL the guard allows, a readable card with an interface the hub speaks whose URL
the guard allows too. They are called through an HTTP client of their own whose every request
passes the guard (`GuardedTransport`), so a card that changes later, or a name that resolves
elsewhere later, cannot point the hub at an internal address either.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import httpx

from hub.client import CardCache, UrlGuard, build_http_client, choose_interface
from hub.client.guard import IPNetwork, Resolver
from hub.config import FederationPermission, Settings
from hub.errors import (
    AgentCardError,
    AgentNameTakenError,
    CardFetchError,
    DirectiveNotAllowedError,
    InvalidParamsError,
    LimitExceededError,
    NoSupportedInterfaceError,
    UnsafeUrlError,
)
from hub.protocol import AgentCard
from hub.protocol.urls import shown_url
from hub.registry import AgentEntry, Registry, same_name_key

__all__ = ["FederationPolicy", "RuntimePartner", "RuntimePartners"]

log = logging.getLogger("hub.partners")


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimePartner:
    """A partner added while the hub runs.

    Attributes:
        entry: the partner, as an agents.yaml entry would describe it.
        origin: where it came from: `spawn_agent by <caller>` (`by anonymous caller` without
            a credential) or `learned from <peer hub URL>`.
        description: what the one who added it said it is for, if anything.
    """

    entry: AgentEntry
    origin: str
    description: str | None = None


def _partner_guard(
    *,
    allow_hosts: Iterable[str] = (),
    allow_cidrs: Iterable[IPNetwork] = (),
    resolver: Resolver | None = None,
) -> UrlGuard:
    return UrlGuard(
        allow_hosts=allow_hosts,
        allow_cidrs=allow_cidrs,
        resolver=resolver,
        purpose="partner",
        setting="federation",
        credentials_hint="a partner that needs credentials belongs in agents.yaml",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class FederationPolicy:
    """Who may change the partners while the hub runs, and where those partners may be.

    The default allows nobody, and public addresses only.

    Attributes:
        grants: by credential name, the permissions (`spawn_agent`, `learn`) it was given.
        anonymous: the permissions of callers without a credential (every caller when auth is
            off, and work started inside the process).
        guard: checks the card URL and the interface URL of every runtime partner, and every
            request sent to one.
        max_agents: most runtime partners at once.
        here: this hub's public URL, which is never learned as a partner.
    """

    grants: Mapping[str, frozenset[FederationPermission]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    anonymous: frozenset[FederationPermission] = frozenset()
    guard: UrlGuard = field(default_factory=_partner_guard)
    max_agents: int = 32
    here: str | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings, *, resolver: Resolver | None = None
    ) -> FederationPolicy:
        """The policy of the `federation` settings and the credentials' `federation` lists.

        Args:
            settings: the hub's settings.
            resolver: how host names are resolved for the guard (tests inject one).
        """
        federation = settings.federation
        grants = {
            credential.name: frozenset(credential.federation)
            for credential in settings.auth.credentials
            if credential.federation
        }
        return cls(
            grants=MappingProxyType(grants),
            anonymous=frozenset(federation.anonymous),
            guard=_partner_guard(
                allow_hosts=federation.allow_hosts,
                allow_cidrs=federation.allow_cidrs,
                resolver=resolver,
            ),
            max_agents=federation.max_agents,
            here=settings.server.base_url(),
        )

    def refusal(
        self, permission: FederationPermission, caller: str
    ) -> DirectiveNotAllowedError | None:
        """Why `caller` ("" for none) may not use `permission`, or None when it may."""
        granted = self.grants.get(caller, frozenset()) if caller else self.anonymous
        if permission in granted:
            return None
        what = "sync_state naming a peer to learn from" if permission == "learn" else permission
        violations = [("metadata.swarmKind", f"needs the '{permission}' permission")]
        if caller:
            return DirectiveNotAllowedError(
                f"credential '{caller}' may not send {what}; an operator grants it with "
                f"`federation: [{permission}]` on the credential in the hub's settings",
                violations=violations,
            )
        return DirectiveNotAllowedError(
            f"{what} needs a credential granted it (`federation: [{permission}]`); callers "
            f"without one may send it only where the hub's settings say `federation.anonymous: "
            f"[{permission}]`",
            violations=violations,
        )


class RuntimePartners:
    """The partners added while the hub runs, in the order they were added.

    Args:
        policy: their guard and limit.
    """

    def __init__(self, policy: FederationPolicy) -> None:
        self.policy = policy
        self._partners: dict[str, RuntimePartner] = {}
        self._http: httpx.AsyncClient | None = None
        self._cards: CardCache | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        """The client they are called with: every request passes the guard (made on first
        use)."""
        if self._http is None:
            self._http = build_http_client(guard=self.policy.guard)
        return self._http

    @property
    def cards(self) -> CardCache:
        """Their card cache, on `http`."""
        if self._cards is None:
            self._cards = CardCache(self.http)
        return self._cards

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
            self._cards = None

    def __contains__(self, name: object) -> bool:
        return name in self._partners

    def __iter__(self) -> Iterator[str]:
        return iter(self._partners)

    def __len__(self) -> int:
        return len(self._partners)

    def get(self, name: str) -> RuntimePartner | None:
        return self._partners.get(name)

    def all(self) -> tuple[RuntimePartner, ...]:
        return tuple(self._partners.values())

    async def admit(
        self, entry: AgentEntry, registry: Registry, scope: frozenset[str] | None
    ) -> AgentCard:
        """Check a new partner and read its card.

        The name must be free: not used by agents.yaml (enabled or not) nor by another
        runtime partner, `-` and `_` counting as the same. The entry needs a `url` and no
        inline card. The card URL must pass the guard; the card is read (through the guard)
        and must offer an interface the hub speaks, whose URL passes the guard too.

        Args:
            entry: the new partner.
            registry: the agents.yaml partners.
            scope: the partners the caller may know of (None: all); a name taken by one it
                may not know of is refused without naming it.

        Raises:
            AgentNameTakenError: the name is in use.
            LimitExceededError: `federation.max_agents` runtime partners exist already.
            InvalidParamsError: no `url`, or an inline card.
            UnsafeUrlError: the card URL or the interface URL is refused by the guard.
            AgentCardError: the card cannot be read, or offers nothing the hub speaks.
        """
        self.check_free(entry.name, registry, scope)
        url = entry.card_url
        if url is None or entry.card is not None:
            problem = "needs a url (its base URL or its card's URL) and no inline card"
            raise InvalidParamsError(
                f"a partner added at run time {problem}", violations=[("url", problem)]
            )
        guard = self.policy.guard
        await guard.check(url)
        try:
            card = await self.cards.get(url, headers=entry.auth.http_headers())
            interface, _ = choose_interface(
                card,
                protocol_version=entry.protocol.version,
                binding=entry.protocol.binding,
                grpc=False,  # its calls must pass the guard, which sees HTTP requests only
            )
        except (CardFetchError, NoSupportedInterfaceError) as exc:
            raise AgentCardError(
                f"agent '{entry.name}': {exc}", violations=[("url", str(exc))]
            ) from None
        try:
            await guard.check(interface.url)
        except UnsafeUrlError as exc:
            problem = exc.violations[0][1] if exc.violations else str(exc)
            raise UnsafeUrlError(
                f"agent '{entry.name}': its card's interface {shown_url(interface.url)} is "
                f"refused: {problem}",
                violations=[("card.supportedInterfaces", problem)],
            ) from None
        return card

    def keep(
        self,
        entry: AgentEntry,
        registry: Registry,
        scope: frozenset[str] | None,
        *,
        origin: str,
        description: str | None,
    ) -> RuntimePartner:
        """Record an admitted partner (its name checked again: another may have taken it
        while its card was read)."""
        self.check_free(entry.name, registry, scope)
        runtime = RuntimePartner(entry=entry, origin=origin, description=description)
        self._partners[entry.name] = runtime
        log.info(
            "partner '%s' added at run time (%s): %s", entry.name, origin, shown_url(entry.url)
        )
        return runtime

    def pop(self, name: str) -> RuntimePartner | None:
        """Forget a partner; None when no partner of that name was added at run time."""
        runtime = self._partners.pop(name, None)
        url = runtime.entry.card_url if runtime is not None else None
        if url is not None and self._cards is not None:
            self._cards.forget(url)
        return runtime

    def clashing(self, registry: Registry) -> list[tuple[RuntimePartner, str]]:
        """The runtime partners whose name `registry` uses, each with the file's name."""
        in_file = {same_name_key(entry.name): entry.name for entry in registry.all()}
        return [
            (runtime, in_file[same_name_key(name)])
            for name, runtime in self._partners.items()
            if same_name_key(name) in in_file
        ]

    def check_free(self, name: str, registry: Registry, scope: frozenset[str] | None) -> None:
        """Raise unless a new runtime partner may be called `name`.

        Raises:
            LimitExceededError: `federation.max_agents` runtime partners exist already.
            AgentNameTakenError: the name is in use (`-` and `_` counting as the same).
        """
        if len(self._partners) >= self.policy.max_agents:
            raise LimitExceededError(
                f"the hub has {len(self._partners)} partners added at run time, the most it "
                "takes (federation.max_agents); remove one first"
            )
        key = same_name_key(name)
        for taken in (*(entry.name for entry in registry.all()), *self._partners):
            if same_name_key(taken) != key:
                continue
            if scope is not None and taken not in scope:
                # A partner outside the caller's scope is never named, as in every lookup.
                raise AgentNameTakenError(
                    f"the agent name '{name}' is not available; choose another",
                    violations=[("name", "not available")],
                )
            runtime = self._partners.get(taken)
            where = "in agents.yaml" if runtime is None else f"added at run time ({runtime.origin})"
            alike = " ('-' and '_' count as the same)" if taken != name else ""
            raise AgentNameTakenError(
                f"the agent name '{name}' is taken by '{taken}', {where}{alike}; choose another",
                violations=[("name", f"taken by '{taken}'")],
            )
