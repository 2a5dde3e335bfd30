"""The `Tracer` on the OpenTelemetry SDK, exporting with OTLP over HTTP (protobuf).

Imported only when tracing is on: the SDK is the optional extra `a2a-hub[otel]`.
Configuration follows the standard environment variables, which the SDK reads itself
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`); the `telemetry.traces` settings fill in what the
environment leaves unset.
"""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased, Sampler, TraceIdRatioBased
from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

from hub.config import TraceSettings
from hub.protocol.trace import CallScope
from hub.telemetry.tracing import Attributes, AttributeValue, SpanKind, sampled

__all__ = ["OtelTracer", "build_otel_tracer"]

_KINDS = {
    SpanKind.SERVER: trace.SpanKind.SERVER,
    SpanKind.CLIENT: trace.SpanKind.CLIENT,
    SpanKind.INTERNAL: trace.SpanKind.INTERNAL,
}


class _OtelSpan:
    """An SDK span seen through the hub's `OpenSpan` protocol."""

    __slots__ = ("_ids", "_span")

    def __init__(self, span: trace.Span) -> None:
        self._span = span
        self._ids: tuple[str, str, str] | None = None

    @property
    def ids(self) -> tuple[str, str, str]:
        if self._ids is None:
            context = self._span.get_span_context()
            self._ids = (
                format(context.trace_id, "032x"),
                format(context.span_id, "016x"),
                format(context.trace_flags, "02x"),
            )
        return self._ids

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self._span.set_attribute(key, value)

    def add_event(self, name: str, attributes: Attributes | None = None) -> None:
        self._span.add_event(name, dict(attributes or {}))

    def update_name(self, name: str) -> None:
        self._span.update_name(name)

    def is_recording(self) -> bool:
        return self._span.is_recording()

    def fail(self, error_type: str) -> None:
        self._span.set_attribute("error.type", error_type)
        self._span.set_status(Status(StatusCode.ERROR))

    def end(self) -> None:
        self._span.end()


class _Unsampled:
    """A span of a trace that is not recorded: only its ids, for the `traceparent`."""

    __slots__ = ("ids",)

    def __init__(self, trace_id: str, flags: str) -> None:
        self.ids = (trace_id, os.urandom(8).hex(), flags)

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        return None

    def add_event(self, name: str, attributes: Attributes | None = None) -> None:
        return None

    def update_name(self, name: str) -> None:
        return None

    def is_recording(self) -> bool:
        return False

    def fail(self, error_type: str) -> None:
        return None

    def end(self) -> None:
        return None


class OtelTracer:
    """Starts SDK spans with explicit parents (the call scope's) and owns the provider.

    Args:
        provider: the tracer provider (its processors export the spans).
    """

    def __init__(self, provider: TracerProvider, *, parent_based: bool = True) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer("a2a-hub")
        self._parent_based = parent_based

    def start(
        self, name: str, *, kind: SpanKind, parent: CallScope | None, attributes: Attributes
    ) -> _OtelSpan | _Unsampled:
        context = None
        if parent is not None:
            if self._parent_based and not sampled(parent.flags):
                # The sampler would follow the parent's decision: skip the SDK's work.
                return _Unsampled(parent.trace_id, parent.flags)
            remote = SpanContext(
                trace_id=int(parent.trace_id, 16),
                span_id=int(parent.parent_id, 16),
                is_remote=not parent.recorded,
                trace_flags=TraceFlags(int(parent.flags, 16)),
            )
            context = trace.set_span_in_context(NonRecordingSpan(remote))
        started = self._tracer.start_span(
            name, context=context, kind=_KINDS[kind], attributes=dict(attributes)
        )
        return _OtelSpan(started)

    def shutdown(self) -> None:
        self.provider.shutdown()


def build_otel_tracer(
    settings: TraceSettings, *, processor: SpanProcessor | None = None
) -> OtelTracer:
    """A tracer exporting with OTLP/HTTP in batches, or through `processor` (tests pass a
    simple processor on an in-memory exporter)."""
    attributes: dict[str, str] = {}
    if settings.service_name:
        attributes[SERVICE_NAME] = settings.service_name
    elif not os.environ.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = "a2a-hub"
    sampler: Sampler | None = None
    configured = os.environ.get("OTEL_TRACES_SAMPLER", "").strip().lower()
    if not configured:
        sampler = ParentBased(TraceIdRatioBased(settings.sample_ratio))
    provider = TracerProvider(resource=Resource.create(attributes), sampler=sampler)
    provider.add_span_processor(processor or BatchSpanProcessor(_otlp_exporter(settings)))
    return OtelTracer(provider, parent_based=not configured or configured.startswith("parentbased"))


def _otlp_exporter(settings: TraceSettings) -> SpanExporter:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=settings.endpoint)
