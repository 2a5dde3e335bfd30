"""The whole loop on a real small model: SmolLM2-135M, in `tool_calling: json`, picks a
partner (a real a2a-sdk agent), the partner answers, the result goes back to the model, and
the task completes with the model's answer. The flow is asserted, not the wording."""

from __future__ import annotations

import anyio
import httpx
import pytest
from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentSkill
from starlette.applications import Starlette

from hub.client import A2AClient, user_message
from hub.orchestrator import PLAN_KEY, orchestrator
from hub.protocol import TaskState
from hub.testing import serve_hub, serve_on_loopback
from tests.sdk_agents import open_task, sdk_agent

pytestmark = pytest.mark.anyio

FORECAST = "Sunny, 21 C in Paris"


class Forecaster(AgentExecutor):
    """Answers every message with the forecast, and keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater, text = await open_task(context, event_queue)
        self.asked.append(text)
        await updater.add_artifact([new_text_part(FORECAST)], name="forecast", last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


async def test_a_small_local_model_plans_with_a_real_sdk_partner(local_model: str) -> None:
    forecaster = Forecaster()

    def partner(url: str) -> Starlette:
        skill = AgentSkill(
            id="forecast",
            name="Forecast",
            description="tells the weather of a city",
            tags=["weather"],
        )
        return sdk_agent(
            url, forecaster, name="weather", description="Tells the weather of a city", skill=skill
        )

    planner = orchestrator(
        id="planner",
        description="Answers questions about the weather",
        model={
            "provider": "openai",
            "model": "smollm2",
            "base_url": local_model,
            "tool_calling": "json",
            "temperature": 0,
            "seed": 42,
            "max_tokens": 160,
            "timeout": 120,
        },
        instructions="You answer questions about the weather. Call the weather tool, then "
        "answer with what it said.",
        tools={"agents": ["weather"], "required": True},
        limits={"steps": 4, "wall_time": 240},
    )
    async with (
        serve_on_loopback(partner) as partner_url,
        serve_hub(skills=[planner], partners={"weather": partner_url}) as hub,
        httpx.AsyncClient(timeout=240) as http,
    ):
        client = await A2AClient.from_url(hub.url, http=http)
        events = []
        with anyio.fail_after(300):
            async with client.stream(
                user_message("What is the weather in Paris?"), metadata={"skill": "planner"}
            ) as stream:
                async for event in stream:
                    events.append(event)
        task = await client.get_task(events[0].task.id if events[0].task else "")

    assert task.status.state is TaskState.COMPLETED, task.status
    plan = [
        e.status_update.metadata[PLAN_KEY]
        for e in events
        if e.status_update is not None and PLAN_KEY in (e.status_update.metadata or {})
    ]
    kinds = [step["event"] for step in plan]
    # The model called the partner first, its answer came back, then the model answered.
    assert kinds[:3] == ["model_step", "tool_call", "tool_result"]
    assert plan[1]["tool"] == "a2a_weather"
    assert plan[2]["state"] == "completed"
    assert plan[2]["result"] == FORECAST
    assert kinds[-1] == "model_step"
    assert plan[-1]["toolCalls"] == []
    assert len(forecaster.asked) == kinds.count("tool_call")
    answer = "".join(part.text or "" for a in task.artifacts or [] for part in a.parts)
    assert answer.strip()
