"""Spans recorded with an in-memory exporter: a delegated call, the gateway, a swarm,
failures, 0.3 calls; and a hub with tracing off that never imports the SDK."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from hub.config import Settings
from hub.telemetry import Telemetry
from hub.telemetry.setup import build_telemetry
from tests.telemetry.hubs import (
    by_name,
    message,
    observed_hub,
    one_span,
    parent_of,
    rpc,
    span_id,
    write_agents,
)

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = {"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01"}


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def traced(exporter: InMemorySpanExporter) -> Callable[[Settings], Telemetry]:
    def build(settings: Settings) -> Telemetry:
        return build_telemetry(settings.telemetry, span_processor=SimpleSpanProcessor(exporter))

    return build


@pytest.fixture
async def hub(tmp_path: Path, echoer: str, exporter: InMemorySpanExporter) -> AsyncIterator[str]:
    agents = write_agents(tmp_path / "agents.yaml", {"helper": echoer})
    async with observed_hub(agents, telemetry=traced(exporter)) as running:
        yield running.url


async def test_a_delegated_call_is_one_trace_continued_from_the_callers_traceparent(
    hub: str, exporter: InMemorySpanExporter
) -> None:
    sent = message("hello", skill="delegate")
    async with httpx.AsyncClient() as http:
        reply = await rpc(http, hub, "SendMessage", {"message": sent}, headers=TRACEPARENT)
    task = reply["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"

    spans = list(exporter.get_finished_spans())
    assert {format(span.context.trace_id, "032x") for span in spans if span.context} == {TRACE_ID}
    server = one_span(spans, "SendMessage")
    invoke = one_span(spans, "invoke_agent delegate")
    delegation = one_span(spans, "delegate helper")
    (client,) = [span for span in spans if span.kind is SpanKind.CLIENT]

    assert server.kind is SpanKind.SERVER
    assert parent_of(server) == int(CALLER_SPAN, 16)
    assert dict(server.attributes or {}) | {"http.response.status_code": 200} == {
        "http.request.method": "POST",
        "url.path": "/",
        "http.response.status_code": 200,
        "a2a.method.name": "SendMessage",
        "a2a.protocol.version": "1.0",
        "a2a.protocol.binding": "jsonrpc",
        "a2a.message.id": sent["messageId"],
        "a2a.task.id": task["id"],
        "a2a.task.state": "TASK_STATE_COMPLETED",
        "gen_ai.conversation.id": task["contextId"],
    }
    assert (invoke.kind, parent_of(invoke)) == (SpanKind.INTERNAL, span_id(server))
    assert invoke.attributes is not None
    assert invoke.attributes["gen_ai.agent.name"] == "delegate"
    assert invoke.attributes["a2a.task.id"] == task["id"]
    assert (delegation.kind, parent_of(delegation)) == (SpanKind.INTERNAL, span_id(invoke))
    assert parent_of(client) == span_id(delegation)
    assert client.name in ("SendStreamingMessage", "SendMessage")
    assert client.attributes is not None
    assert client.attributes["a2a_hub.partner.name"] == "helper"
    assert client.attributes["a2a.protocol.version"] == "1.0"
    assert client.attributes["a2a.protocol.binding"] == "JSONRPC"
    assert all(span.status.status_code is not StatusCode.ERROR for span in spans)


async def test_the_gateway_forwards_as_a_client_span_under_the_server_span(
    hub: str, exporter: InMemorySpanExporter
) -> None:
    async with httpx.AsyncClient() as http:
        reply = await rpc(http, f"{hub}/agents/helper/", "SendMessage", {"message": message("hi")})
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    spans = list(exporter.get_finished_spans())
    servers = [span for span in spans if span.kind is SpanKind.SERVER]
    server = one_span(servers, "SendMessage")
    (client,) = [span for span in spans if span.kind is SpanKind.CLIENT]
    assert server.attributes is not None
    assert server.attributes["url.path"] == "/agents/helper/"  # as requested
    assert (client.name, parent_of(client)) == ("SendMessage", span_id(server))
    assert client.context is not None
    assert server.context is not None
    assert client.context.trace_id == server.context.trace_id


async def test_a_failed_call_records_its_error_type_and_a_03_call_its_10_name(
    hub: str, exporter: InMemorySpanExporter
) -> None:
    async with httpx.AsyncClient() as http:
        missing = await rpc(http, hub, "GetTask", {"id": "nope"})
        old = await rpc(http, hub, "tasks/get", {"id": "nope"}, version="0.3")
    assert missing["error"]["code"] == old["error"]["code"] == -32001

    new_span, old_span = by_name(list(exporter.get_finished_spans()), "GetTask")
    for span, version in ((new_span, "1.0"), (old_span, "0.3")):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes["error.type"] == "TaskNotFoundError"
        assert span.attributes["a2a.protocol.version"] == version


async def test_a_swarm_has_a_span_with_its_strategy_and_one_child_per_branch(
    tmp_path: Path, echoer: str, exporter: InMemorySpanExporter
) -> None:
    agents = write_agents(tmp_path / "agents.yaml", {"a": echoer, "b": echoer, "c": echoer})
    async with (
        observed_hub(agents, telemetry=traced(exporter)) as running,
        httpx.AsyncClient() as http,
    ):
        url = running.url
        sent = message("hi", skill="swarm", strategy="broadcast", agents=["a", "b", "c"])
        reply = await rpc(http, url, "SendMessage", {"message": sent})
    assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    spans = list(exporter.get_finished_spans())
    swarm = one_span(spans, "swarm broadcast")
    assert swarm.attributes is not None
    assert swarm.attributes["a2a_hub.swarm.strategy"] == "broadcast"
    assert parent_of(swarm) == span_id(one_span(spans, "invoke_agent swarm"))
    branches = [span for span in spans if span.name.startswith("swarm.branch ")]
    assert sorted(span.name for span in branches) == [
        "swarm.branch a",
        "swarm.branch b",
        "swarm.branch c",
    ]
    assert {parent_of(span) for span in branches} == {span_id(swarm)}
    clients = [span for span in spans if span.kind is SpanKind.CLIENT]
    assert sorted(parent_of(span) or 0 for span in clients) == sorted(span_id(b) for b in branches)


def test_a_hub_with_tracing_off_never_imports_the_opentelemetry_sdk(tmp_path: Path) -> None:
    # Litestar itself imports the OpenTelemetry API when it is installed (to look for its
    # own plugin); the SDK and the exporter are what tracing would cost.
    script = (
        "import sys\n"
        "from hub.config import Settings\n"
        "from hub.runtime import Hub\n"
        "hub = Hub(Settings.model_validate({'store': {'kind': 'memory'}, 'agents': sys.argv[1]}))\n"
        "hub.asgi_app(hub.settings)\n"
        "heavy = ('opentelemetry.sdk', 'opentelemetry.exporter', 'opentelemetry.proto')\n"
        "loaded = sorted(name for name in sys.modules if name.startswith(heavy))\n"
        "assert not loaded, loaded\n"
    )
    agents = write_agents(tmp_path / "agents.yaml", {})
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(agents)],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
