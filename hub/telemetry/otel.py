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
import random
import threading

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
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
        self.ids = (trace_id, format(random.getrandbits(64) or 1, "016x"), flags)

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


class _ChosenTraceIds(RandomIdGenerator):
    """Random ids, except that the next trace id a thread asks for may be chosen beforehand
    (the one a root span's sampling decision was already taken on)."""

    def __init__(self) -> None:
        self._next = threading.local()

    def choose(self, trace_id: int) -> None:
        self._next.trace_id = trace_id

    def generate_trace_id(self) -> int:
        chosen: int = getattr(self._next, "trace_id", 0)
        if not chosen:
            return super().generate_trace_id()
        self._next.trace_id = 0
        return chosen


_LOW_64 = TraceIdRatioBased.TRACE_ID_LIMIT


class OtelTracer:
    """Starts SDK spans with explicit parents (the call scope's) and owns the provider.

    A trace that will not be recorded costs no SDK work: under a parent-based sampler a span
    below an unrecorded parent, and under a trace-id ratio sampler (`root_bound`, the
    sampler's bound) a new trace whose id falls outside the ratio, is an `_Unsampled` span
    (ids only). The root decision is the sampler's own test on the same trace id, which the
    SDK then uses for the span it records.

    Args:
        provider: the tracer provider (its processors export the spans).
    """

    def __init__(
        self,
        provider: TracerProvider,
        *,
        parent_based: bool = True,
        root_bound: int | None = None,
        ids: _ChosenTraceIds | None = None,
    ) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer("a2a-hub")
        self.follows_parent = parent_based
        self._root_bound = root_bound
        self._ids = ids

    def start(
        self, name: str, *, kind: SpanKind, parent: CallScope | None, attributes: Attributes
    ) -> _OtelSpan | _Unsampled:
        context = None
        if parent is not None:
            if self.follows_parent and not sampled(parent.flags):
                # The sampler would follow the parent's decision: skip the SDK's work.
                return _Unsampled(parent.trace_id, parent.flags)
            remote = SpanContext(
                trace_id=int(parent.trace_id, 16),
                span_id=int(parent.parent_id, 16),
                is_remote=not parent.recorded,
                trace_flags=TraceFlags(int(parent.flags, 16)),
            )
            context = trace.set_span_in_context(NonRecordingSpan(remote))
        elif self._root_bound is not None and self._ids is not None:
            trace_id = self._ids.generate_trace_id()
            if trace_id & _LOW_64 >= self._root_bound:
                return _Unsampled(format(trace_id, "032x"), "00")
            self._ids.choose(trace_id)
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
    configured = os.environ.get("OTEL_TRACES_SAMPLER", "").strip().lower()
    ratio = _ratio_sampled(configured, settings.sample_ratio)
    sampler: Sampler | None = None
    if ratio is not None:
        sampler = TraceIdRatioBased(ratio)
        if configured != "traceidratio":
            sampler = ParentBased(sampler)
    ids = _ChosenTraceIds()
    provider = TracerProvider(
        resource=Resource.create(attributes), sampler=sampler, id_generator=ids
    )
    provider.add_span_processor(processor or BatchSpanProcessor(_otlp_exporter(settings)))
    return OtelTracer(
        provider,
        parent_based=not configured or configured.startswith("parentbased"),
        root_bound=None if ratio is None else TraceIdRatioBased.get_bound_for_rate(ratio),
        ids=ids,
    )


def _ratio_sampled(configured: str, default: float) -> float | None:
    """The trace-id ratio new traces are sampled at, when the sampler is one (the settings'
    ratio unless `OTEL_TRACES_SAMPLER` names a ratio sampler; its argument as the SDK reads
    it: a rate in [0, 1], 1.0 when missing or unreadable). None: another sampler, which the
    SDK builds from the environment itself."""
    if not configured:
        return default
    if configured not in ("traceidratio", "parentbased_traceidratio"):
        return None
    try:
        rate = float(os.environ.get("OTEL_TRACES_SAMPLER_ARG", ""))
    except ValueError:
        return 1.0
    return rate if 0.0 <= rate <= 1.0 else 1.0


def _otlp_exporter(settings: TraceSettings) -> SpanExporter:
    from hub.telemetry.otlp_exporter import HubSpanExporter

    return HubSpanExporter(endpoint=settings.endpoint)
