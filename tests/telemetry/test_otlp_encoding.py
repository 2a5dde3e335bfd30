"""The hub's OTLP encoding says what the SDK's encoder says: spans recorded by the real SDK
(attributes of every type, events, links, statuses, remote and local parents, several
resources and scopes, limits that drop some) are encoded both ways, and the hub's bytes parse
into the very `ExportTraceServiceRequest` the SDK builds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource as ResourceMessage
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, StatusCode, TraceFlags
from opentelemetry.trace.span import TraceState

from hub.telemetry.otlp_encoding import encode_spans

_INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_SCALARS: list[st.SearchStrategy[Any]] = [
    st.text(max_size=12) | st.sampled_from(["POST", "/", "SendMessage"]) | st.text(min_size=129),
    st.booleans(),
    _INT64 | st.integers(),  # beyond int64 the attribute is dropped, by both encoders
    st.floats(allow_nan=False),
]
_VALUES = st.one_of(*_SCALARS, *(st.lists(scalar, max_size=4).map(tuple) for scalar in _SCALARS))
_ATTRIBUTES = st.dictionaries(st.text(max_size=8), _VALUES, max_size=6)
_IDS_128 = st.integers(min_value=1, max_value=2**128 - 1)
_IDS_64 = st.integers(min_value=1, max_value=2**64 - 1)
_TIMES = st.integers(min_value=1, max_value=2**64 - 1)
_STATES = st.dictionaries(
    st.sampled_from(["vendor", "rojo", "congo@t61"]), st.sampled_from(["00f067aa", "t61rcWkgMzE"])
).map(lambda pairs: TraceState(list(pairs.items())))


@st.composite
def _contexts(draw: st.DrawFn) -> SpanContext:
    return SpanContext(
        trace_id=draw(_IDS_128),
        span_id=draw(_IDS_64),
        is_remote=draw(st.booleans()),
        trace_flags=TraceFlags(draw(st.sampled_from([0, 1]))),
        trace_state=draw(_STATES),
    )


@dataclass(frozen=True, slots=True)
class _Recorded:
    provider: int
    scope: int
    name: str
    kind: trace.SpanKind
    parent: SpanContext | None
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any], int]]
    links: list[Link]
    status: tuple[StatusCode, str | None]
    times: tuple[int, int]


@st.composite
def _recorded(draw: st.DrawFn) -> _Recorded:
    code = draw(st.sampled_from(StatusCode))
    start = draw(_TIMES)
    return _Recorded(
        provider=draw(st.integers(0, 2)),
        scope=draw(st.integers(0, 2)),
        name=draw(st.text(max_size=16)),
        kind=draw(st.sampled_from(trace.SpanKind)),
        parent=draw(st.none() | _contexts()),
        attributes=draw(_ATTRIBUTES),
        events=draw(st.lists(st.tuples(st.text(max_size=8), _ATTRIBUTES, _TIMES), max_size=3)),
        links=draw(st.lists(st.builds(Link, _contexts(), _ATTRIBUTES), max_size=3)),
        status=(code, draw(st.none() | st.text(max_size=8)) if code is StatusCode.ERROR else None),
        times=(start, draw(st.integers(min_value=start, max_value=2**64 - 1))),
    )


def _providers(exporter: InMemorySpanExporter) -> list[TracerProvider]:
    """Three resources: the hub's kind, one with a schema URL, one whose limits drop."""
    providers = [
        TracerProvider(resource=Resource({"service.name": "a2a-hub", "host.cores": 2})),
        TracerProvider(
            resource=Resource(
                {"service.name": "hub-b", "deployment": ("eu", "us")},
                "https://opentelemetry.io/schemas/1.21.0",
            )
        ),
        TracerProvider(
            resource=Resource({}),
            span_limits=SpanLimits(
                max_span_attributes=3,
                max_events=2,
                max_links=1,
                max_event_attributes=2,
                max_link_attributes=2,
                max_attribute_length=5,
            ),
        ),
    ]
    for provider in providers:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return providers


_SCOPES: list[dict[str, Any]] = [
    {"instrumenting_module_name": "a2a-hub"},
    {"instrumenting_module_name": "a2a-hub.gateway", "instrumenting_library_version": "1.2"},
    {
        "instrumenting_module_name": "other",
        "instrumenting_library_version": "0.1",
        "schema_url": "https://opentelemetry.io/schemas/1.24.0",
        "attributes": {"scope.kind": "test", "scope.ids": (1, 2)},
    },
]


def _record(recorded: list[_Recorded]) -> tuple[ReadableSpan, ...]:
    exporter = InMemorySpanExporter()
    providers = _providers(exporter)
    for span in recorded:
        tracer = providers[span.provider].get_tracer(**_SCOPES[span.scope])
        context = None
        if span.parent is not None:
            context = trace.set_span_in_context(NonRecordingSpan(span.parent))
        started = tracer.start_span(
            span.name,
            context=context,
            kind=span.kind,
            attributes=span.attributes,
            links=span.links,
            start_time=span.times[0],
        )
        for name, attributes, timestamp in span.events:
            started.add_event(name, attributes, timestamp)
        started.set_status(*span.status)
        started.end(end_time=span.times[1])
    return exporter.get_finished_spans()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_recorded(), max_size=6))
def test_the_hub_encoding_parses_into_what_the_sdk_encodes(recorded: list[_Recorded]) -> None:
    spans = _record(recorded)
    assert ExportTraceServiceRequest.FromString(encode_spans(spans)) == sdk_encode(spans)


def test_a_batch_is_grouped_by_resource_then_scope_in_order_of_first_appearance() -> None:
    first, second = (TracerProvider(resource=Resource({"service.name": n})) for n in "ab")
    exporter = InMemorySpanExporter()
    for provider in (first, second):
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    # An equal resource of another provider shares the group, as in the SDK.
    twin = TracerProvider(resource=Resource({"service.name": "a"}))
    twin.add_span_processor(SimpleSpanProcessor(exporter))
    for provider, scope in [(first, "x"), (second, "x"), (twin, "y"), (first, "x")]:
        provider.get_tracer(scope).start_span("s", start_time=1).end(end_time=2)
    spans = exporter.get_finished_spans()

    request = ExportTraceServiceRequest.FromString(encode_spans(spans))

    assert request == sdk_encode(spans)
    assert [
        (_service(group.resource), [(s.scope.name, len(s.spans)) for s in group.scope_spans])
        for group in request.resource_spans
    ] == [("a", [("x", 2), ("y", 1)]), ("b", [("x", 1)])]


def test_a_span_under_a_remote_parent_is_written_whole() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "hub"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    parent = SpanContext(
        trace_id=0x0AF7651916CD43DD8448EB211C80319C,
        span_id=0xB7AD6B7169203331,
        is_remote=True,
        trace_flags=TraceFlags(1),
        trace_state=TraceState([("vendor", "v1")]),
    )
    started = provider.get_tracer("a2a-hub").start_span(
        "SendMessage",
        context=trace.set_span_in_context(NonRecordingSpan(parent)),
        kind=trace.SpanKind.SERVER,
        attributes={"a2a.method.name": "SendMessage", "http.response.status_code": 200},
        start_time=10,
    )
    started.add_event("retry", {"attempt": 2}, timestamp=11)
    started.set_status(StatusCode.ERROR, "partner timed out")
    started.end(end_time=12)
    (span,) = exporter.get_finished_spans()
    context = span.get_span_context()
    assert context is not None

    request = ExportTraceServiceRequest.FromString(encode_spans([span]))

    expected = Span(
        trace_id=bytes.fromhex("0af7651916cd43dd8448eb211c80319c"),
        span_id=context.span_id.to_bytes(8, "big"),
        trace_state="vendor=v1",
        parent_span_id=bytes.fromhex("b7ad6b7169203331"),
        flags=0x300,
        name="SendMessage",
        kind=Span.SpanKind.SPAN_KIND_SERVER,
        start_time_unix_nano=10,
        end_time_unix_nano=12,
        attributes=[
            KeyValue(key="a2a.method.name", value=AnyValue(string_value="SendMessage")),
            KeyValue(key="http.response.status_code", value=AnyValue(int_value=200)),
        ],
        events=[
            Span.Event(
                time_unix_nano=11,
                name="retry",
                attributes=[KeyValue(key="attempt", value=AnyValue(int_value=2))],
            )
        ],
        status=Status(code=Status.STATUS_CODE_ERROR, message="partner timed out"),
    )
    scope = sdk_encode([span]).resource_spans[0].scope_spans[0].scope
    assert request == ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=ResourceMessage(
                    attributes=[KeyValue(key="service.name", value=AnyValue(string_value="hub"))]
                ),
                scope_spans=[ScopeSpans(scope=scope, spans=[expected])],
            )
        ]
    )


def _service(resource: ResourceMessage) -> str:
    (pair,) = [pair for pair in resource.attributes if pair.key == "service.name"]
    return pair.value.string_value


def test_values_protobuf_cannot_hold_drop_their_attribute_as_in_the_sdk() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    attributes = {
        "lone surrogate": "a\ud800",
        "beyond int64": 2**64,
        "an array beyond int64": (1, 2**70),
        "bytes": b"\x00\x01",
        "kept": 1,
    }
    provider.get_tracer("a2a-hub").start_span("s", attributes=attributes).end()
    spans = exporter.get_finished_spans()

    request = ExportTraceServiceRequest.FromString(encode_spans(spans))

    assert request == sdk_encode(spans)
    (span,) = request.resource_spans[0].scope_spans[0].spans
    assert [pair.key for pair in span.attributes] == ["bytes", "kept"]


def test_an_empty_batch_is_an_empty_request() -> None:
    assert encode_spans([]) == sdk_encode([]).SerializeToString() == b""
