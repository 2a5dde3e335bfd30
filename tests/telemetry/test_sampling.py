"""Sampling: the tracer's own decision (taken before anything is recorded) is the one the
SDK's sampler named by `OTEL_TRACES_SAMPLER` takes, for new traces on the trace id the
recorded span then carries, and below a parent on the parent's trace id and flags."""

from __future__ import annotations

import random

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import TraceIdRatioBased
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from hub.config import TraceSettings
from hub.errors import ConfigError
from hub.protocol.trace import CallScope
from hub.telemetry.otel import SAMPLERS, build_otel_tracer
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


def _sdk_records(trace_id: str, parent: CallScope | None) -> bool:
    """Whether the SDK's sampler, built by the SDK from the environment, records a span of
    `trace_id` below `parent`."""
    context = None
    if parent is not None:
        remote = SpanContext(
            trace_id=int(parent.trace_id, 16),
            span_id=int(parent.parent_id, 16),
            is_remote=True,
            trace_flags=TraceFlags(int(parent.flags, 16)),
        )
        context = trace.set_span_in_context(NonRecordingSpan(remote))
    decision = TracerProvider().sampler.should_sample(context, int(trace_id, 16), "span")
    return decision.decision.is_sampled()


@pytest.mark.parametrize("configured", SAMPLERS)
def test_every_sampler_decides_as_the_sdks_own_for_roots_and_children(
    configured: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", configured)
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "0.5")
    exporter = InMemorySpanExporter()
    tracer = build_otel_tracer(TraceSettings(), processor=SimpleSpanProcessor(exporter))
    parents: list[CallScope | None] = [None] * 60
    for flags in ("01", "00") * 60:
        trace_id = format(random.getrandbits(128) or 1, "032x")
        parents.append(CallScope(trace_id=trace_id, parent_id="00f067aa0ba902b7", flags=flags))
    recorded = set()
    for parent in parents:
        opened = tracer.start("s", kind=SpanKind.INTERNAL, parent=parent, attributes={})
        trace_id, span_id, flags = opened.ids
        assert sampled(flags) == opened.is_recording() == _sdk_records(trace_id, parent)
        if parent is not None:
            assert trace_id == parent.trace_id
        if sampled(flags):
            recorded.add(span_id)
        opened.end()
    assert {
        format(span.context.span_id, "016x")
        for span in exporter.get_finished_spans()
        if span.context
    } == recorded


def test_a_sampler_the_hub_does_not_have_is_refused_with_the_ones_it_has(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "xray")
    with pytest.raises(ConfigError) as refused:
        build_otel_tracer(TraceSettings(), processor=SimpleSpanProcessor(InMemorySpanExporter()))
    assert "'xray'" in str(refused.value)
    for name in SAMPLERS:
        assert name in str(refused.value)
