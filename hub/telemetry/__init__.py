"""Observability: traces (OpenTelemetry), metrics (Prometheus), logs, health and status.

One concept per module: `context` (which hub's recorders are current), `tracing` (spans on
the call scope's trace), `otel` (the span records and the sampler, on the OpenTelemetry SDK,
imported only when tracing is on), `otlp_encoding` and `otlp_exporter` (spans written as
OTLP protobuf and sent in batches), `metrics` and `overview` (Prometheus metrics; the
figures a dashboard reads in process), `access` (the server's request entry), `logs` (text
or JSON lines), `health` and `status` (what `/readyz` and `/status` answer), `setup` (all of
it from the settings). Everything above `protocol` and `store` may call it; it calls nothing
above them.
"""

from hub.telemetry.context import Telemetry, current_telemetry, use_telemetry
from hub.telemetry.tracing import SpanKind, add_event, current_span, span

__all__ = [
    "SpanKind",
    "Telemetry",
    "add_event",
    "current_span",
    "current_telemetry",
    "span",
    "use_telemetry",
]
