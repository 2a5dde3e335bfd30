"""The `Tracer` that records spans for the OpenTelemetry SDK's processors, exporting with
OTLP over HTTP (protobuf).

Imported only when tracing is on: the SDK is the optional extra `a2a-hub[otel]`.
Configuration follows the standard environment variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_SPAN_*` and `OTEL_*_LIMIT`,
`OTEL_BSP_*`); the `telemetry.traces` settings fill in what the environment leaves unset.

An open span is the hub's own small record (`SpanRecord`), not the SDK's live `Span`: the
hub takes the sampling decision and makes the ids itself, the record collects attributes and
events in plain containers, and `end()` hands the record to the tracer's sink. In production
that is `SpanBatches` (`otlp_exporter.py`), which writes each record's OTLP bytes as it ends
and sends them in batches; an SDK span processor (a test's in-memory exporter) gets each as
the `ReadableSpan` the SDK's own span would have made (`ProcessorSink`), with the span
limits applied the same way.
"""

from __future__ import annotations

import os
import random
import time
from typing import NamedTuple, Protocol

from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, SpanProcessor
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags
from opentelemetry.util.types import Attributes as OtelAttributes

from hub.config import TraceSettings
from hub.errors import ConfigError
from hub.protocol.trace import CallScope
from hub.telemetry.tracing import Attributes, AttributeValue, SpanKind, sampled

__all__ = [
    "SAMPLERS",
    "KeptSpans",
    "OtelTracer",
    "ProcessorSink",
    "SpanEvent",
    "SpanRecord",
    "SpanSink",
    "build_otel_tracer",
    "dropped_attributes",
    "readable",
]

_KINDS = {
    SpanKind.SERVER: trace.SpanKind.SERVER,
    SpanKind.CLIENT: trace.SpanKind.CLIENT,
    SpanKind.INTERNAL: trace.SpanKind.INTERNAL,
}
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_UNSET = Status(StatusCode.UNSET)
_ERROR = Status(StatusCode.ERROR)
_LOW_64 = TraceIdRatioBased.TRACE_ID_LIMIT

SAMPLERS = (
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
)
"""The values of `OTEL_TRACES_SAMPLER` the hub reads (the SDK's own samplers)."""


class SpanRecord:
    """A span that is recorded: plain fields, handed whole to the tracer's sink at `end()`.

    Ids are kept as the bytes OTLP carries (16 for the trace, 8 for a span), and `ids` as the
    hex the `traceparent` carries; nothing of the SDK is built while the span is open.
    """

    __slots__ = (
        "attributes",
        "end_time",
        "error",
        "events",
        "ids",
        "kind",
        "name",
        "parent_id",
        "parent_remote",
        "span_id",
        "start_time",
        "trace_id",
        "tracer",
    )

    def __init__(
        self,
        tracer: OtelTracer,
        name: str,
        kind: SpanKind,
        trace_id: tuple[bytes, str],
        parent: tuple[bytes, bool] | None,
        attributes: Attributes,
    ) -> None:
        span_id = _new_id(64)
        self.tracer = tracer
        self.name = name
        self.kind = kind
        self.trace_id = trace_id[0]
        self.span_id = span_id.to_bytes(8)
        self.parent_id: bytes | None = None
        self.parent_remote = False
        if parent is not None:
            self.parent_id, self.parent_remote = parent
        self.attributes: dict[str, AttributeValue] = dict(attributes)
        self.events: list[SpanEvent] = []
        self.error = False
        self.end_time = 0
        self.ids = (trace_id[1], format(span_id, "016x"), "01")
        self.start_time = time.time_ns()

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        if not self.end_time:
            self.attributes[key] = value

    def add_event(self, name: str, attributes: Attributes | None = None) -> None:
        if not self.end_time:
            limits = self.tracer.limits
            bounded = _bounded(
                dict(attributes or {}), limits.max_event_attributes, limits.max_attribute_length
            )
            self.events.append(SpanEvent(name, time.time_ns(), bounded))

    def update_name(self, name: str) -> None:
        if not self.end_time:
            self.name = name

    def is_recording(self) -> bool:
        return not self.end_time

    def fail(self, error_type: str) -> None:
        if not self.end_time:
            self.attributes["error.type"] = error_type
            self.error = True

    def end(self) -> None:
        if self.end_time:
            return
        self.end_time = time.time_ns()
        self.tracer.sink.on_end(self)

    def limited(self) -> tuple[OtelAttributes, int, list[SpanEvent], int]:
        """The attributes and events as the span limits keep them: (attributes, how many
        were dropped, events, how many were dropped); the SDK's own span keeps the same."""
        limits = self.tracer.limits
        attributes = _bounded(
            self.attributes, limits.max_span_attributes, limits.max_span_attribute_length
        )
        dropped = dropped_attributes(attributes)
        events = self.events
        dropped_events = 0
        if limits.max_events is not None and len(events) > limits.max_events:
            dropped_events = len(events) - limits.max_events
            events = events[dropped_events:]
        return attributes, dropped, events, dropped_events


def dropped_attributes(attributes: OtelAttributes) -> int:
    """How many attributes the limits dropped from `attributes` (as `_bounded` left them)."""
    return attributes.dropped if isinstance(attributes, BoundedAttributes) else 0


class SpanEvent(NamedTuple):
    """An event of a recorded span, its attributes within the event limits."""

    name: str
    time: int
    attributes: OtelAttributes


class SpanSink(Protocol):
    """Where a tracer's ended spans go."""

    def on_end(self, span: SpanRecord) -> None: ...

    def force_flush(self, timeout_millis: int = 30000) -> bool: ...

    def shutdown(self) -> None: ...


class KeptSpans:
    """A span sink that keeps every ended span in `spans`, for a program (a test, a
    benchmark) that reads its own spans."""

    def __init__(self) -> None:
        self.spans: list[SpanRecord] = []

    def on_end(self, span: SpanRecord) -> None:
        self.spans.append(span)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def shutdown(self) -> None:
        return None


class ProcessorSink:
    """Ended spans as the SDK's `ReadableSpan`s, for an SDK span processor (a test's
    in-memory exporter, or one an embedding application brings)."""

    def __init__(self, processor: SpanProcessor) -> None:
        self.processor = processor

    def on_end(self, span: SpanRecord) -> None:
        self.processor.on_end(readable(span))

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.processor.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.processor.shutdown()


def readable(span: SpanRecord) -> ReadableSpan:
    """The SDK's `ReadableSpan` of an ended span."""
    attributes, _, events, dropped_events = span.limited()
    tracer = span.tracer
    parent = None
    if span.parent_id is not None:
        parent = SpanContext(
            int.from_bytes(span.trace_id),
            int.from_bytes(span.parent_id),
            is_remote=span.parent_remote,
            trace_flags=_SAMPLED,
        )
    # With events over the limit, a bounded list of them all: it keeps the latest and counts
    # the others, as the SDK's span does.
    sdk_events: list[Event] | BoundedList[Event] = [
        Event(event.name, event.attributes, event.time)
        for event in (span.events if dropped_events else events)
    ]
    if dropped_events:
        sdk_events = BoundedList.from_seq(len(events), sdk_events)
    return ReadableSpan(
        name=span.name,
        context=SpanContext(
            int.from_bytes(span.trace_id),
            int.from_bytes(span.span_id),
            is_remote=False,
            trace_flags=_SAMPLED,
        ),
        parent=parent,
        resource=tracer.resource,
        attributes=attributes,
        events=sdk_events,
        kind=_KINDS[span.kind],
        status=_ERROR if span.error else _UNSET,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=tracer.scope,
    )


def _bounded(
    attributes: dict[str, AttributeValue], count: int | None, length: int | None
) -> OtelAttributes:
    """The attributes as the SDK's span keeps them under its limits: the latest `count`
    (the dropped ones counted), strings cut to `length`. Within the limits, as they are."""
    if length is None and (count is None or len(attributes) <= count):
        return attributes
    return BoundedAttributes(count, attributes, immutable=True, max_value_len=length)


class _Unsampled:
    """A span of a trace that is not recorded: only its ids, for the `traceparent`."""

    __slots__ = ("ids",)

    def __init__(self, trace_id: str, flags: str) -> None:
        self.ids = (trace_id, format(_new_id(64), "016x"), flags)

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


def _new_id(bits: int) -> int:
    """A random non-zero id (a W3C trace or span id)."""
    return random.getrandbits(bits) or 1


class OtelTracer:
    """Records spans with explicit parents (the call scope's) for one span sink.

    The sampler's decision is taken here, before anything is recorded: a span is recorded
    when its trace id passes the trace-id ratio test (`bound`: 0 never, 2**64 always) or,
    under a parent-based sampler (`follows_parent`), when its parent is. A span that is not
    recorded is an `_Unsampled` one (ids only).

    Args:
        sink: receives each ended span (`on_end`) and is shut down with the tracer.
        resource: the resource every span names.
        follows_parent: whether a span with a parent takes the parent's decision.
        bound: the trace-id ratio test's bound, for new traces and, when not
            `follows_parent`, for every span.
        limits: the span limits (attributes and events).
    """

    def __init__(
        self,
        sink: SpanSink,
        *,
        resource: Resource,
        follows_parent: bool,
        bound: int,
        limits: SpanLimits,
    ) -> None:
        self.sink = sink
        self.resource = resource
        self.scope = InstrumentationScope("a2a-hub", "")
        self.limits = limits
        self.follows_parent = follows_parent
        self._bound = bound

    def start(
        self, name: str, *, kind: SpanKind, parent: CallScope | None, attributes: Attributes
    ) -> SpanRecord | _Unsampled:
        if parent is None:
            number = _new_id(128)
            if number & _LOW_64 >= self._bound:
                return _Unsampled(format(number, "032x"), "00")
            trace_id = number.to_bytes(16)
            return SpanRecord(self, name, kind, (trace_id, trace_id.hex()), None, attributes)
        if self.follows_parent:
            if not sampled(parent.flags):
                return _Unsampled(parent.trace_id, parent.flags)
            trace_id = bytes.fromhex(parent.trace_id)
        else:
            trace_id = bytes.fromhex(parent.trace_id)
            if int.from_bytes(trace_id[8:]) >= self._bound:
                return _Unsampled(parent.trace_id, "00")
        return SpanRecord(
            self,
            name,
            kind,
            (trace_id, parent.trace_id),
            (bytes.fromhex(parent.parent_id), not parent.recorded),
            attributes,
        )

    def shutdown(self) -> None:
        self.sink.shutdown()


def build_otel_tracer(
    settings: TraceSettings, *, processor: SpanProcessor | SpanSink | None = None
) -> OtelTracer:
    """A tracer exporting with OTLP/HTTP in batches, or through `processor`: an SDK span
    processor (tests pass a simple processor on an in-memory exporter), which is handed
    `ReadableSpan`s, or a `SpanSink` of the hub's, handed the records.

    Raises:
        ConfigError: `OTEL_TRACES_SAMPLER` names a sampler the hub does not have.
    """
    attributes: dict[str, str] = {}
    if settings.service_name:
        attributes[SERVICE_NAME] = settings.service_name
    elif not os.environ.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = "a2a-hub"
    follows_parent, ratio = _sampler(settings.sample_ratio)
    sink: SpanSink
    if processor is None:
        sink = _otlp_batches(settings)
    elif isinstance(processor, SpanProcessor):
        sink = ProcessorSink(processor)
    else:
        sink = processor
    return OtelTracer(
        sink,
        resource=Resource.create(attributes),
        follows_parent=follows_parent,
        bound=TraceIdRatioBased.get_bound_for_rate(ratio),
        limits=SpanLimits(),
    )


def _sampler(default: float) -> tuple[bool, float]:
    """The sampler `OTEL_TRACES_SAMPLER` names, as (whether it follows a parent's decision,
    the ratio of trace ids it records): `parentbased_traceidratio` at the settings' ratio
    when unset; a ratio sampler's argument as the SDK reads it (a rate in [0, 1], 1.0 when
    missing or unreadable)."""
    configured = os.environ.get("OTEL_TRACES_SAMPLER", "").strip().lower()
    if not configured:
        return True, default
    if configured not in SAMPLERS:
        raise ConfigError(
            f"OTEL_TRACES_SAMPLER={os.environ['OTEL_TRACES_SAMPLER']!r}: the hub samples "
            f"traces with one of {', '.join(SAMPLERS)}; set it to one of them or unset it"
        )
    own = configured.removeprefix("parentbased_")
    if own == "always_on":
        ratio = 1.0
    elif own == "always_off":
        ratio = 0.0
    else:
        try:
            ratio = float(os.environ.get("OTEL_TRACES_SAMPLER_ARG", ""))
        except ValueError:
            ratio = 1.0
        if not 0.0 <= ratio <= 1.0:
            ratio = 1.0
    return configured != own, ratio


def _otlp_batches(settings: TraceSettings) -> SpanSink:
    from hub.telemetry.otlp_exporter import HubSpanExporter, otlp_sink

    return otlp_sink(HubSpanExporter(endpoint=settings.endpoint))
