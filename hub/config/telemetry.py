"""The `telemetry:` section of the settings: Prometheus metrics, OpenTelemetry traces and the
access log ([observability.md](../../docs/observability.md))."""

from __future__ import annotations

from pydantic import Field

from hub.config.base import StrictModel

__all__ = ["MetricsSettings", "TelemetrySettings", "TraceSettings"]


class MetricsSettings(StrictModel):
    enabled: bool = True
    """Serve Prometheus metrics at `GET /metrics`."""
    public: bool = False
    """With auth on, serve `/metrics` without a credential (for a scraper on a private
    network); with auth off it is always open."""


class TraceSettings(StrictModel):
    enabled: bool = False
    """Record spans and export them with OTLP over HTTP. `OTEL_TRACES_EXPORTER=otlp` turns
    tracing on too, and `OTEL_TRACES_EXPORTER=none` (or `OTEL_SDK_DISABLED=true`) off."""
    endpoint: str | None = None
    """The OTLP/HTTP traces URL (`http://collector:4318/v1/traces`); None: the SDK's own
    reading of `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`."""
    service_name: str | None = None
    """The `service.name` resource attribute; None: `OTEL_SERVICE_NAME`, else `a2a-hub`."""
    sample_ratio: float = Field(default=1.0, ge=0.0, le=1.0)
    """Share of new traces recorded (a trace that arrives sampled or not keeps its
    decision); `OTEL_TRACES_SAMPLER` wins when set."""


class TelemetrySettings(StrictModel):
    metrics: MetricsSettings = MetricsSettings()
    traces: TraceSettings = TraceSettings()
    access_log: bool = True
    """One INFO line per request on the `hub.access` logger."""
