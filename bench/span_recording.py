"""CPU per span recorded and encoded for export: the OpenTelemetry SDK's live `Span` and batch
processor against the hub's own record and span batches.

Each span is started with two attributes, gets five more and ends. The SDK's goes to a
`BatchSpanProcessor`, whose exporter encodes each batch with the SDK's OTLP encoder and
discards the bytes; the hub's to `SpanBatches`, which encodes it as it ends, and whose
exporter wraps each batch into its OTLP request and discards it. Both queues hold a whole
round, so that nothing is dropped, and what waits is flushed at the end of each round,
inside the measurement. Nothing is sent: what an HTTP post costs is the same either way.
The two ways alternate round by round; the figure is process CPU per span (the batching
threads included), median of the rounds (min to max).

    python -m bench.span_recording [--spans 20000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

from bench.spread import spread
from hub.config import TraceSettings
from hub.telemetry.otel import OtelTracer, SpanSink, build_otel_tracer
from hub.telemetry.otlp_encoding import encode_request
from hub.telemetry.otlp_exporter import SpanBatches
from hub.telemetry.tracing import SpanKind

__all__ = ["main"]

_STARTED = {"http.request.method": "POST", "url.path": "/"}
_SET = {
    "a2a.method.name": "SendMessage",
    "a2a.protocol.version": "1.0",
    "a2a.task.id": "9f0c6d1e-0a4f-4c3e-8a55-5d2b7c1e9a10",
    "a2a.task.state": "TASK_STATE_COMPLETED",
    "http.response.status_code": 200,
}


class _Discard(SpanExporter):
    """Encodes each batch as the SDK's OTLP exporter does, and sends nothing."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        encode_spans(spans).SerializeToString()
        return SpanExportResult.SUCCESS


class _DiscardEncoded:
    """Wraps each batch into its OTLP request as the hub's exporter does, and sends nothing."""

    def export_encoded(self, spans: Sequence[tuple[OtelTracer, bytes]]) -> SpanExportResult:
        encode_request(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


def _sdk_spans(count: int) -> float:
    """The SDK's way, as the hub recorded spans before: a provider sampling with the
    parent-based trace-id ratio sampler at 1.0."""
    processor = BatchSpanProcessor(_Discard(), max_queue_size=count)
    provider = TracerProvider(sampler=ParentBased(TraceIdRatioBased(1.0)), shutdown_on_exit=False)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("a2a-hub")

    def record() -> None:
        span = tracer.start_span("POST /", kind=trace.SpanKind.SERVER, attributes=_STARTED)
        for key, value in _SET.items():
            span.set_attribute(key, value)
        span.end()

    return _cpu_per_span(record, count, processor)


def _hub_spans(count: int) -> float:
    processor = SpanBatches(_DiscardEncoded(), max_queue_size=count)
    tracer = build_otel_tracer(TraceSettings(service_name="a2a-hub"), processor=processor)

    def record() -> None:
        span = tracer.start("POST /", kind=SpanKind.SERVER, parent=None, attributes=_STARTED)
        for key, value in _SET.items():
            span.set_attribute(key, value)
        span.end()

    return _cpu_per_span(record, count, processor)


def _cpu_per_span(
    record: Callable[[], None], count: int, processor: BatchSpanProcessor | SpanSink
) -> float:
    started = time.process_time()
    for _ in range(count):
        record()
    processor.force_flush()
    spent = time.process_time() - started
    processor.shutdown()
    return spent / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=9)
    arguments = parser.parse_args()
    figures: dict[str, list[float]] = {"SDK span and processor": [], "hub record and batches": []}
    for _ in range(arguments.rounds):
        figures["SDK span and processor"].append(_sdk_spans(arguments.spans))
        figures["hub record and batches"].append(_hub_spans(arguments.spans))
    print(f"{arguments.spans} spans a round, {arguments.rounds} rounds, CPU per span")
    for name, values in figures.items():
        print(f"  {name}: {spread(values, 1)} us")


if __name__ == "__main__":
    main()
