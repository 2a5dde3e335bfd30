"""A plan's telemetry: the GenAI spans (`invoke_agent`, `chat`, `execute_tool` with the A2A
client span under it) and the metrics of tokens, cost and tool calls, from a real plan."""

from __future__ import annotations

import httpx
import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from hub.client import A2AClient
from hub.config import Settings
from hub.protocol import TaskState
from hub.telemetry.setup import build_telemetry
from hub.testing import ScriptedAgent, answer, serve_hub
from hub.testing.model_server import ToolCall, Turn, serve_model
from tests.orchestrator.plans import WAIT, collect, final_state, planner_for, served_partners
from tests.telemetry.hubs import one_span, parent_of, span_id

pytestmark = pytest.mark.anyio


async def test_a_plan_records_genai_spans_and_metrics() -> None:
    exporter = InMemorySpanExporter()
    settings = Settings()
    telemetry = build_telemetry(settings.telemetry, span_processor=SimpleSpanProcessor(exporter))
    weather = ScriptedAgent("weather", reply=answer("Sunny"))
    script = [
        Turn(tool_calls=[ToolCall("a2a_weather", {"message": "Paris"})], usage=(100, 20)),
        Turn(text="Sunny.", usage=(150, 5)),
    ]
    async with serve_model(script) as model, served_partners([weather]) as urls:
        skill = planner_for(model, price={"input": 2.0, "output": 10.0})
        async with (
            serve_hub(skills=[skill], partners=urls, settings=settings, telemetry=telemetry) as hub,
            httpx.AsyncClient(timeout=WAIT) as http,
        ):
            client = await A2AClient.from_url(hub.url, http=http)
            events = await collect(client, "Weather?")
            metrics = (await http.get(f"{hub.url}/metrics")).text

    assert final_state(events) is TaskState.COMPLETED
    spans = list(exporter.get_finished_spans())
    invoke = one_span(spans, "invoke_agent planner")
    chats = [span for span in spans if span.name == "chat scripted"]
    tool = one_span(spans, "execute_tool a2a_weather")
    assert [parent_of(chat) for chat in chats] == [span_id(invoke), span_id(invoke)]
    assert [dict(chat.attributes or {})["gen_ai.usage.input_tokens"] for chat in chats] == [
        100,
        150,
    ]
    assert dict(chats[0].attributes or {})["gen_ai.request.model"] == "scripted"
    assert parent_of(tool) == span_id(invoke)
    assert dict(tool.attributes or {})["gen_ai.tool.name"] == "a2a_weather"
    clients = [
        span for span in spans if span.kind is SpanKind.CLIENT and parent_of(span) == span_id(tool)
    ]
    assert clients, "the partner call's client span hangs under execute_tool"

    assert 'a2a_hub_model_tokens_total{model="scripted",type="input"} 250.0' in metrics
    assert 'a2a_hub_model_tokens_total{model="scripted",type="output"} 25.0' in metrics
    # 250 input tokens at $2 and 25 output at $10 a million.
    assert 'a2a_hub_model_cost_usd_total{model="scripted"} 0.00075' in metrics
    calls = (
        'a2a_hub_plan_tool_calls_total{outcome="completed",partner="weather",tool="a2a_weather"}'
    )
    assert f"{calls} 1.0" in metrics
