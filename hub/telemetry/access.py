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
from collections.abc import Callable, Collection
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


async def _observe(
    app: ASGIApp,
    telemetry: Telemetry,
    scope: HTTPScope,
    receive: Receive,
    send: Send,
    *,
    quiet: bool,
) -> None:
    started = time.perf_counter()
    level = logging.DEBUG if quiet else logging.INFO
    logged = telemetry.access_log and access_log.isEnabledFor(level)
    span = None
    trace = ("", "")
    if telemetry.tracer is not None and not quiet:
        started_span = _server_span(telemetry, scope)
        trace = started_span.ids[:2]
        # A span that is not recorded takes nothing: no attributes, no status, no end.
        span = started_span if started_span.is_recording() else None
    elif logged:
        trace = _trace_of(scope)
    record = RequestRecord(span)
    status = 0

    async def send_observed(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    token = _record.set(record)
    try:
        # The status is read only for the access line and the span.
        await app(scope, receive, send_observed if logged or span is not None else send)
    except Exception as exc:
        record.outcome = type(exc).__name__
        status = status or 500
        raise
    finally:
        _record.reset(token)
        seconds = time.perf_counter() - started
        if span is not None:
            span.set_attribute("http.response.status_code", status)
            span.end()
        metrics = telemetry.metrics
        if metrics is not None and record.method and not quiet:
            metrics.request(
                record.method,
                binding=record.binding,
                version=record.version,
                outcome=record.outcome,
                seconds=seconds,
            )
        if logged:
            _log(scope, record, status, seconds, trace=trace, level=level)


def _incoming(scope: HTTPScope) -> tuple[str, str, str] | None:
    for name, value in scope["headers"]:
        if name == _TRACEPARENT:
            return parse_traceparent(value.decode("latin-1"))
    return None


def _trace_of(scope: HTTPScope) -> tuple[str, str]:
    """(trace id, parent span id) the request runs in without a span of its own: the
    caller's, or a new trace's, put in the request's `traceparent` so the call scope the
    handler builds from it continues that trace."""
    incoming = _incoming(scope)
    if incoming is not None:
        return incoming[0], incoming[1]
    fresh = CallScope.new()
    _point_at(scope, fresh.traceparent)
    return fresh.trace_id, fresh.parent_id


def _point_at(scope: HTTPScope, traceparent: str) -> None:
    scope["headers"] = [
        *(header for header in scope["headers"] if header[0] != _TRACEPARENT),
        (_TRACEPARENT, traceparent.encode()),
    ]


def _server_span(telemetry: Telemetry, scope: HTTPScope) -> OpenSpan:
    """Start the SERVER span as the child of the request's `traceparent`, and point the
    header at it."""
    assert telemetry.tracer is not None
    incoming = _incoming(scope)
    parent = None
    if incoming is not None:
        trace_id, parent_id, flags = incoming
        parent = CallScope(trace_id=trace_id, parent_id=parent_id, flags=flags)
    path = _requested_path(scope)
    span = telemetry.tracer.start(
        f"{scope['method']} {path}",
        kind=SpanKind.SERVER,
        parent=parent,
        attributes={"http.request.method": scope["method"], "url.path": path},
    )
    trace_id, span_id, flags = span.ids
    _point_at(scope, f"00-{trace_id}-{span_id}-{flags}")
    return span


def _requested_path(scope: HTTPScope) -> str:
    """The path the client asked for: a mounted app (`/mcp`) is routed with its mount point
    cut from `path` before this middleware runs; `raw_path` keeps it."""
    raw = scope.get("raw_path")
    return raw.decode("latin-1") if raw else scope["path"]


def _log(
    scope: HTTPScope,
    record: RequestRecord,
    status: int,
    seconds: float,
    *,
    trace: tuple[str, str],
    level: int,
) -> None:
    path = _requested_path(scope)
    fields = {
        "trace_id": trace[0],
        "span_id": trace[1],
        "http_method": scope["method"],
        "path": path,
        "a2a_method": record.method,
        "status": status,
        "duration_ms": round(seconds * 1000, 2),
        "caller": record.caller,
        "outcome": record.outcome,
        "refused": record.refused,
    }
    access_log.log(
        level,
        "%s %s %s %d %.1fms caller=%s%s",
        scope["method"],
        path,
        record.method or "-",
        status,
        seconds * 1000,
        record.caller or "-",
        f" refused={record.refused}" if record.refused else "",
        extra={"access": fields},
    )
