"""`HubSpanExporter` and `SpanBatches` against a real OTLP receiver on loopback: the hub's
traces go out through them with the hub's encoding, in batches of the configured size, on
schedule, and whole at shutdown; a full queue drops spans instead of growing; the SDK's
failure answers are kept; and an SDK whose HTTP client is not where it is expected still
exports, with the SDK's own encoder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits
from opentelemetry.sdk.trace.export import SpanExportResult

from hub.telemetry.otel import KeptSpans, OtelTracer, ProcessorSink, SpanRecord, SpanSink
from hub.telemetry.otlp_encoding import encode_span
from hub.telemetry.otlp_exporter import HubSpanExporter, SpanBatches, otlp_sink
from hub.telemetry.tracing import SpanKind
from hub.testing import serve_on_loopback
from tests.telemetry.hubs import message, observed_hub, rpc, write_agents
from tests.telemetry.receiver import OtlpReceiver

pytestmark = pytest.mark.anyio


def _tracer(sink: SpanSink) -> OtelTracer:
    return OtelTracer(
        sink,
        resource=Resource({"service.name": "exporter-test"}),
        follows_parent=True,
        bound=2**64,
        limits=SpanLimits(),
    )


def _record(tracer: OtelTracer, count: int, *, first: int = 0) -> None:
    for number in range(first, first + count):
        tracer.start(
            f"span {number}", kind=SpanKind.INTERNAL, parent=None, attributes={"number": number}
        ).end()


def _spans(count: int) -> list[SpanRecord]:
    sink = KeptSpans()
    _record(_tracer(sink), count)
    return sink.spans


async def _export(exporter: HubSpanExporter, spans: Sequence[SpanRecord]) -> SpanExportResult:
    encoded = [(span.tracer, encode_span(span)) for span in spans]
    try:
        return await anyio.to_thread.run_sync(exporter.export_encoded, encoded)
    finally:
        exporter.shutdown()


async def test_the_hub_sends_its_traces_through_its_own_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_TRACES_SAMPLER", "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)
    exports: list[tuple[bool, SpanExportResult]] = []
    export = HubSpanExporter.export_encoded

    def observed(
        self: HubSpanExporter, spans: Sequence[tuple[OtelTracer, bytes]]
    ) -> SpanExportResult:
        result = export(self, spans)
        exports.append((self.direct, result))
        return result

    monkeypatch.setattr(HubSpanExporter, "export_encoded", observed)
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector:
        traces = {"enabled": True, "endpoint": f"{collector}/v1/traces", "service_name": "hub"}
        hub = observed_hub(
            write_agents(tmp_path / "agents.yaml", {}), settings={"telemetry": {"traces": traces}}
        )
        async with hub as running, httpx.AsyncClient() as http:
            reply = await rpc(http, running.url, "SendMessage", {"message": message("hi")})
        # The hub has stopped: its span batches exported what they held.
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert exports
    assert set(exports) == {(True, SpanExportResult.SUCCESS)}
    names = sorted(span.name for span in receiver.spans)
    assert names == ["SendMessage", "invoke_agent echo"]
    assert {span.service for span in receiver.spans} == {"hub"}


async def test_a_receiver_that_refuses_the_batch_is_a_failed_export() -> None:
    async def refuse(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 400, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async with serve_on_loopback(refuse) as collector:
        exporter = HubSpanExporter(endpoint=f"{collector}/v1/traces", timeout=5)
        assert exporter.direct
        assert await _export(exporter, _spans(2)) is SpanExportResult.FAILURE


async def test_a_batch_over_the_size_limit_is_dropped_unsent() -> None:
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector:
        exporter = HubSpanExporter(endpoint=f"{collector}/v1/traces", max_request_size=100)
        assert await _export(exporter, _spans(5)) is SpanExportResult.FAILURE
    assert receiver.spans == []


class _ClientElsewhere(OTLPSpanExporter):
    """The SDK as a release might reshape it: its HTTP client under another name, which its
    own `export` and `shutdown` still use."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._sender = self.__dict__.pop("_client")

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self._client = self._sender
        try:
            return super().export(spans)
        finally:
            del self._client

    def shutdown(self) -> None:
        self._client = self._sender
        super().shutdown()


class _HubOnReshapedSdk(HubSpanExporter, _ClientElsewhere):
    pass


async def test_without_the_sdk_client_the_sdk_exports_with_its_own_encoder() -> None:
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector:
        exporter = _HubOnReshapedSdk(endpoint=f"{collector}/v1/traces")
        assert not exporter.direct
        sink = otlp_sink(exporter)
        assert isinstance(sink, ProcessorSink)
        _record(_tracer(sink), 3)
        await anyio.to_thread.run_sync(sink.shutdown)
    assert sorted(span.name for span in receiver.spans) == ["span 0", "span 1", "span 2"]
    assert {span.attributes["number"] for span in receiver.spans} == {0, 1, 2}


def test_a_direct_exporter_gets_the_hubs_batches() -> None:
    exporter = HubSpanExporter(endpoint="http://127.0.0.1:9/v1/traces")
    assert exporter.direct
    sink = otlp_sink(exporter)
    assert isinstance(sink, SpanBatches)
    sink.shutdown()


def _batches(collector: str, **settings: Any) -> SpanBatches:
    """Span batches sending to the receiver at `collector`, with `settings`."""
    return SpanBatches(HubSpanExporter(endpoint=f"{collector}/v1/traces"), **settings)


async def _until(arrived: Callable[[], bool]) -> None:
    """Wait (10 s at most) until what the receiver holds says `arrived`."""
    with anyio.fail_after(10):
        while not arrived():  # noqa: ASYNC110 (the receiver has no event to wait on)
            await anyio.sleep(0.01)


def _round_over(batches: SpanBatches) -> None:
    """Return once the exporting thread's round (the one under way, if any) is over: it
    exports under this lock."""
    with batches._exporting:
        pass


async def test_spans_leave_in_batches_of_the_configured_size() -> None:
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector:
        batches = _batches(collector, schedule_delay=60, max_export_batch_size=4)
        _record(_tracer(batches), 10)
        await _until(lambda: receiver.exports >= 2)
        # Two whole batches left at once; the two spans left over wait for the schedule: once
        # the exporting thread's round is over, what it left is left until then.
        await anyio.to_thread.run_sync(_round_over, batches)
        assert (receiver.exports, len(receiver.spans)) == (2, 8)
        await anyio.to_thread.run_sync(batches.shutdown)
    assert (receiver.exports, len(receiver.spans)) == (3, 10)
    assert sorted(span.attributes["number"] for span in receiver.spans) == list(range(10))


async def test_what_waits_leaves_on_schedule() -> None:
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector:
        batches = _batches(collector, schedule_delay=0.05)
        _record(_tracer(batches), 3)
        # Fewer than a batch, neither flushed nor shut down: they leave on the schedule.
        await _until(lambda: len(receiver.spans) >= 3)
        await anyio.to_thread.run_sync(batches.shutdown)


class _Held:
    """The receiver, holding each export's answer until `release` is set; `arrived` is set
    once an export is waiting."""

    def __init__(self, receiver: OtlpReceiver) -> None:
        self.receiver = receiver
        self.arrived = anyio.Event()
        self.release = anyio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/traces":
            self.arrived.set()
            await self.release.wait()
        await self.receiver(scope, receive, send)


async def test_a_full_queue_drops_spans_and_a_shut_down_one_takes_none(
    caplog: pytest.LogCaptureFixture,
) -> None:
    receiver = OtlpReceiver()
    held = _Held(receiver)
    async with serve_on_loopback(held) as collector:
        batches = _batches(collector, schedule_delay=60, max_queue_size=5, max_export_batch_size=5)
        tracer = _tracer(batches)
        _record(tracer, 5)  # a whole batch: the thread takes it and waits on the receiver
        with anyio.fail_after(10):
            await held.arrived.wait()
        _record(tracer, 8, first=5)  # five wait in the queue, three find it full
        assert batches.dropped == 3
        assert "spans are being dropped" in caplog.text
        held.release.set()
        await anyio.to_thread.run_sync(batches.shutdown)
        _record(tracer, 2, first=13)
    assert sorted(span.attributes["number"] for span in receiver.spans) == list(range(10))
    assert batches.dropped == 5


async def test_force_flush_exports_what_waits_now() -> None:
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector:
        batches = _batches(collector, schedule_delay=60)
        _record(_tracer(batches), 2)
        assert await anyio.to_thread.run_sync(batches.force_flush) is True
        assert len(receiver.spans) == 2
        await anyio.to_thread.run_sync(batches.shutdown)


def test_a_span_ending_after_shutdown_is_dropped_and_said_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    batches = _batches("http://127.0.0.1:9")
    batches.shutdown()
    _record(_tracer(batches), 1)
    assert batches.dropped == 1
    assert "after its tracer was shut down" in caplog.text


async def test_a_span_protobuf_cannot_hold_is_dropped_and_the_others_still_leave(
    caplog: pytest.LogCaptureFixture,
) -> None:
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector:
        batches = _batches(collector, schedule_delay=60)
        tracer = _tracer(batches)
        tracer.start("a\ud800", kind=SpanKind.INTERNAL, parent=None, attributes={}).end()
        _record(tracer, 2)
        await anyio.to_thread.run_sync(batches.shutdown)
    assert "could not be encoded for OTLP" in caplog.text
    assert sorted(span.name for span in receiver.spans) == ["span 0", "span 1"]
