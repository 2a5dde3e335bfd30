"""The spans the hub records are those the SDK's own live span would hand its processors:
the same fields, and the span limits of the `OTEL_*_LIMIT` variables applied the same way."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

from hub.config import TraceSettings
from hub.protocol.trace import CallScope
from hub.telemetry.otel import build_otel_tracer
from hub.telemetry.tracing import SpanHandle, SpanKind

PARENT = CallScope(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", parent_id="00f067aa0ba902b7")
ATTRIBUTES = {"a2a.method.name": "SendMessage", "retries": 2, "streaming": False, "share": 0.5}
EVENTS: list[tuple[str, dict[str, str | int] | None]] = [
    ("retry", {"attempt": 1, "reason": "connect timeout", "after_ms": 200}),
    ("breaker", {"state": "open"}),
    ("gave up", None),
]


def _record(span: SpanHandle) -> None:
    """What instrumented code does with a span, on the hub's span or the SDK's."""
    span.update_name("SendMessage")
    span.set_attribute("a2a.task.id", "a-rather-long-task-id")
    for name, attributes in EVENTS:
        span.add_event(name, attributes)


def _hubs(exporter: InMemorySpanExporter) -> ReadableSpan:
    tracer = build_otel_tracer(
        TraceSettings(service_name="hub"), processor=SimpleSpanProcessor(exporter)
    )
    opened = tracer.start("GET /", kind=SpanKind.CLIENT, parent=PARENT, attributes=ATTRIBUTES)
    _record(opened)
    opened.fail("ConnectError")
    opened.end()
    opened.set_attribute("after.end", "ignored")
    (span,) = exporter.get_finished_spans()
    return span


def _sdks(exporter: InMemorySpanExporter, recorded: ReadableSpan) -> ReadableSpan:
    provider = TracerProvider(resource=recorded.resource)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    parent = SpanContext(
        trace_id=int(PARENT.trace_id, 16),
        span_id=int(PARENT.parent_id, 16),
        is_remote=True,
        trace_flags=TraceFlags(1),
    )
    started = provider.get_tracer("a2a-hub").start_span(
        "GET /",
        context=trace.set_span_in_context(NonRecordingSpan(parent)),
        kind=trace.SpanKind.CLIENT,
        attributes=ATTRIBUTES,
    )
    _record(started)
    started.set_attribute("error.type", "ConnectError")
    started.set_status(Status(StatusCode.ERROR))
    started.end()
    return exporter.get_finished_spans()[-1]


def _fields(span: ReadableSpan) -> dict[str, object]:
    assert span.context is not None
    assert span.parent is not None
    return {
        "name": span.name,
        "kind": span.kind,
        "trace": span.context.trace_id,
        "flags": span.context.trace_flags,
        "remote": span.context.is_remote,
        "parent": (span.parent.span_id, span.parent.is_remote),
        "attributes": dict(span.attributes or {}),
        "dropped_attributes": span.dropped_attributes,
        "events": [(e.name, dict(e.attributes or {}), e.dropped_attributes) for e in span.events],
        "dropped_events": span.dropped_events,
        "status": (span.status.status_code, span.status.description),
        "resource": span.resource.attributes,
        "scope": span.instrumentation_scope,
    }


@pytest.mark.parametrize(
    "limits",
    [
        {},
        {
            "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT": "3",
            "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "6",
            "OTEL_SPAN_EVENT_COUNT_LIMIT": "2",
            "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT": "2",
            "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "4",
        },
    ],
    ids=["default limits", "tight limits"],
)
def test_a_recorded_span_is_the_one_the_sdks_span_would_have_recorded(
    limits: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in limits.items():
        monkeypatch.setenv(name, value)
    exporter = InMemorySpanExporter()
    recorded = _hubs(exporter)
    expected = _sdks(exporter, recorded)

    assert _fields(recorded) == _fields(expected)
    assert recorded.context is not None
    assert expected.context is not None
    assert recorded.context.span_id != expected.context.span_id
    assert recorded.start_time is not None
    assert recorded.end_time is not None
    assert 0 < recorded.start_time <= recorded.end_time
    assert recorded.resource == Resource.create({"service.name": "hub"})
    if limits:
        assert recorded.dropped_attributes > 0
        assert recorded.dropped_events > 0
