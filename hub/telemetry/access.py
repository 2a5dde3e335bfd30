"""The server's request entry: one record per request, which the handlers fill in (A2A
method, binding, version, caller, outcome), closed by an access log line, the request
metrics and the SERVER span.

The SERVER span is started here, from the request's `traceparent`; the header is then
rewritten to name that span, so the call scope the handler builds from it
(`CallScope.from_headers`) makes every span and request the call causes its child. The span
is named by the A2A method once the handler knows it (0.3 calls by their 1.0 name).
"""

from __future__ import annotations

import logging
import time
from asyncio import CancelledError
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from litestar.enums import ScopeType
from litestar.types import ASGIApp, HTTPScope, Message, Receive, Scope, Send

from hub.errors import ProtocolError
from hub.protocol import Message as A2AMessage
from hub.protocol import Task
from hub.protocol.trace import TRACEPARENT_HEADER, CallScope, parse_traceparent
from hub.telemetry.context import Telemetry, current_telemetry, use_telemetry
from hub.telemetry.tracing import OpenSpan, SpanKind

__all__ = [
    "RequestRecord",
    "note_call",
    "note_caller",
    "note_error",
    "note_refusal",
    "note_result",
    "observe_requests",
    "observe_rpc",
]

access_log = logging.getLogger("hub.access")

_REFUSALS = frozenset({401, 403, 429})
"""The HTTP statuses of an error that refuses its caller (who, what, how much), as opposed to
one that reports a fault."""

V1_NAMES = {
    "message/send": "SendMessage",
    "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask",
    "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "SubscribeToTask",
    "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
    "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
}
"""The 1.0 name of each 0.3 JSON-RPC method: spans and metrics use one vocabulary."""

_TRACEPARENT = TRACEPARENT_HEADER.encode()


class RequestRecord:
    """What is known of the request being served."""

    __slots__ = ("binding", "caller", "method", "outcome", "refused", "span", "version")

    def __init__(self, span: OpenSpan | None) -> None:
        self.span = span
        self.method = ""
        self.binding = ""
        self.version = ""
        self.caller = ""
        self.outcome = "ok"
        self.refused = ""


_record: ContextVar[RequestRecord | None] = ContextVar("a2a_hub_request", default=None)


def note_call(method: str, *, binding: str, version: str) -> None:
    """The request is the A2A call `method` (a 0.3 name is recorded by its 1.0 name)."""
    record = _record.get()
    if record is None:
        return
    record.method = V1_NAMES.get(method, method)
    record.binding = binding
    record.version = version
    span = record.span
    if span is not None:
        span.update_name(record.method)
        span.set_attribute("a2a.method.name", record.method)
        span.set_attribute("a2a.protocol.version", version)
        span.set_attribute("a2a.protocol.binding", binding)


def note_caller(name: str) -> None:
    """The request's credential name (never the credential itself)."""
    record = _record.get()
    if record is not None:
        record.caller = name


def note_error(error: Exception) -> None:
    """The request failed with `error` (answered as an A2A error); a refusal (HTTP 401, 403
    or 429) is counted by its reason too (`note_refusal`)."""
    if isinstance(error, ProtocolError) and error.http_status in _REFUSALS:
        note_refusal(error.reason)
    record = _record.get()
    if record is None:
        return
    record.outcome = type(error).__name__
    if record.span is not None:
        record.span.fail(record.outcome)


def note_refusal(reason: str) -> None:
    """Something was refused for its caller (`reason`: the error's reason, such as
    `RATE_LIMITED` or `BUDGET_EXHAUSTED`): counted once in `/metrics` by reason, and named on
    the request's access line; a refusal inside a running task, outside any request, is
    counted alone."""
    record = _record.get()
    if record is not None:
        if record.refused:
            return  # the request's refusal, counted where it was first seen
        record.refused = reason
    metrics = current_telemetry().metrics
    if metrics is not None:
        metrics.refusal(reason)


def note_result(result: Task | A2AMessage | None, *, message: A2AMessage | None = None) -> None:
    """Put the task (or direct message) a call answered with, and the message it sent, on
    the SERVER span."""
    record = _record.get()
    span = record.span if record is not None else None
    if span is None:
        return
    if message is not None:
        span.set_attribute("a2a.message.id", message.message_id)
        if message.context_id:
            span.set_attribute("gen_ai.conversation.id", message.context_id)
    if isinstance(result, Task):
        span.set_attribute("a2a.task.id", result.id)
        span.set_attribute("a2a.task.state", result.status.state.value)
        if result.context_id:
            span.set_attribute("gen_ai.conversation.id", result.context_id)
    elif isinstance(result, A2AMessage) and result.context_id:
        span.set_attribute("gen_ai.conversation.id", result.context_id)


def observe_requests(
    telemetry: Telemetry, *, quiet: Collection[str] = ()
) -> Callable[[ASGIApp], ASGIApp]:
    """The Litestar middleware that makes `telemetry` current for each request and records
    the request. Requests to the `quiet` paths (probes, scrapes) are logged at DEBUG and
    neither counted nor traced."""
    quiet_paths = frozenset(quiet)
    # Nothing to record: requests only make the telemetry current (for `/status`'s sake).
    idle = telemetry.tracer is None and telemetry.metrics is None and not telemetry.access_log

    def middleware(app: ASGIApp) -> ASGIApp:
        async def observed(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP:
                await app(scope, receive, send)
                return
            with use_telemetry(telemetry):
                quiet_request = scope["path"] in quiet_paths
                if idle or (quiet_request and not telemetry.access_log):
                    await app(scope, receive, send)
                    return
                await _observe(app, telemetry, scope, receive, send, quiet=quiet_request)

        return observed

    return middleware


class _Entry:
    """One request being observed, whatever door it came in through: its record (current
    while it is served), its SERVER span, and at `close` its metrics and access line."""

    __slots__ = (
        "level",
        "logged",
        "path",
        "record",
        "repoint",
        "started",
        "telemetry",
        "trace",
        "verb",
    )

    def __init__(
        self,
        telemetry: Telemetry,
        *,
        verb: str,
        path: str,
        incoming: tuple[str, str, str] | None,
        quiet: bool = False,
    ) -> None:
        self.started = time.perf_counter()
        self.telemetry = telemetry
        self.verb = verb
        self.path = path
        self.level = logging.DEBUG if quiet else logging.INFO
        self.logged = telemetry.access_log and access_log.isEnabledFor(self.level)
        span = None
        self.trace: tuple[str, str, str] | None = None
        """(trace id, span id, flags) the request runs in, when it is recorded or logged:
        its SERVER span, or without one the caller's trace (or a new one)."""
        self.repoint = False
        """Whether the request's call scope must continue `trace` rather than the
        `traceparent` it came with: a span was started, or a new trace begun."""
        if telemetry.tracer is not None and not quiet:
            started_span = _server_span(telemetry, verb, path, incoming)
            self.trace = started_span.ids
            # A span that is not recorded takes nothing: no attributes, no status, no end.
            span = started_span if started_span.is_recording() else None
            self.repoint = True
        elif self.logged:
            if incoming is None:
                fresh = CallScope.new()
                self.trace = (fresh.trace_id, fresh.parent_id, fresh.flags)
                self.repoint = True
            else:
                self.trace = incoming
        self.record = RequestRecord(span)

    @property
    def watched(self) -> bool:
        """Whether the outcome's status is read (for the access line or the span)."""
        return self.logged or self.record.span is not None

    def traceparent(self) -> str | None:
        """The `traceparent` the request's call scope continues instead of its own (its
        SERVER span's, or the new trace it is logged under), or None: its own stands."""
        if self.trace is None or not self.repoint:
            return None
        trace_id, span_id, flags = self.trace
        return f"00-{trace_id}-{span_id}-{flags}"

    def close(self, status: int | str, status_attribute: str, quiet: bool = False) -> None:
        seconds = time.perf_counter() - self.started
        record = self.record
        if record.span is not None:
            record.span.set_attribute(status_attribute, status)
            record.span.end()
        metrics = self.telemetry.metrics
        if metrics is not None and record.method and not quiet:
            metrics.request(
                record.method,
                binding=record.binding,
                version=record.version,
                outcome=record.outcome,
                seconds=seconds,
            )
        if self.logged:
            self._log(status, seconds)

    def _log(self, status: int | str, seconds: float) -> None:
        record = self.record
        trace = self.trace or ("", "", "")
        fields = {
            "trace_id": trace[0],
            "span_id": trace[1],
            "http_method": self.verb,
            "path": self.path,
            "a2a_method": record.method,
            "status": status,
            "duration_ms": round(seconds * 1000, 2),
            "caller": record.caller,
            "outcome": record.outcome,
            "refused": record.refused,
        }
        access_log.log(
            self.level,
            "%s %s %s %s %.1fms caller=%s%s",
            self.verb,
            self.path,
            record.method or "-",
            status,
            seconds * 1000,
            record.caller or "-",
            f" refused={record.refused}" if record.refused else "",
            extra={"access": fields},
        )


@contextmanager
def observe_rpc(
    telemetry: Telemetry, *, path: str, traceparent: str | None
) -> Iterator[RpcObservation]:
    """Record one gRPC call (`path`: `/package.Service/Method`) as an HTTP request is
    recorded: the SERVER span, the request metrics and an access line whose status is the
    gRPC status's name. The handler sets `status` when it fails, and makes the call's record
    and `telemetry` current (`current()`) while it works: not across a stream's events,
    which grpcio may close from another context."""
    entry = _Entry(telemetry, verb="gRPC", path=path, incoming=parse_traceparent(traceparent))
    observation = RpcObservation(entry, telemetry)
    try:
        yield observation
    except BaseException as exc:
        if entry.record.outcome == "ok":
            entry.record.outcome = type(exc).__name__
        if observation.status == "OK":
            observation.status = "CANCELLED" if isinstance(exc, CancelledError) else "UNKNOWN"
        raise
    finally:
        entry.close(observation.status, "rpc.grpc.status_code")


class RpcObservation:
    """What a gRPC handler learns of its call's observation, and tells it."""

    __slots__ = ("_entry", "_telemetry", "status", "traceparent")

    def __init__(self, entry: _Entry, telemetry: Telemetry) -> None:
        self._entry = entry
        self._telemetry = telemetry
        self.traceparent = entry.traceparent()
        """The `traceparent` the call scope continues (None: the call's own metadata's)."""
        self.status = "OK"
        """The gRPC status the call ends with, by name."""

    @contextmanager
    def current(self) -> Iterator[None]:
        """The call's record (which `note_call`, `note_error`… fill in) and the hub's
        telemetry current inside the block."""
        with use_telemetry(self._telemetry):
            token = _record.set(self._entry.record)
            try:
                yield
            finally:
                _record.reset(token)


async def _observe(
    app: ASGIApp,
    telemetry: Telemetry,
    scope: HTTPScope,
    receive: Receive,
    send: Send,
    *,
    quiet: bool,
) -> None:
    path = _requested_path(scope)
    entry = _Entry(
        telemetry, verb=scope["method"], path=path, incoming=_incoming(scope), quiet=quiet
    )
    pointed = entry.traceparent()
    if pointed is not None:
        # The call scope the handler builds from the header continues this span (or the
        # new trace the access line names).
        _point_at(scope, pointed)
    status = 0

    async def send_observed(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    token = _record.set(entry.record)
    try:
        # The status is read only for the access line and the span.
        await app(scope, receive, send_observed if entry.watched else send)
    except Exception as exc:
        entry.record.outcome = type(exc).__name__
        status = status or 500
        raise
    finally:
        _record.reset(token)
        entry.close(status, "http.response.status_code", quiet=quiet)


def _incoming(scope: HTTPScope) -> tuple[str, str, str] | None:
    for name, value in scope["headers"]:
        if name == _TRACEPARENT:
            return parse_traceparent(value.decode("latin-1"))
    return None


def _point_at(scope: HTTPScope, traceparent: str) -> None:
    scope["headers"] = [
        *(header for header in scope["headers"] if header[0] != _TRACEPARENT),
        (_TRACEPARENT, traceparent.encode()),
    ]


def _server_span(
    telemetry: Telemetry, verb: str, path: str, incoming: tuple[str, str, str] | None
) -> OpenSpan:
    """Start the SERVER span as the child of the request's `traceparent`."""
    assert telemetry.tracer is not None
    parent = None
    if incoming is not None:
        trace_id, parent_id, flags = incoming
        parent = CallScope(trace_id=trace_id, parent_id=parent_id, flags=flags)
    return telemetry.tracer.start(
        f"{verb} {path}",
        kind=SpanKind.SERVER,
        parent=parent,
        attributes={"http.request.method": verb, "url.path": path},
    )


def _requested_path(scope: HTTPScope) -> str:
    """The path the client asked for: a mounted app (`/mcp`) is routed with its mount point
    cut from `path` before this middleware runs; `raw_path` keeps it."""
    raw = scope.get("raw_path")
    return raw.decode("latin-1") if raw else scope["path"]
