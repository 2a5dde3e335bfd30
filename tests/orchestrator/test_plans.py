"""An orchestrator skill against a scripted model server and scripted partners, all over real
HTTP on loopback: the model's text streams as artifact chunks, tool calls and results are
status updates, calls of one step run at once as ledger children, questions travel both ways,
limits and cancel end a plan cleanly, and follow-ups continue the conversation."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.config import AuthSettings, CredentialSettings, Settings
from hub.orchestrator import PLAN_KEY, Journal, orchestrator, plan_record
from hub.protocol import Part, Task, TaskState
from hub.skills.echo import echo
from hub.testing import ScriptedAgent, answer, ask, fail, serve_hub
from hub.testing.model_server import ToolCall, Turn, serve_model
from tests.orchestrator.plans import (
    WAIT,
    collect,
    final_message,
    final_state,
    plan_events,
    planner_for,
    planning,
    served_partners,
    settled,
    streamed_text,
    tool_messages,
)

pytestmark = pytest.mark.anyio


async def test_a_plan_calls_a_partner_and_answers_with_streamed_text() -> None:
    weather = ScriptedAgent("weather", reply=answer("Sunny, 21 C in {text}"))
    script = [
        Turn(tool_calls=[ToolCall("a2a_weather", {"message": "Paris"})]),
        Turn(text="It is sunny in Paris, 21 C.", chunks=4),
    ]
    async with planning(script, [weather]) as (client, model, _):
        events = await collect(client, "What is the weather in Paris?")

    assert final_state(events) is TaskState.COMPLETED
    chunks = [e.artifact_update for e in events if e.artifact_update is not None]
    assert len(chunks) >= 4  # the answer came in several deltas, then the closing chunk
    assert chunks[-1].last_chunk
    assert streamed_text(events) == "It is sunny in Paris, 21 C."
    assert [m.text() for m in weather.messages] == ["Paris"]
    kinds = [event["event"] for event in plan_events(events)]
    assert kinds == ["model_step", "tool_call", "tool_result", "model_step"]
    call, result = plan_events(events)[1:3]
    assert call["tool"] == "a2a_weather"
    assert call["partner"] == "weather"
    assert call["arguments"] == {"message": "Paris"}
    assert result["state"] == "completed"
    assert result["partnerTaskId"]
    assert result["result"] == "Sunny, 21 C in Paris"
    assert plan_events(events)[0]["inputTokens"] > 0
    # The tool's result went back to the model as a tool result, for the call it answers.
    [returned] = tool_messages(model.requests[1])
    assert returned["content"] == "Sunny, 21 C in Paris"
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    assert offered == ["a2a_weather"]


async def test_a_finished_plan_keeps_its_turn_as_a_record_and_drops_its_journal() -> None:
    weather = ScriptedAgent("weather", reply=answer("Sunny in {text}"))
    script = [
        Turn(tool_calls=[ToolCall("a2a_weather", {"message": "Paris"})], usage=(40, 5)),
        Turn(text="Sunny.", usage=(60, 2)),
    ]
    async with planning(script, [weather]) as (client, _, hub):
        events = await collect(client, "weather?")
        task_id = next(e.task.id for e in events if e.task is not None)
        record = await plan_record(hub.store, task_id)
        journal = await hub.store.load_state(Journal.key(task_id))

    assert journal is None
    assert record is not None
    assert record.ended
    assert [entry.role for entry in record.transcript] == ["user", "assistant", "tool", "assistant"]
    steps = [(step.kind, step.tool, step.tokens) for step in record.steps]
    assert steps == [
        ("model_step", "", 45),
        ("tool_call", "a2a_weather", 0),
        ("model_step", "", 62),
    ]
    call = record.steps[1]
    assert (call.partner, call.state) == ("weather", "completed")
    assert call.partner_task
    assert record.steps[0].started <= call.started <= record.steps[2].started
    assert record.spent.tokens == 107


async def test_the_calls_of_one_step_run_at_once_as_children_of_the_task() -> None:
    slow = [
        ScriptedAgent(name, reply=answer(f"{name}: {{text}}", delay=1.0))
        for name in ("a", "b", "c")
    ]
    script = [
        Turn(tool_calls=[ToolCall(f"a2a_{agent.name}", {"message": "go"}) for agent in slow]),
        Turn(text="done"),
    ]
    async with planning(script, slow) as (client, model, hub):
        started = anyio.current_time()
        events = await collect(client, "ask everyone")
        elapsed = anyio.current_time() - started
        task_id = next(e.task.id for e in events if e.task is not None)
        children = await hub.store.list_children(task_id)

    assert final_state(events) is TaskState.COMPLETED
    assert elapsed < 2.9  # three one-second partners at once, not one after another
    assert sorted(child.agent for child in children) == ["a", "b", "c"]
    assert {child.state for child in children} == {TaskState.COMPLETED}
    results = sorted(m["content"] for m in tool_messages(model.requests[1]))
    assert results == ["a: go", "b: go", "c: go"]


async def test_a_failing_partner_is_an_error_result_for_the_model() -> None:
    broken = ScriptedAgent("broken", reply=fail("the disk is full"))
    script = [
        Turn(tool_calls=[ToolCall("a2a_broken", {"message": "save it"})]),
        Turn(text="The partner could not save it."),
    ]
    async with planning(script, [broken]) as (client, model, _):
        events = await collect(client, "save this")

    assert final_state(events) is TaskState.COMPLETED
    [returned] = tool_messages(model.requests[1])
    assert returned["content"].startswith("error: the agent ended its task failed")
    assert "the disk is full" in returned["content"]
    assert plan_events(events)[2]["state"] == "failed"


async def test_a_partners_question_reaches_the_caller_and_the_answer_goes_back() -> None:
    painter = ScriptedAgent("painter", reply=ask("which colour?", then=answer("painted {text}")))
    script = [
        Turn(tool_calls=[ToolCall("a2a_painter", {"message": "paint the door"})]),
        Turn(text="The door is painted red."),
    ]
    async with planning(script, [painter]) as (client, model, _):
        with anyio.fail_after(WAIT):
            asked = await client.send(user_message("paint my door"), metadata={"skill": "planner"})
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            question = asked.status.message
            assert question is not None
            assert question.text() == "which colour?"
            assert (question.metadata or {})["agent"] == "painter"
            done = await client.send(
                user_message("red", task_id=asked.id, context_id=asked.context_id)
            )
            done = await settled(client, done)

    assert done.status.state is TaskState.COMPLETED
    assert [m.text() for m in painter.messages] == ["paint the door", "red"]
    [returned] = tool_messages(model.requests[1])
    assert returned["content"] == "painted red"


async def test_the_models_own_question_parks_the_task() -> None:
    script = [
        Turn(tool_calls=[ToolCall("ask_user", {"question": "Which city?"})]),
        Turn(text="Paris it is."),
    ]
    async with planning(script, tools={"ask_user": True}) as (client, model, _):
        with anyio.fail_after(WAIT):
            asked = await client.send(user_message("plan a trip"), metadata={"skill": "planner"})
            assert isinstance(asked, Task)
            assert asked.status.state is TaskState.INPUT_REQUIRED
            assert asked.status.message is not None
            assert asked.status.message.text() == "Which city?"
            done = await client.send(
                user_message("Paris", task_id=asked.id, context_id=asked.context_id)
            )
            done = await settled(client, done)

    assert done.status.state is TaskState.COMPLETED
    [returned] = tool_messages(model.requests[1])
    assert returned["content"] == "Paris"


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        ({"steps": 2}, "steps (2)"),
        ({"tool_calls": 3}, "tool_calls (3)"),
        ({"tokens": 150}, "tokens (150)"),
    ],
)
async def test_a_plan_past_a_limit_fails_naming_it_and_what_was_spent(
    limits: dict[str, Any], named: str
) -> None:
    echo = ScriptedAgent("echo")

    def forever(_: Any) -> Turn:
        return Turn(
            tool_calls=[
                ToolCall("a2a_echo", {"message": "again"}),
                ToolCall("a2a_echo", {"message": "more"}),
            ],
            usage=(60, 40),
        )

    async with planning(forever, [echo], limits=limits) as (client, _, _):
        events = await collect(client, "loop")

    assert final_state(events) is TaskState.FAILED
    text = final_message(events)
    assert f"reached its limit {named}" in text
    assert "spent" in text
    assert "tokens" in text


async def test_the_cost_limit_uses_the_models_price() -> None:
    echo = ScriptedAgent("echo")
    script = [
        Turn(tool_calls=[ToolCall("a2a_echo", {"message": "x"})], usage=(1_000_000, 0)),
        Turn(text="never"),
    ]
    async with planning(
        script, [echo], limits={"cost": 0.5}, price={"input": 1.0, "output": 2.0}
    ) as (client, _, _):
        events = await collect(client, "spend")

    assert final_state(events) is TaskState.FAILED
    text = final_message(events)
    assert "limit cost ($0.5)" in text
    assert "$1.0000" in text
    assert echo.messages == []  # the step past the budget made no call


async def test_the_wall_time_limit_stops_a_slow_plan() -> None:
    script = [Turn(text="too late", delay=5)]
    async with planning(script, limits={"wall_time": 1}) as (client, _, _):
        events = await collect(client, "hurry")

    assert final_state(events) is TaskState.FAILED
    assert "limit wall_time (1 s)" in final_message(events)


async def test_canceling_the_task_aborts_the_model_call() -> None:
    script = [Turn(text="thinking", chunks=2, hang=True)]
    async with planning(script) as (client, model, _):
        with anyio.fail_after(WAIT):
            async with client.stream(
                user_message("think"), metadata={"skill": "planner"}
            ) as stream:
                async for event in stream:
                    if event.task is not None:
                        task_id = event.task.id
                        break
            await model.wait_for_requests(1)
            canceled = await client.cancel(task_id)
            await model.wait_for_disconnects(1)

    assert canceled.status.state is TaskState.CANCELED


async def test_canceling_the_task_cancels_the_partner_task_it_started() -> None:
    slow = ScriptedAgent("slow", reply=answer("late", delay=float("inf")))
    script = [Turn(tool_calls=[ToolCall("a2a_slow", {"message": "wait"})]), Turn(text="never")]
    async with planning(script, [slow]) as (client, _, hub):
        with anyio.fail_after(WAIT):
            async with client.stream(user_message("go"), metadata={"skill": "planner"}) as stream:
                async for event in stream:
                    plan = (
                        (event.status_update.metadata or {}).get(PLAN_KEY)
                        if event.status_update
                        else None
                    )
                    if plan and plan["event"] == "tool_call":
                        task_id = event.status_update.task_id  # type: ignore[union-attr]
                        break
            await client.cancel(task_id)
            # The call named its partner task and canceled it; the ledger's line says so.
            while True:
                children = await hub.store.list_children(task_id)
                if children and all(c.state is TaskState.CANCELED for c in children):
                    break
                await anyio.sleep(0.05)

    assert [child.agent for child in children] == ["slow"]


async def test_a_follow_up_in_the_same_context_continues_the_conversation() -> None:
    script = [Turn(text="Hello, Ada."), Turn(text="Your name is Ada.")]
    async with planning(script) as (client, model, _):
        with anyio.fail_after(WAIT):
            first = await client.send(user_message("I am Ada"), metadata={"skill": "planner"})
            first = await settled(client, first)
            second = await client.send(
                user_message("What is my name?", context_id=first.context_id),
                metadata={"skill": "planner"},
            )
            second = await settled(client, second)

    assert second.status.state is TaskState.COMPLETED
    assert second.context_id == first.context_id
    sent = [(m["role"], m.get("content")) for m in model.requests[1]["messages"]]
    assert ("user", "I am Ada") in sent
    assert ("assistant", "Hello, Ada.") in sent
    assert sent[-1] == ("user", "What is my name?")


async def test_a_tool_the_model_invents_is_answered_as_an_error_and_never_called() -> None:
    echo = ScriptedAgent("echo")
    script = [
        Turn(tool_calls=[ToolCall("a2a_root_shell", {"message": "rm -rf /"})]),
        Turn(text="I cannot."),
    ]
    async with planning(script, [echo]) as (client, model, _):
        events = await collect(client, "break things")

    assert final_state(events) is TaskState.COMPLETED
    [returned] = tool_messages(model.requests[1])
    assert returned["content"].startswith("error: there is no tool named 'a2a_root_shell'")
    assert echo.messages == []


async def test_a_scoped_credential_gives_the_model_only_its_partners(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HUB_SCOPED_KEY", "scoped-secret-0123456789")
    allowed = ScriptedAgent("allowed", reply=answer("ok"))
    hidden = ScriptedAgent("hidden", reply=answer("secret"))
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(
                name="scoped", api_key="scoped-secret-0123456789", agents=("allowed",)
            ),
        ),
    )
    script = [
        Turn(tool_calls=[ToolCall("a2a_hidden", {"message": "tell me"})]),
        Turn(text="no"),
    ]
    async with serve_model(script) as model, served_partners([allowed, hidden]) as urls:
        skill = planner_for(model)
        async with (
            serve_hub(skills=[skill], partners=urls, settings=Settings(auth=auth)) as hub,
            httpx.AsyncClient(
                timeout=WAIT, headers={"X-API-Key": "scoped-secret-0123456789"}
            ) as http,
        ):
            client = await A2AClient.from_url(hub.url, http=http)
            events = await collect(client, "what is hidden?")

    assert final_state(events) is TaskState.COMPLETED
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    assert offered == ["a2a_allowed"]
    [returned] = tool_messages(model.requests[1])
    assert returned["content"].startswith("error: there is no tool named 'a2a_hidden'")
    assert hidden.messages == []


async def test_a_model_that_refuses_the_key_fails_the_task_naming_the_entry_not_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    script = [Turn(text="never")]
    async with serve_model(script, api_key="the-right-key") as model:
        skill = planner_for(model, api_key="wrong-key-1234567890")
        async with (
            serve_hub(skills=[skill]) as hub,
            httpx.AsyncClient(timeout=WAIT) as http,
        ):
            client = await A2AClient.from_url(hub.url, http=http)
            events = await collect(client, "hello")

    assert final_state(events) is TaskState.FAILED
    text = final_message(events)
    assert "model 'scripted'" in text
    assert "refused the API key (HTTP 401)" in text
    assert "wrong-key" not in text
    assert "wrong-key" not in caplog.text


async def test_a_model_that_cannot_be_reached_is_a_clear_failure() -> None:
    async with serve_model([]) as model:
        url = model.openai_base_url  # served, then gone
    skill = orchestrator(
        id="planner",
        description="d",
        model={"provider": "openai", "model": "gone", "base_url": url, "timeout": 5},
    )
    async with serve_hub(skills=[skill]) as hub, httpx.AsyncClient(timeout=WAIT) as http:
        client = await A2AClient.from_url(hub.url, http=http)
        events = await collect(client, "hello")

    assert final_state(events) is TaskState.FAILED
    text = final_message(events)
    assert "cannot be reached" in text
    assert "model 'gone'" in text


async def test_an_anthropic_model_plans_the_same_way() -> None:
    weather = ScriptedAgent("weather", reply=answer("Rain in {text}"))
    script = [
        Turn(tool_calls=[ToolCall("a2a_weather", {"message": "Oslo"})]),
        Turn(text="It rains in Oslo.", chunks=3),
    ]
    async with planning(script, [weather], provider="anthropic") as (client, model, _):
        events = await collect(client, "Weather in Oslo?")

    assert final_state(events) is TaskState.COMPLETED
    assert streamed_text(events) == "It rains in Oslo."
    assert [m.text() for m in weather.messages] == ["Oslo"]
    results = [
        block
        for message in model.requests[1]["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 1
    assert "Rain in Oslo" in json.dumps(results[0])


async def test_json_mode_asks_for_a_schema_constrained_step() -> None:
    weather = ScriptedAgent("weather", reply=answer("Fog in {text}"))

    def script(request: Any) -> Turn:
        assert request.json_schema is not None
        if request.tool_results == 0 and "Result of" not in json.dumps(request.messages):
            choice = {"action": "call", "tool": "a2a_weather", "input": {"message": "London"}}
        else:
            choice = {"action": "answer", "text": "Foggy in London."}
        return Turn(text=json.dumps(choice))

    async with serve_model(script) as model, served_partners([weather]) as urls:
        skill = orchestrator(
            id="planner",
            description="d",
            model={
                "provider": "openai",
                "model": "small",
                "base_url": model.openai_base_url,
                "tool_calling": "json",
            },
            tools={"agents": ["weather"], "required": True},
        )
        async with (
            serve_hub(skills=[skill], partners=urls) as hub,
            httpx.AsyncClient(timeout=WAIT) as http,
        ):
            client = await A2AClient.from_url(hub.url, http=http)
            events = await collect(client, "Weather in London?")

    assert final_state(events) is TaskState.COMPLETED
    assert streamed_text(events) == "Foggy in London."
    assert [m.text() for m in weather.messages] == ["London"]
    first_schema = model.requests[0]["response_format"]["json_schema"]["schema"]
    # The first step must call a tool (tools.required): the answer is not offered yet.
    choices = first_schema.get("anyOf", [first_schema])
    assert [choice["properties"]["action"]["const"] for choice in choices] == ["call"]
    second_schema = model.requests[1]["response_format"]["json_schema"]["schema"]
    assert any(c["properties"]["action"]["const"] == "answer" for c in second_schema["anyOf"])


async def test_a_swarm_strategy_is_a_tool_over_the_plans_partners() -> None:
    quick = ScriptedAgent("quick", reply=answer("quick answer"))
    slow = ScriptedAgent("slow", reply=answer("slow answer", delay=5))
    script = [
        Turn(tool_calls=[ToolCall("swarm_race", {"message": "who is first?"})]),
        Turn(text="quick won"),
    ]
    async with planning(script, [quick, slow], tools={"agents": ["*"], "swarm": ["race"]}) as (
        client,
        model,
        _,
    ):
        events = await collect(client, "race them")

    assert final_state(events) is TaskState.COMPLETED
    offered = sorted(tool["function"]["name"] for tool in model.requests[0]["tools"])
    assert offered == ["a2a_quick", "a2a_slow", "swarm_race"]
    [returned] = tool_messages(model.requests[1])
    assert returned["content"] == "quick answer"
    assert [m.text() for m in quick.messages] == ["who is first?"]


async def test_a_local_skill_is_a_tool_and_the_plan_is_not_its_own_tool() -> None:
    script = [
        Turn(tool_calls=[ToolCall("skill_echo", {"message": "ping"})]),
        Turn(text="echoed"),
    ]
    async with serve_model(script) as model:
        skill = planner_for(model, tools={"skills": ["echo", "planner"]})
        async with (
            serve_hub(skills=[echo, skill]) as hub,
            httpx.AsyncClient(timeout=WAIT) as http,
        ):
            client = await A2AClient.from_url(hub.url, http=http)
            events = await collect(client, "echo it")

    assert final_state(events) is TaskState.COMPLETED
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    assert offered == ["skill_echo"]
    [returned] = tool_messages(model.requests[1])
    assert returned["content"] == "ping"


async def test_the_callers_data_parts_reach_the_model_with_the_text() -> None:
    script = [Turn(text="two items")]
    async with planning(script) as (client, model, _):
        message = user_message([Part(text="count these"), Part(data={"items": ["a", "b"]})])
        with anyio.fail_after(WAIT):
            async with client.stream(message, metadata={"skill": "planner"}) as stream:
                events = [event async for event in stream]

    assert final_state(events) is TaskState.COMPLETED
    [sent] = [m for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert sent["content"] == 'count these\n\n{"items": ["a", "b"]}'
