"""Two hubs export with OTLP over HTTP to a real receiver on loopback: a broadcast swarm on
the first, over three branches that each go through the second hub's gateway to an a2a-sdk
partner, arrives as one trace with the expected parent/child structure and attributes."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc
from tests.telemetry.hubs import message, observed_hub, rpc, write_agents
from tests.telemetry.receiver import OtlpReceiver, ReceivedSpan

pytestmark = pytest.mark.anyio

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"
SERVER, CLIENT, INTERNAL = (
    Span.SpanKind.SPAN_KIND_SERVER,
    Span.SpanKind.SPAN_KIND_CLIENT,
    Span.SpanKind.SPAN_KIND_INTERNAL,
)


def _traced(collector: str, service: str) -> dict[str, object]:
    endpoint = f"{collector}/v1/traces"
    return {
        "telemetry": {"traces": {"enabled": True, "endpoint": endpoint, "service_name": service}}
    }


def _children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    return [span for span in spans if span.parent_id == parent.span_id]


async def test_a_swarm_across_two_hubs_arrives_as_one_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_TRACES_SAMPLER", "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector, serve_on_loopback(sdk_jsonrpc) as sdk:
        b_agents = write_agents(tmp_path / "b.yaml", {"sdk": sdk})
        async with observed_hub(b_agents, settings=_traced(collector, "hub-b")) as hub_b:
            gateway = f"{hub_b.url}/agents/sdk"
            a_agents = write_agents(tmp_path / "a.yaml", {f"b{i}": gateway for i in (1, 2, 3)})
            async with (
                observed_hub(a_agents, settings=_traced(collector, "hub-a")) as hub_a,
                httpx.AsyncClient() as http,
            ):
                sent = message(
                    "hello", skill="swarm", strategy="broadcast", agents=["b1", "b2", "b3"]
                )
                reply = await rpc(
                    http,
                    hub_a.url,
                    "SendMessage",
                    {"message": sent},
                    headers={"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01"},
                )
        # Both hubs have stopped: their span processors exported what they held.
    task = reply["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert receiver.content_types == {"application/x-protobuf"}

    spans = [span for span in receiver.spans if span.trace_id == TRACE_ID]
    a2a_calls = [span for span in receiver.spans if "a2a.method.name" in span.attributes]
    assert {span.trace_id for span in a2a_calls} == {TRACE_ID}

    (server_a,) = [s for s in spans if s.service == "hub-a" and s.kind == SERVER]
    assert (server_a.name, server_a.parent_id) == ("SendMessage", CALLER_SPAN)
    assert server_a.attributes["a2a.task.id"] == task["id"]
    assert server_a.attributes["a2a.task.state"] == "TASK_STATE_COMPLETED"
    assert server_a.attributes["gen_ai.conversation.id"] == task["contextId"]
    assert server_a.attributes["a2a.message.id"] == sent["messageId"]

    (invoke,) = _children(spans, server_a)
    assert (invoke.name, invoke.kind) == ("invoke_agent swarm", INTERNAL)
    (swarm,) = _children(spans, invoke)
    assert (swarm.name, swarm.attributes["a2a_hub.swarm.strategy"]) == (
        "swarm broadcast",
        "broadcast",
    )
    branches = _children(spans, swarm)
    assert sorted(branch.name for branch in branches) == [
        "swarm.branch b1",
        "swarm.branch b2",
        "swarm.branch b3",
    ]
    for branch in branches:
        partner = branch.name.removeprefix("swarm.branch ")
        (call,) = [s for s in _children(spans, branch) if s.kind == CLIENT]
        assert call.service == "hub-a"
        assert call.attributes["a2a_hub.partner.name"] == partner
        assert call.name == call.attributes["a2a.method.name"]
        # The second hub's SERVER span hangs under the first hub's CLIENT span ...
        (server_b,) = _children(spans, call)
        assert (server_b.service, server_b.kind) == ("hub-b", SERVER)
        assert server_b.name == call.name
        assert server_b.attributes["url.path"] == "/agents/sdk"
        # ... and its gateway forwards to the SDK partner as a CLIENT span of its own.
        (forward,) = _children(spans, server_b)
        assert (forward.kind, forward.name) == (CLIENT, call.name)
        assert forward.attributes["a2a_hub.partner.name"] == "sdk"
    assert not any(span.failed for span in spans)
