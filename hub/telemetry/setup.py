"""`build_telemetry()`: a hub's recorders from its `telemetry` settings and the standard
OpenTelemetry environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hub.config import TelemetrySettings, TraceSettings
from hub.errors import ConfigError
from hub.telemetry.context import Telemetry

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import SpanProcessor

    from hub.telemetry.otel import SpanSink

__all__ = ["build_telemetry", "traces_enabled"]


def traces_enabled(settings: TraceSettings, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether spans are recorded: `OTEL_SDK_DISABLED=true` turns tracing off,
    `OTEL_TRACES_EXPORTER` (`otlp` / `none`) decides next, and `telemetry.traces.enabled`
    when neither is set."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = {
        name.strip().lower() for name in environ.get("OTEL_TRACES_EXPORTER", "").split(",")
    }
    exporters.discard("")
    if "none" in exporters:
        return False
    if exporters:
        if exporters != {"otlp"}:
            raise ConfigError(
                f"OTEL_TRACES_EXPORTER={environ['OTEL_TRACES_EXPORTER']!r}: the hub exports "
                "traces with OTLP over HTTP only; set it to 'otlp' or 'none'"
            )
        return True
    return settings.enabled


def build_telemetry(
    settings: TelemetrySettings, *, span_processor: SpanProcessor | SpanSink | None = None
) -> Telemetry:
    """The recorders the settings ask for. Neither the OpenTelemetry SDK nor prometheus-client
    is imported for what is off.

    Args:
        settings: the `telemetry` settings.
        span_processor: record spans through this SDK span processor (tests pass one on an
            in-memory exporter) or hub span sink instead of the OTLP exporter; turns
            tracing on.

    Raises:
        ConfigError: tracing is on and the `otel` extra is not installed, or
            `OTEL_TRACES_EXPORTER` names an exporter the hub does not have.
    """
    tracer = None
    if span_processor is not None or traces_enabled(settings.traces):
        try:
            from hub.telemetry.otel import build_otel_tracer
        except ImportError as exc:
            raise ConfigError(
                "tracing is on (telemetry.traces.enabled or OTEL_TRACES_EXPORTER=otlp) but "
                f"OpenTelemetry is not installed ({exc.name}): pip install 'a2a-hub[otel]'"
            ) from None
        tracer = build_otel_tracer(settings.traces, processor=span_processor)
    metrics = None
    if settings.metrics.enabled:
        from hub.telemetry.metrics import HubMetrics

        metrics = HubMetrics()
    return Telemetry(tracer=tracer, metrics=metrics, access_log=settings.access_log)
