"""The hub's OTLP encoding says what the SDK's encoder says: spans recorded by the hub's tracer
(attributes of every type, events, failures, remote and local parents, several resources,
limits that drop some) are encoded straight from their records and, as the `ReadableSpan`s
the SDK's processors get, by the SDK's encoder; the hub's bytes parse into the very
`ExportTraceServiceRequest` the SDK builds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource as ResourceMessage
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits

from hub.protocol.trace import CallScope
from hub.telemetry.otel import KeptSpans, OtelTracer, SpanRecord, readable
from hub.telemetry.otlp_encoding import encode_spans
from hub.telemetry.tracing import SpanKind

_INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_SCALARS: list[st.SearchStrategy[Any]] = [
    st.text(max_size=12) | st.sampled_from(["POST", "/", "SendMessage"]) | st.text(min_size=129),
    st.booleans(),
    _INT64 | st.integers(),  # beyond int64 the attribute is dropped, by both encoders
    st.floats(allow_nan=False),
]
_VALUES = st.one_of(*_SCALARS, *(st.lists(scalar, max_size=4).map(tuple) for scalar in _SCALARS))
_ATTRIBUTES = st.dictionaries(st.text(max_size=8), _VALUES, max_size=6)
_HEX_32 = st.integers(min_value=1, max_value=2**128 - 1).map(lambda n: format(n, "032x"))
_HEX_16 = st.integers(min_value=1, max_value=2**64 - 1).map(lambda n: format(n, "016x"))


def _tracers(sink: KeptSpans) -> list[OtelTracer]:
    """Three resources: the hub's kind, one with a schema URL, one whose limits drop."""
    resources = [
        (Resource({"service.name": "a2a-hub", "host.cores": 2}), SpanLimits()),
        (
            Resource(
                {"service.name": "hub-b", "deployment": ("eu", "us")},
                "https://opentelemetry.io/schemas/1.21.0",
            ),
            SpanLimits(),
        ),
        (
            Resource({}),
            SpanLimits(
                max_span_attributes=3,
                max_events=2,
                max_event_attributes=2,
                max_attribute_length=5,
            ),
        ),
    ]
    return [
        OtelTracer(sink, resource=resource, follows_parent=True, bound=2**64, limits=limits)
        for resource, limits in resources
    ]


@dataclass(frozen=True, slots=True)
class _Recorded:
    tracer: int
    name: str
    kind: SpanKind
    parent: CallScope | None
    attributes: dict[str, Any]
    added: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    failed: bool


@st.composite
def _recorded(draw: st.DrawFn) -> _Recorded:
    parent = None
    if draw(st.booleans()):
        parent = CallScope(
            trace_id=draw(_HEX_32), parent_id=draw(_HEX_16), recorded=draw(st.booleans())
        )
    return _Recorded(
        tracer=draw(st.integers(0, 2)),
        name=draw(st.text(max_size=16)),
        kind=draw(st.sampled_from(SpanKind)),
        parent=parent,
        attributes=draw(_ATTRIBUTES),
        added=draw(_ATTRIBUTES),
        events=draw(st.lists(st.tuples(st.text(max_size=8), _ATTRIBUTES), max_size=3)),
        failed=draw(st.booleans()),
    )


def _record(recorded: list[_Recorded]) -> list[SpanRecord]:
    sink = KeptSpans()
    tracers = _tracers(sink)
    for span in recorded:
        started = tracers[span.tracer].start(
            span.name, kind=span.kind, parent=span.parent, attributes=span.attributes
        )
        for key, value in span.added.items():
            started.set_attribute(key, value)
        for name, attributes in span.events:
            started.add_event(name, attributes)
        if span.failed:
            started.fail("ConnectError")
        started.end()
    return sink.spans


def _sdks(spans: list[SpanRecord]) -> ExportTraceServiceRequest:
    return sdk_encode([readable(span) for span in spans])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_recorded(), max_size=6))
def test_the_hub_encoding_parses_into_what_the_sdk_encodes(recorded: list[_Recorded]) -> None:
    spans = _record(recorded)
    assert ExportTraceServiceRequest.FromString(encode_spans(spans)) == _sdks(spans)


def test_a_batch_is_grouped_by_resource_then_scope_in_order_of_first_appearance() -> None:
    sink = KeptSpans()
    first, second, twin = (
        OtelTracer(
            sink,
            resource=Resource({"service.name": name}),
            follows_parent=True,
            bound=2**64,
            limits=SpanLimits(),
        )
        for name in "aba"
    )
    # An equal resource of another tracer shares the group, as in the SDK.
    for tracer in (first, second, twin, first):
        tracer.start("s", kind=SpanKind.INTERNAL, parent=None, attributes={}).end()

    request = ExportTraceServiceRequest.FromString(encode_spans(sink.spans))

    assert request == _sdks(sink.spans)
    assert [
        (_service(group.resource), [(s.scope.name, len(s.spans)) for s in group.scope_spans])
        for group in request.resource_spans
    ] == [("a", [("a2a-hub", 3)]), ("b", [("a2a-hub", 1)])]


def test_a_span_under_a_remote_parent_is_written_whole() -> None:
    sink = KeptSpans()
    tracer = OtelTracer(
        sink,
        resource=Resource({"service.name": "hub"}),
        follows_parent=True,
        bound=2**64,
        limits=SpanLimits(),
    )
    parent = CallScope(trace_id="0af7651916cd43dd8448eb211c80319c", parent_id="b7ad6b7169203331")
    started = tracer.start(
        "POST /",
        kind=SpanKind.SERVER,
        parent=parent,
        attributes={"a2a.method.name": "SendMessage"},
    )
    started.update_name("SendMessage")
    started.set_attribute("http.response.status_code", 200)
    started.add_event("retry", {"attempt": 2})
    started.fail("TimeoutError")
    started.end()
    (span,) = sink.spans

    request = ExportTraceServiceRequest.FromString(encode_spans([span]))

    expected = Span(
        trace_id=bytes.fromhex("0af7651916cd43dd8448eb211c80319c"),
        span_id=span.span_id,
        parent_span_id=bytes.fromhex("b7ad6b7169203331"),
        flags=0x300,
        name="SendMessage",
        kind=Span.SpanKind.SPAN_KIND_SERVER,
        start_time_unix_nano=span.start_time,
        end_time_unix_nano=span.end_time,
        attributes=[
            KeyValue(key="a2a.method.name", value=AnyValue(string_value="SendMessage")),
            KeyValue(key="http.response.status_code", value=AnyValue(int_value=200)),
            KeyValue(key="error.type", value=AnyValue(string_value="TimeoutError")),
        ],
        events=[
            Span.Event(
                time_unix_nano=span.events[0].time,
                name="retry",
                attributes=[KeyValue(key="attempt", value=AnyValue(int_value=2))],
            )
        ],
        status=Status(code=Status.STATUS_CODE_ERROR),
    )
    (group,) = request.resource_spans
    assert group.resource == ResourceMessage(
        attributes=[KeyValue(key="service.name", value=AnyValue(string_value="hub"))]
    )
    (scope_spans,) = group.scope_spans
    assert scope_spans.scope.name == "a2a-hub"
    assert list(scope_spans.spans) == [expected]
    assert request == _sdks([span])


def _service(resource: ResourceMessage) -> str:
    (pair,) = [pair for pair in resource.attributes if pair.key == "service.name"]
    return pair.value.string_value


def test_values_protobuf_cannot_hold_drop_their_attribute_as_in_the_sdk() -> None:
    sink = KeptSpans()
    (tracer, *_) = _tracers(sink)
    started = tracer.start("s", kind=SpanKind.INTERNAL, parent=None, attributes={})
    for key, value in {
        "lone surrogate": "a\ud800",
        "beyond int64": 2**64,
        "an array beyond int64": (1, 2**70),
        "bytes": b"\x00\x01",
        "kept": 1,
    }.items():
        started.set_attribute(key, value)  # type: ignore[arg-type]
    started.end()

    request = ExportTraceServiceRequest.FromString(encode_spans(sink.spans))

    assert request == _sdks(sink.spans)
    (span,) = request.resource_spans[0].scope_spans[0].spans
    assert [pair.key for pair in span.attributes] == ["bytes", "kept"]


def test_an_empty_batch_is_an_empty_request() -> None:
    assert encode_spans([]) == sdk_encode([]).SerializeToString() == b""
