"""The `Tracer` that records spans for the OpenTelemetry SDK's processors, exporting with
OTLP over HTTP (protobuf).

Imported only when tracing is on: the SDK is the optional extra `a2a-hub[otel]`.
Configuration follows the standard environment variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`,
`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_SPAN_*` and `OTEL_*_LIMIT`,
`OTEL_BSP_*`); the `telemetry.traces` settings fill in what the environment leaves unset.

An open span is the hub's own small record, not the SDK's live `Span`: the hub takes the
sampling decision and makes the ids itself, the record collects attributes and events in
plain containers, and `end()` hands one finished SDK `ReadableSpan` to the span processor's
`on_end` (the batch processor in production, a test's processor in tests), with the span
limits applied as the SDK's own span would apply them.
"""

from __future__ import annotations

import os
import random
import time

from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from opentelemetry.sdk.util import BoundedList
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags
from opentelemetry.util.types import Attributes as OtelAttributes

from hub.config import TraceSettings
from hub.errors import ConfigError
from hub.protocol.trace import CallScope
from hub.telemetry.tracing import Attributes, AttributeValue, SpanKind, sampled

__all__ = ["SAMPLERS", "OtelTracer", "build_otel_tracer"]

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


class _Recorded:
    """An open span that is recorded: plain fields until `end()` makes it an SDK
    `ReadableSpan` for the span processor."""

    __slots__ = (
        "_attributes",
        "_end",
        "_events",
        "_kind",
        "_name",
        "_parent",
        "_span_id",
        "_start",
        "_status",
        "_trace_id",
        "_tracer",
        "ids",
    )

    def __init__(
        self,
        tracer: OtelTracer,
        name: str,
        kind: SpanKind,
        trace_id: tuple[int, str],
        parent: SpanContext | None,
        attributes: Attributes,
    ) -> None:
        span_id = _new_id(64)
        self._tracer = tracer
        self._name = name
        self._kind = kind
        self._trace_id = trace_id[0]
        self._span_id = span_id
        self._parent = parent
        self._attributes = dict(attributes)
        self._events: list[Event] = []
        self._status = _UNSET
        self._end = 0
        self.ids = (trace_id[1], format(span_id, "016x"), "01")
        self._start = time.time_ns()

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        if not self._end:
            self._attributes[key] = value

    def add_event(self, name: str, attributes: Attributes | None = None) -> None:
        if not self._end:
            limits = self._tracer.limits
            bounded = _bounded(
                dict(attributes or {}), limits.max_event_attributes, limits.max_attribute_length
            )
            self._events.append(Event(name, bounded))

    def update_name(self, name: str) -> None:
        if not self._end:
            self._name = name

    def is_recording(self) -> bool:
        return not self._end

    def fail(self, error_type: str) -> None:
        if not self._end:
            self._attributes["error.type"] = error_type
            self._status = _ERROR

    def end(self) -> None:
        if self._end:
            return
        self._end = time.time_ns()
        tracer = self._tracer
        limits = tracer.limits
        events: list[Event] | BoundedList[Event] = self._events
        if limits.max_events is not None and len(events) > limits.max_events:
            events = BoundedList.from_seq(limits.max_events, events)
        tracer.processor.on_end(
            ReadableSpan(
                name=self._name,
                context=SpanContext(
                    self._trace_id, self._span_id, is_remote=False, trace_flags=_SAMPLED
                ),
                parent=self._parent,
                resource=tracer.resource,
                attributes=_bounded(
                    self._attributes,
                    limits.max_span_attributes,
                    limits.max_span_attribute_length,
                ),
                events=events,
                kind=_KINDS[self._kind],
                status=self._status,
                start_time=self._start,
                end_time=self._end,
                instrumentation_scope=tracer.scope,
            )
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
    """Records spans with explicit parents (the call scope's) for one span processor.

    The sampler's decision is taken here, before anything is recorded: a span is recorded
    when its trace id passes the trace-id ratio test (`bound`: 0 never, 2**64 always) or,
    under a parent-based sampler (`follows_parent`), when its parent is. A span that is not
    recorded is an `_Unsampled` one (ids only).

    Args:
        processor: receives each ended span (`on_end`) and is shut down with the tracer.
        resource: the resource every span names.
        follows_parent: whether a span with a parent takes the parent's decision.
        bound: the trace-id ratio test's bound, for new traces and, when not
            `follows_parent`, for every span.
        limits: the span limits (attributes and events).
    """

    def __init__(
        self,
        processor: SpanProcessor,
        *,
        resource: Resource,
        follows_parent: bool,
        bound: int,
        limits: SpanLimits,
    ) -> None:
        self.processor = processor
        self.resource = resource
        self.scope = InstrumentationScope("a2a-hub", "")
        self.limits = limits
        self.follows_parent = follows_parent
        self._bound = bound

    def start(
        self, name: str, *, kind: SpanKind, parent: CallScope | None, attributes: Attributes
    ) -> _Recorded | _Unsampled:
        if parent is None:
            number = _new_id(128)
            if number & _LOW_64 >= self._bound:
                return _Unsampled(format(number, "032x"), "00")
            return _Recorded(self, name, kind, (number, format(number, "032x")), None, attributes)
        number = int(parent.trace_id, 16)
        if self.follows_parent:
            if not sampled(parent.flags):
                return _Unsampled(parent.trace_id, parent.flags)
        elif number & _LOW_64 >= self._bound:
            return _Unsampled(parent.trace_id, "00")
        context = SpanContext(
            trace_id=number,
            span_id=int(parent.parent_id, 16),
            is_remote=not parent.recorded,
            trace_flags=TraceFlags(int(parent.flags, 16)),
        )
        return _Recorded(self, name, kind, (number, parent.trace_id), context, attributes)

    def shutdown(self) -> None:
        self.processor.shutdown()


def build_otel_tracer(
    settings: TraceSettings, *, processor: SpanProcessor | None = None
) -> OtelTracer:
    """A tracer exporting with OTLP/HTTP in batches, or through `processor` (tests pass a
    simple processor on an in-memory exporter).

    Raises:
        ConfigError: `OTEL_TRACES_SAMPLER` names a sampler the hub does not have.
    """
    attributes: dict[str, str] = {}
    if settings.service_name:
        attributes[SERVICE_NAME] = settings.service_name
    elif not os.environ.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = "a2a-hub"
    follows_parent, ratio = _sampler(settings.sample_ratio)
    return OtelTracer(
        processor or BatchSpanProcessor(_otlp_exporter(settings)),
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


def _otlp_exporter(settings: TraceSettings) -> SpanExporter:
    from hub.telemetry.otlp_exporter import HubSpanExporter

    return HubSpanExporter(endpoint=settings.endpoint)
