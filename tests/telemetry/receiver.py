"""A small OTLP/HTTP traces receiver for the tests: the benchmark's receiver
(`bench.otlp_sink`), which decodes each `ExportTraceServiceRequest` with the protocol's own
protobuf messages (opentelemetry-proto), keeping every span with the `service.name` of the
resource that sent it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from bench.otlp_sink import Sink

__all__ = ["OtlpReceiver", "ReceivedSpan"]


@dataclass(frozen=True, slots=True)
class ReceivedSpan:
    service: str
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    events: tuple[str, ...]
    failed: bool


def _value(value: AnyValue) -> Any:
    return getattr(value, value.WhichOneof("value") or "string_value")


def _attributes(pairs: list[KeyValue]) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


class OtlpReceiver(Sink):
    """POST /v1/traces with protobuf bodies; keeps what arrives and its content types."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[ReceivedSpan] = []
        self.content_types: set[str] = set()

    def received(self, request: ExportTraceServiceRequest, scope: dict[str, Any]) -> None:
        self.exports += 1
        self.content_types.add(dict(scope["headers"]).get(b"content-type", b"").decode())
        for resource_spans in request.resource_spans:
            service = str(_attributes(list(resource_spans.resource.attributes))["service.name"])
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(_received(service, span))


def _received(service: str, span: Span) -> ReceivedSpan:
    return ReceivedSpan(
        service=service,
        name=span.name,
        kind=span.kind,
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex(),
        attributes=_attributes(list(span.attributes)),
        events=tuple(event.name for event in span.events),
        failed=span.status.code == span.status.STATUS_CODE_ERROR,
    )
