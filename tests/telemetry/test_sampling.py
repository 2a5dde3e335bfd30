"""Sampling of new traces: the tracer's own root decision (taken before any SDK work) is the
trace-id ratio sampler's, on the trace id the recorded span then carries."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased

from hub.config import TraceSettings
from hub.telemetry.otel import build_otel_tracer
from hub.telemetry.tracing import SpanKind, sampled

ROOTS = 400


def _roots(settings: TraceSettings) -> tuple[list[tuple[str, str, str]], set[str]]:
    """Start and end ROOTS root spans: their ids, and the trace ids the exporter received."""
    exporter = InMemorySpanExporter()
    tracer = build_otel_tracer(settings, processor=SimpleSpanProcessor(exporter))
    ids = []
    for _ in range(ROOTS):
        opened = tracer.start("root", kind=SpanKind.SERVER, parent=None, attributes={})
        ids.append(opened.ids)
        opened.end()
    tracer.shutdown()
    exported = {
        format(span.context.trace_id, "032x")
        for span in exporter.get_finished_spans()
        if span.context is not None
    }
    return ids, exported


def _in_ratio(trace_id: str, ratio: float) -> bool:
    low = int(trace_id, 16) & TraceIdRatioBased.TRACE_ID_LIMIT
    return low < TraceIdRatioBased.get_bound_for_rate(ratio)


@pytest.mark.parametrize("configured", ["", "traceidratio", "parentbased_traceidratio"])
def test_a_new_trace_is_recorded_exactly_when_its_id_falls_in_the_ratio(
    configured: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if configured:
        monkeypatch.setenv("OTEL_TRACES_SAMPLER", configured)
        monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "0.25")
    ids, exported = _roots(TraceSettings(enabled=True, sample_ratio=0.25))

    recorded = {trace_id for trace_id, _, flags in ids if sampled(flags)}
    assert recorded == exported
    assert 0 < len(recorded) < ROOTS
    assert len({trace_id for trace_id, _, _ in ids}) == ROOTS
    for trace_id, span_id, _ in ids:
        assert (trace_id in recorded) == _in_ratio(trace_id, 0.25)
        assert len(span_id) == 16
        assert int(span_id, 16) != 0


def test_a_ratio_the_sdk_cannot_read_records_every_trace_as_the_sdk_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "traceidratio")
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "often")
    ids, exported = _roots(TraceSettings(enabled=True, sample_ratio=0.0))
    assert exported == {trace_id for trace_id, _, _ in ids}
