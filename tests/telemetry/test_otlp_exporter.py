"""`HubSpanExporter` against a real OTLP receiver on loopback: the hub's traces go out through
it with the hub's encoding; the SDK's failure answers are kept; and an SDK whose HTTP client is
not where it is expected still exports, with the SDK's own encoder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hub.telemetry.otlp_exporter import HubSpanExporter
from hub.testing import serve_on_loopback
from tests.telemetry.hubs import message, observed_hub, rpc, write_agents
from tests.telemetry.receiver import OtlpReceiver

pytestmark = pytest.mark.anyio


def _spans(count: int) -> tuple[ReadableSpan, ...]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "exporter-test"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("a2a-hub")
    for number in range(count):
        tracer.start_span(f"span {number}", attributes={"number": number}).end()
    return exporter.get_finished_spans()


async def _export(exporter: OTLPSpanExporter, spans: Sequence[ReadableSpan]) -> SpanExportResult:
    try:
        return await anyio.to_thread.run_sync(exporter.export, spans)
    finally:
        exporter.shutdown()


async def test_the_hub_sends_its_traces_through_its_own_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_TRACES_SAMPLER", "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)
    exports: list[tuple[bool, SpanExportResult]] = []
    export = HubSpanExporter.export

    def observed(self: HubSpanExporter, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = export(self, spans)
        exports.append((self.direct, result))
        return result

    monkeypatch.setattr(HubSpanExporter, "export", observed)
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector:
        traces = {"enabled": True, "endpoint": f"{collector}/v1/traces", "service_name": "hub"}
        hub = observed_hub(
            write_agents(tmp_path / "agents.yaml", {}), settings={"telemetry": {"traces": traces}}
        )
        async with serve_on_loopback(hub) as url, httpx.AsyncClient() as http:
            reply = await rpc(http, url, "SendMessage", {"message": message("hi")})
        # The hub has stopped: its batch processor exported what it held.
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
        assert await _export(exporter, _spans(3)) is SpanExportResult.SUCCESS
    assert sorted(span.name for span in receiver.spans) == ["span 0", "span 1", "span 2"]
    assert {span.attributes["number"] for span in receiver.spans} == {0, 1, 2}
