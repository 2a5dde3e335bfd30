"""CPU per span of the OTLP request body: the SDK's encoder against the hub's.

Spans shaped like those of a SendMessage (a SERVER span with the request's attributes, its
task and message ids new each time, and its `invoke_agent echo` child) are recorded with the
hub's own tracer, then the same batches (512 spans, the batch size by default) are encoded
both ways, interleaved: the hub's records by the hub's encoder, and the `ReadableSpan`s the
SDK's processors would get of them (made before the clock starts) by the SDK's encoder. The
figure is process CPU per span, median of the rounds (min to max).

    python -m bench.otlp_encoding [--spans 4096] [--rounds 7]
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TypeVar

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan

from bench.spread import spread
from hub.config import TraceSettings
from hub.telemetry.otel import KeptSpans, SpanRecord, build_otel_tracer, readable
from hub.telemetry.otlp_encoding import encode_spans
from hub.telemetry.tracing import SpanKind

__all__ = ["main"]

_BATCH = 512


def _record(requests: int) -> list[SpanRecord]:
    kept = KeptSpans()
    tracer = build_otel_tracer(TraceSettings(service_name="a2a-hub"), processor=kept)
    for _ in range(requests):
        server = tracer.start(
            "POST /",
            kind=SpanKind.SERVER,
            parent=None,
            attributes={"http.request.method": "POST", "url.path": "/"},
        )
        server.update_name("SendMessage")
        for key, value in {
            "a2a.method.name": "SendMessage",
            "a2a.protocol.version": "1.0",
            "a2a.protocol.binding": "jsonrpc",
            "a2a.message.id": uuid.uuid4().hex,
            "gen_ai.conversation.id": uuid.uuid4().hex,
        }.items():
            server.set_attribute(key, value)
        invoke = tracer.start(
            "invoke_agent echo",
            kind=SpanKind.INTERNAL,
            parent=None,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "echo"},
        )
        invoke.end()
        server.set_attribute("a2a.task.id", uuid.uuid4().hex)
        server.set_attribute("a2a.task.state", "TASK_STATE_COMPLETED")
        server.set_attribute("http.response.status_code", 200)
        server.end()
    tracer.shutdown()
    return kept.spans


_Span = TypeVar("_Span", SpanRecord, ReadableSpan)


def _cpu_per_span(encode: Callable[[Sequence[_Span]], bytes], spans: Sequence[_Span]) -> float:
    batches = [spans[start : start + _BATCH] for start in range(0, len(spans), _BATCH)]
    started = time.process_time()
    for batch in batches:
        encode(batch)
    return (time.process_time() - started) / len(spans) * 1e6


def _sdk(spans: Sequence[ReadableSpan]) -> bytes:
    return sdk_encode(spans).SerializePartialToString()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=7)
    arguments = parser.parse_args()
    spans = _record(arguments.spans // 2)
    readables = [readable(span) for span in spans]
    if ExportTraceServiceRequest.FromString(encode_spans(spans)) != sdk_encode(readables):
        raise SystemExit("the two encodings differ")
    figures: dict[str, list[float]] = {"SDK encoder": [], "hub encoder": []}
    for _ in range(arguments.rounds):
        figures["SDK encoder"].append(_cpu_per_span(_sdk, readables))
        figures["hub encoder"].append(_cpu_per_span(encode_spans, spans))
    print(f"{len(spans)} spans in batches of {_BATCH}, {arguments.rounds} rounds, CPU per span")
    for name, values in figures.items():
        print(f"  {name}: {spread(values, 1)} us")


if __name__ == "__main__":
    main()
