"""A small OTLP/HTTP traces receiver for the tests: an ASGI app that decodes each
`ExportTraceServiceRequest` with the protocol's own protobuf messages (opentelemetry-proto)
and keeps every span with the `service.name` of the resource that sent it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

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


class OtlpReceiver:
    """POST /v1/traces with `application/x-protobuf` bodies; everything else is a 404."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.content_types: set[str] = set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                event = await receive()
                if event["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        if scope["path"] != "/v1/traces" or scope["method"] != "POST":
            await _answer(send, 404, b"")
            return
        self.content_types.add(dict(scope["headers"]).get(b"content-type", b"").decode())
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            service = str(_attributes(list(resource_spans.resource.attributes))["service.name"])
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(_received(service, span))
        await _answer(send, 200, ExportTraceServiceResponse().SerializeToString())


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


async def _answer(send: Any, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/x-protobuf")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
