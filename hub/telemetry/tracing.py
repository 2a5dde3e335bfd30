"""Spans: `span()` around a unit of work, parented by the call scope's trace.

Trace context travels one way only, in the `CallScope` (`hub.protocol.trace`): a span is
started as the child of the current scope's parent id, and while it is open the scope names
the span, marked `recorded`, so the work inside (a nested span, a request to a partner
through the httpx request hook) carries the span's id. The OpenTelemetry SDK sees explicit
parents only; its own context is never used.

With tracing off, and within a trace that is not recorded (under a parent-based sampler),
`span()` returns a shared do-nothing context manager: a context-variable read or two and no
allocation.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from enum import StrEnum
from types import TracebackType
from typing import Protocol

from hub.protocol.trace import CallScope, current_scope, use_scope
from hub.telemetry.context import current_telemetry

__all__ = [
    "AttributeValue",
    "Attributes",
    "SpanHandle",
    "SpanKind",
    "Tracer",
    "add_event",
    "current_span",
    "sampled",
    "span",
]

AttributeValue = str | bool | int | float
Attributes = Mapping[str, AttributeValue]


class SpanKind(StrEnum):
    SERVER = "server"
    CLIENT = "client"
    INTERNAL = "internal"


class SpanHandle(Protocol):
    """What instrumented code may do with an open span (an OpenTelemetry `Span` is one)."""

    def set_attribute(self, key: str, value: AttributeValue) -> None: ...

    def add_event(self, name: str, attributes: Attributes | None = None) -> None: ...

    def update_name(self, name: str) -> None: ...

    def is_recording(self) -> bool: ...


class Tracer(Protocol):
    """Starts spans; `hub.telemetry.otel.OtelTracer` on the OpenTelemetry SDK."""

    follows_parent: bool
    """Whether a span below a parent that is not recorded is never recorded either (a
    parent-based sampler)."""

    def start(
        self, name: str, *, kind: SpanKind, parent: CallScope | None, attributes: Attributes
    ) -> OpenSpan:
        """A started span, the child of `parent`'s span (a new trace's root without)."""
        ...

    def shutdown(self) -> None:
        """Export what is pending and stop."""
        ...


class OpenSpan(SpanHandle, Protocol):
    """A started span, as a `Tracer` returns it."""

    @property
    def ids(self) -> tuple[str, str, str]:
        """(trace id, span id, flags) in W3C hex form."""
        ...

    def fail(self, error_type: str) -> None:
        """Mark the span failed with `error.type`."""
        ...

    def end(self) -> None: ...


def sampled(flags: str) -> bool:
    """Whether W3C trace flags (two hex digits) mark the trace as recorded."""
    return flags in _SAMPLED_FLAGS or (flags not in _UNSAMPLED_FLAGS and bool(int(flags, 16) & 1))


# The flags the hub meets on every request, answered without parsing them.
_SAMPLED_FLAGS = frozenset({"01"})
_UNSAMPLED_FLAGS = frozenset({"00"})


_span: ContextVar[OpenSpan | None] = ContextVar("a2a_hub_span", default=None)


def current_span() -> SpanHandle | None:
    """The innermost open span of the work running now, if tracing is on."""
    return _span.get()


def add_event(name: str, attributes: Attributes | None = None) -> None:
    """Add an event to the current span (nothing when there is none)."""
    open_span = _span.get()
    if open_span is not None:
        open_span.add_event(name, attributes)


class _NoSpan:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


class _Span:
    """An open span made current: the span context variable and the call scope name it."""

    __slots__ = ("_scope", "_span", "_token", "_tracer", "attributes", "kind", "name")

    def __init__(self, tracer: Tracer, name: str, kind: SpanKind, attributes: Attributes) -> None:
        self._tracer = tracer
        self.name = name
        self.kind = kind
        self.attributes = attributes
        self._span: OpenSpan | None = None
        self._token: Token[OpenSpan | None] | None = None
        self._scope: AbstractContextManager[CallScope | None] | None = None

    def __enter__(self) -> SpanHandle:
        parent = current_scope()
        opened = self._tracer.start(
            self.name, kind=self.kind, parent=parent, attributes=self.attributes
        )
        trace_id, span_id, flags = opened.ids
        self._span = opened
        self._token = _span.set(opened)
        if parent is not None and not sampled(flags) and not sampled(parent.flags):
            return opened  # not recorded, like its parent: the parent's scope says so already
        if parent is None:
            scope = CallScope(trace_id=trace_id, parent_id=span_id, flags=flags, recorded=True)
        else:
            scope = parent.inside(span_id, flags)
        self._scope = use_scope(scope)
        self._scope.__enter__()
        return opened

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        opened, self._span = self._span, None
        if self._scope is not None:
            self._scope.__exit__(exc_type, exc, tb)
            self._scope = None
        if self._token is not None:
            _span.reset(self._token)
        if opened is None:
            return
        if isinstance(exc, Exception):
            opened.fail(type(exc).__name__)
        opened.end()


def span(
    name: str, *, kind: SpanKind = SpanKind.INTERNAL, attributes: Attributes | None = None
) -> _Span | _NoSpan:
    """A context manager around one unit of work: a span when tracing is on and the trace is
    recorded (its handle is what `with ... as` gives), nothing otherwise (`as` gives None).

    An exception leaving the block marks the span failed with its type as `error.type`.
    """
    tracer = current_telemetry().tracer
    if tracer is None:
        return _NO_SPAN
    parent = current_scope()
    if parent is not None and tracer.follows_parent and not sampled(parent.flags):
        return _NO_SPAN  # a trace that is not recorded: nothing to start
    return _Span(tracer, name, kind, attributes or {})
