"""The caller's trace and deadline, carried from an inbound request to every call it causes.

A request that reaches the hub may carry a W3C `traceparent` header and a deadline
(`X-A2A-Hub-Deadline`: seconds the caller will still wait). The hub keeps both for the task it
starts as a `CallScope`; while the task's skill runs, the scope is the current one, and every
request the hub then sends to a partner carries the same trace id (with a fresh span id) and
the time that is left. A call made outside any scope starts a trace of its own.

The deadline header is relative (seconds, not a clock time), so clocks that disagree between
hosts do not shorten or lengthen it.

The scope also holds what the request's credential may use (local skills, partner agents),
so a task keeps its caller's limits in everything it calls (a scope that never says which
partners it may reach reaches none: `Allowed`), and the A2A extensions the
request activated; these never leave the hub. Only the gateway, a transparent proxy, passes
its caller's extensions on to the partner (`forward_extensions`); a task's scope never
carries them, so a skill's calls to partners do not.

Hubs that call each other also pass on the trail of hubs a request has gone through
(`X-A2A-Hub-Trail`: their public URLs, comma-separated). A hub that finds itself on the trail
refuses the request (a forwarding loop), as it does one whose trail is already as long as
its hop limit.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Collection, Mapping
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field

from pydantic import SecretStr

from hub.errors import InvalidRequestError
from hub.protocol.entropy import random_bytes
from hub.protocol.extensions import ExtensionRelay

__all__ = [
    "DEADLINE_HEADER",
    "EVERY",
    "NOTHING",
    "TRACEPARENT_HEADER",
    "TRAIL_HEADER",
    "Allowed",
    "CallScope",
    "current_scope",
    "outgoing_headers",
    "parse_traceparent",
    "past_the_deadline",
    "use_scope",
]

TRACEPARENT_HEADER = "traceparent"
DEADLINE_HEADER = "X-A2A-Hub-Deadline"
TRAIL_HEADER = "X-A2A-Hub-Trail"
_MAX_TRAIL = 64

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16


@dataclass(frozen=True, slots=True)
class Allowed:
    """The names a caller may use: those of `names`, or every one (`EVERY`).

    It fails closed: `Allowed()` (`NOTHING`) allows none, so work whose scope never said
    what it may reach reaches nothing. Only a caller's credential, through the auth layer
    (every name for a credential not limited, and with auth off), or the hub's own trusted
    entry points (the CLI, `Hub` in Python) allow every name.

    Attributes:
        names: the names allowed (ignored when `every`).
        every: every name is allowed.
    """

    names: frozenset[str] = frozenset()
    every: bool = False

    @classmethod
    def of(cls, names: Collection[str] | None) -> Allowed:
        """What a credential's list allows: those names; every one when it has no list."""
        return EVERY if names is None else cls(frozenset(names))

    def __contains__(self, name: object) -> bool:
        return self.every or name in self.names

    def __and__(self, other: Allowed) -> Allowed:
        """What both allow."""
        if self.every:
            return other
        if other.every:
            return self
        return Allowed(self.names & other.names)

    @property
    def limit(self) -> frozenset[str] | None:
        """The names allowed, or None when every one is."""
        return None if self.every else self.names


EVERY = Allowed(every=True)
"""Every name: a credential without a list, auth off, the hub's own trusted entry points."""
NOTHING = Allowed()
"""No name: a scope that never said what it may reach."""


@dataclass(frozen=True, slots=True)
class CallScope:
    """One trace and an optional deadline.

    Attributes:
        trace_id: 32 lowercase hex digits, shared by every call in the trace.
        parent_id: the caller's span id (16 hex digits).
        flags: the trace flags (`01` sampled).
        deadline: `time.monotonic()` value after which the caller no longer waits; None for
            no deadline.
        trail: the hubs the request went through, this one last.
        caller: the credential the request came with ("" when auth is off); never sent on.
        skills: the local skills that caller may use; None for all.
        agents: the partner agents that caller's tasks may reach; none unless set (the auth
            layer sets it from the credential). A partner outside it is refused as if
            agents.yaml did not list it.
        extensions: the A2A extensions the request activated (listed in its
            `A2A-Extensions` header and declared in the hub's card); never sent on.
        forward_extensions: set by the gateway only: the extensions its caller listed, sent
            to the partner with every A2A request of the call, and those the partner
            activated; None elsewhere.
        recorded: `parent_id` is a span this hub records (`hub.telemetry`): outgoing
            requests name it as their parent, so the partner's spans hang under it. Without
            tracing each request gets a fresh span id.
        caller_token: the identity provider's token the caller came with (`auth.oidc`),
            for a partner call made on its behalf (`on_behalf` in agents.yaml); never sent
            on otherwise, never shown.
    """

    trace_id: str
    parent_id: str
    flags: str = "01"
    deadline: float | None = None
    trail: tuple[str, ...] = ()
    caller: str = ""
    skills: frozenset[str] | None = None
    agents: Allowed = NOTHING
    extensions: frozenset[str] = frozenset()
    forward_extensions: ExtensionRelay | None = None
    recorded: bool = False
    caller_token: SecretStr | None = field(default=None, repr=False)

    @classmethod
    def new(cls, *, timeout: float | None = None, agents: Allowed = NOTHING) -> CallScope:
        """A scope that starts a new trace, with `timeout` seconds from now if given, that
        may reach the partners `agents` allows (none by default)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        return cls(trace_id=_trace_id(), parent_id=_span_id(), deadline=deadline, agents=agents)

    @classmethod
    def from_headers(
        cls, headers: Mapping[str, str], *, here: str | None = None, max_hops: int = 8
    ) -> CallScope:
        """The scope an inbound request asks for: its trace continued (or a new one when the
        `traceparent` is missing or malformed), its deadline (ignored when malformed), and
        its trail with `here` (this hub's public URL) added.

        Raises:
            InvalidRequestError: this hub is already on the trail (a loop), or the trail
                has `max_hops` hubs already.
        """
        timeout = _seconds(headers.get(DEADLINE_HEADER.lower()) or headers.get(DEADLINE_HEADER))
        trail = _trail(headers.get(TRAIL_HEADER.lower()) or headers.get(TRAIL_HEADER))
        if here is not None:
            if here in trail:
                raise InvalidRequestError(
                    f"forwarding loop: this hub ({here}) is already on the request's trail "
                    f"({' -> '.join(trail)}); check the agents.yaml files of these hubs"
                )
            if len(trail) >= max_hops:
                raise InvalidRequestError(
                    f"the request has gone through {len(trail)} hubs, the hop limit "
                    f"(server.max_hops) is {max_hops}: {' -> '.join(trail)}"
                )
            trail = (*trail, here)
        parent = parse_traceparent(headers.get(TRACEPARENT_HEADER))
        deadline = None if timeout is None else time.monotonic() + timeout
        if parent is None:
            return cls(trace_id=_trace_id(), parent_id=_span_id(), deadline=deadline, trail=trail)
        trace_id, parent_id, flags = parent
        return cls(
            trace_id=trace_id, parent_id=parent_id, flags=flags, deadline=deadline, trail=trail
        )

    def remaining(self) -> float | None:
        """Seconds left before the deadline (never below 0), or None for no deadline."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def within(self, timeout: float | None) -> float | None:
        """The shorter of `timeout` and the time left (None when both are unbounded)."""
        left = self.remaining()
        if left is None:
            return timeout
        return left if timeout is None else min(timeout, left)

    def inside(self, span_id: str, flags: str) -> CallScope:
        """This scope for the work inside span `span_id`, which this hub records: the same
        trace, deadline, trail and caller, with the span as the parent."""
        # Built field by field: `dataclasses.replace` costs twice as much, once per span.
        return CallScope(
            self.trace_id,
            span_id,
            flags,
            self.deadline,
            self.trail,
            self.caller,
            self.skills,
            self.agents,
            self.extensions,
            self.forward_extensions,
            True,
            self.caller_token,
        )

    @property
    def traceparent(self) -> str:
        """The scope's own `traceparent` (its parent span)."""
        return f"00-{self.trace_id}-{self.parent_id}-{self.flags}"

    def headers(self, *, version: str | None = None) -> dict[str, str]:
        """Headers for one outgoing request: the trace with a new span id, the time left, the
        trail; and for an A2A request in protocol `version`, the extensions forwarded."""
        span_id = self.parent_id if self.recorded else _span_id()
        headers = {TRACEPARENT_HEADER: f"00-{self.trace_id}-{span_id}-{self.flags}"}
        left = self.remaining()
        if left is not None:
            headers[DEADLINE_HEADER] = f"{left:.3f}"
        if self.trail:
            headers[TRAIL_HEADER] = ", ".join(self.trail)
        if version is not None and self.forward_extensions is not None:
            headers.update(self.forward_extensions.request_headers(version))
        return headers


_current: ContextVar[CallScope | None] = ContextVar("a2a_hub_call_scope", default=None)


def current_scope() -> CallScope | None:
    """The scope of the work running now, if any."""
    return _current.get()


class _ScopeInUse:
    """The block of `use_scope` (a class: it is entered a few times for every request)."""

    __slots__ = ("_scope", "_token")

    def __init__(self, scope: CallScope | None) -> None:
        self._scope = scope
        self._token: Token[CallScope | None] | None = None

    def __enter__(self) -> CallScope | None:
        if self._scope is None:
            return _current.get()
        self._token = _current.set(self._scope)
        return self._scope

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _current.reset(self._token)
            self._token = None


def use_scope(scope: CallScope | None) -> AbstractContextManager[CallScope | None]:
    """Make `scope` the current one inside the block (None leaves the current one)."""
    return _ScopeInUse(scope)


def past_the_deadline() -> AbstractContextManager[CallScope | None]:
    """The current scope without its deadline, inside the block: for the cleanup that must
    reach a partner after its caller's time ran out (cancelling the partner task a call
    gave up on), which bounds its own wait. Sent with the expired deadline, the request
    would reach the partner with no time left, or not be sent at all."""
    scope = _current.get()
    if scope is None or scope.deadline is None:
        return _ScopeInUse(None)
    return _ScopeInUse(dataclasses.replace(scope, deadline=None))


def outgoing_headers(*, version: str | None = None) -> dict[str, str]:
    """The headers of one request sent now (`CallScope.headers`, `version` being the A2A
    version the request speaks, None for other requests): the current scope's, or a new
    trace's."""
    scope = _current.get()
    if scope is None:
        return CallScope.new().headers()
    return scope.headers(version=version)


def parse_traceparent(value: str | None) -> tuple[str, str, str] | None:
    """(trace id, parent span id, flags) of a W3C `traceparent` value; None when it is
    missing, malformed or all zeros."""
    match = _TRACEPARENT.match((value or "").strip().lower())
    if match is None or match.group(1) == _ZERO_TRACE or match.group(2) == _ZERO_SPAN:
        return None
    return match.group(1), match.group(2), match.group(3)


def _trace_id() -> str:
    return random_bytes(16).hex()


def _span_id() -> str:
    span = random_bytes(8).hex()
    return span if span != _ZERO_SPAN else "0000000000000001"


def _trail(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    hubs = tuple(hub.strip() for hub in value.split(",") if hub.strip())
    return hubs[:_MAX_TRAIL]


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    if seconds != seconds or seconds < 0 or seconds == float("inf"):  # NaN, negative, inf
        return None
    return seconds
