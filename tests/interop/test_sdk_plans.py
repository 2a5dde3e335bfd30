"""The official a2a-sdk client, over every binding the hub serves, sends a goal to an
orchestrator and sees it work: the plan's status updates and the streamed answer, whole."""

from __future__ import annotations

import anyio
import pytest
from a2a.types import TaskState
from google.protobuf.json_format import MessageToDict

from hub.testing import ScriptedAgent, answer, serve_hub
from hub.testing.model_server import ToolCall, Turn, serve_model
from tests.interop.test_sdk_client import BINDINGS, collect, sdk_client, user
from tests.orchestrator.plans import planner_for, served_partners

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("binding", list(BINDINGS))
async def test_an_sdk_client_watches_a_plan_to_its_answer(binding: str) -> None:
    weather = ScriptedAgent("weather", reply=answer("Sunny in {text}"))
    script = [
        Turn(tool_calls=[ToolCall("a2a_weather", {"message": "Lyon"})]),
        Turn(text="It is sunny in Lyon.", chunks=5),
    ]
    async with serve_model(script) as model, served_partners([weather]) as urls:
        skill = planner_for(model)
        async with (
            serve_hub(skills=[skill], partners=urls) as hub,
            sdk_client(hub.url, binding) as client,
        ):
            with anyio.fail_after(60):
                events = await collect(client.send_message(user("Weather?", skill="planner")))

    plan = [
        MessageToDict(e.status_update.metadata)["plan"]
        for e in events
        if e.HasField("status_update") and "plan" in MessageToDict(e.status_update.metadata)
    ]
    assert [step["event"] for step in plan] == [
        "model_step",
        "tool_call",
        "tool_result",
        "model_step",
    ]
    assert plan[2]["result"] == "Sunny in Lyon"
    text = "".join(
        part.text
        for e in events
        if e.HasField("artifact_update")
        for part in e.artifact_update.artifact.parts
    )
    assert text == "It is sunny in Lyon."
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
