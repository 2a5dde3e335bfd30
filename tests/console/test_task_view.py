"""The task page's views, built from tasks and plans as the hub keeps them: a swarm's result
shown once, streamed text joined, messages with their sender and time, a plan's transcript
and its waterfall."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from pydantic import ValidationError

from hub.config import Settings, UiSettings
from hub.console.children import ChildView
from hub.console.plan_view import plan_view
from hub.console.task_view import message_view, task_view
from hub.console.timeline import AXIS, timeline
from hub.llm import Entry, ToolCall
from hub.orchestrator import Journal, StepRecord
from hub.orchestrator.journal import CallRecord, Spent
from hub.protocol import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    agent_message,
    id_time,
    new_id,
)
from tests.console.hubs import console_hub

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def swarm_task() -> Task:
    result = {
        "strategy": "race",
        "reason": "first answer",
        "answer": "bonjour",
        "branches": [{"agent": "fr", "task_id": "c1", "state": "completed", "seconds": 0.4}],
    }
    return Task(
        id=new_id(),
        context_id="ctx",
        status=TaskStatus(state=TaskState.COMPLETED, timestamp=at(1)),
        history=[Message(message_id="m1", role=Role.USER, parts=[Part(text="good morning")])],
        artifacts=[
            Artifact(
                artifact_id="a1",
                name="swarm",
                parts=[Part(text="bonjour"), Part(data=result, media_type="application/json")],
                metadata={"strategy": "race", "reason": "first answer"},
            )
        ],
        metadata={"skill": "swarm", "strategy": "race"},
    )


def test_a_swarm_result_is_shown_once_as_data_and_not_again_as_metadata() -> None:
    view = task_view(swarm_task(), base="/ui/tasks/t", delegation=None)
    [artifact] = view.artifacts
    assert [part.kind for part in artifact.parts] == ["text", "data"]
    assert '"branches"' in artifact.parts[1].text
    assert artifact.metadata == ""


def test_artifact_metadata_that_says_more_than_its_data_is_shown() -> None:
    task = swarm_task()
    assert task.artifacts is not None
    task.artifacts[0].metadata = {"strategy": "race", "note": "kept"}
    [artifact] = task_view(task, base="", delegation=None).artifacts
    assert '"note": "kept"' in artifact.metadata


def test_a_message_streamed_in_chunks_reads_as_one_text_and_keeps_its_file_numbers() -> None:
    message = Message(
        message_id="m1",
        role=Role.AGENT,
        parts=[Part(text="Hel"), Part(text="lo, "), Part(text="world"), Part(raw="AA==")],
        metadata={"agent": "billing"},
    )
    view = message_view(message, base="/ui/tasks/t", index=2, skill="delegate")
    assert [part.text for part in view.parts] == ["Hello, world", "file"]
    assert view.parts[1].href == "/ui/tasks/t/files/messages/2/3"
    assert (view.role, view.sender, view.agent) == ("agent", "delegate", "billing")


def test_a_message_has_the_time_of_its_id_or_the_one_given() -> None:
    made = agent_message("hi")
    assert message_view(made, base="", index=1).time == (
        id_time(made.message_id).isoformat(timespec="milliseconds")  # type: ignore[union-attr]
    )
    theirs = Message(message_id="client-1", role=Role.USER, parts=[Part(text="hi")])
    assert message_view(theirs, base="", index=0).time == ""
    given = message_view(theirs, base="", index=0, caller="alice", sent=at(0))
    assert (given.time, given.sender) == ("2026-01-01T00:00:00.000+00:00", "alice")


def plan() -> Journal:
    call = ToolCall(id="c1", tool="a2a_fr", arguments={"message": "bonjour?"})
    return Journal(
        transcript=[
            Entry(role="user", text="earlier turn"),
            Entry(role="assistant", text="earlier answer"),
            Entry(role="user", text="translate"),
            Entry(role="assistant", text="asking fr", calls=(call,)),
            Entry(role="tool", call_id="c1", tool="a2a_fr", text="bonjour"),
            Entry(role="assistant", text="It is bonjour."),
        ],
        turn_start=2,
        started=at(0),
        steps=[
            StepRecord(
                kind="model_step",
                started=at(0),
                seconds=1.0,
                model="scripted",
                input_tokens=100,
                output_tokens=20,
                cost=0.001,
            ),
            StepRecord(
                kind="tool_call",
                started=at(1),
                seconds=2.0,
                call_id="c1",
                tool="a2a_fr",
                partner="fr",
                partner_task="p1",
                state="completed",
            ),
            StepRecord(
                kind="model_step",
                started=at(3),
                seconds=1.0,
                model="scripted",
                input_tokens=150,
                output_tokens=10,
            ),
        ],
        spent=Spent(steps=2, tool_calls=1, input_tokens=250, output_tokens=30, cost=0.001),
        ended=True,
    )


def test_a_plans_transcript_shows_this_turn_with_its_calls_and_tokens() -> None:
    view = plan_view(plan())
    assert [(turn.role, turn.text) for turn in view.turns] == [
        ("user", "translate"),
        ("assistant", "asking fr"),
        ("tool", "bonjour"),
        ("assistant", "It is bonjour."),
    ]
    asking = view.turns[1]
    assert (asking.step, asking.tokens, asking.cost) == (1, "100 in · 20 out", "$0.0010")
    assert [call.tool for call in asking.calls] == ["a2a_fr"]
    assert '"message": "bonjour?"' in asking.calls[0].arguments
    result = view.turns[2]
    assert (result.tool, result.partner, result.tokens) == ("a2a_fr", "fr", "completed · 2.00 s")
    assert view.turns[3].cost == ""  # a step that cost nothing says no price
    assert (view.input_tokens, view.output_tokens, view.cost, view.running) == (
        250,
        30,
        "$0.0010",
        False,
    )


def test_the_waterfall_places_each_step_by_its_start_and_length() -> None:
    child = ChildView(
        agent="fr",
        task_id="p1",
        state="completed",
        seconds=2.0,
        answer="",
        error="",
        note="",
        winner=False,
    )
    drawn = timeline(started=at(0), ended=at(4), now=at(9), plan=plan(), children=[child])
    assert drawn is not None
    assert drawn.total == 4.0
    # The partner call is the plan's: shown once, not again as a branch.
    assert [(bar.kind, bar.label, bar.x, bar.width) for bar in drawn.bars] == [
        ("model", "model step 1", 0, AXIS // 4),
        ("partner", "a2a_fr", AXIS // 4, AXIS // 2),
        ("model", "model step 2", 3 * AXIS // 4, AXIS // 4),
    ]
    assert drawn.bars[1].task_id == "p1"


def test_a_call_in_flight_runs_until_now() -> None:
    running = plan().model_copy(
        update={
            "ended": False,
            "steps": plan().steps[:1],
            "calls": [
                CallRecord(
                    call=ToolCall(id="c1", tool="a2a_fr"),
                    state="running",
                    partner="fr",
                    started=at(1),
                )
            ],
        }
    )
    drawn = timeline(started=at(0), ended=None, now=at(5), plan=running, children=[])
    assert drawn is not None
    call = drawn.bars[-1]
    assert (call.running, call.seconds, call.x, call.width) == (True, 4.0, 200, 800)


def test_a_swarms_branches_start_with_the_task() -> None:
    branches = [
        ChildView(
            agent=name,
            task_id=name,
            state="completed",
            seconds=seconds,
            answer="",
            error="",
            note="",
            winner=False,
        )
        for name, seconds in (("fr", 1.0), ("de", 2.0), ("it", None))
    ]
    drawn = timeline(started=at(0), ended=at(2), now=at(3), plan=None, children=branches)
    assert drawn is not None
    assert [(bar.label, bar.x, bar.width) for bar in drawn.bars] == [
        ("fr", 0, AXIS // 2),
        ("de", 0, AXIS),
    ]
    assert timeline(started=at(0), ended=None, now=at(1), plan=None, children=[]) is None


@pytest.mark.parametrize(
    "url",
    ["http://jaeger:16686/trace/", "ftp://jaeger/{trace_id}", "jaeger:16686/trace/{trace_id}"],
)
def test_a_trace_url_without_its_place_or_not_http_is_a_settings_error(url: str) -> None:
    with pytest.raises(ValidationError, match=r"ui\.trace_url"):
        Settings.model_validate({"ui": {"trace_url": url}})


def test_a_trace_url_links_a_known_trace_only() -> None:
    tempo = (
        "https://grafana.example/explore?left=%7B%22queries%22:%5B%7B%22query%22:"
        "%22{trace_id}%22%7D%5D%7D"
    )
    ui = UiSettings(trace_url=tempo)
    assert ui.trace_link("abc") == tempo.replace("{trace_id}", "abc")
    assert ui.trace_link("") == ""
    assert UiSettings().trace_link("abc") == ""


@pytest.mark.anyio
async def test_a_swarms_page_shows_its_result_once() -> None:
    async with (
        console_hub({"fast": 0.0, "steady": 0.0}) as hub,
        httpx.AsyncClient(timeout=30) as http,
    ):
        body = {
            "message": {"messageId": "m-swarm", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "metadata": {"skill": "swarm", "strategy": "broadcast", "agents": ["fast", "steady"]},
        }
        sent = await http.post(f"{hub.url}/message:send", json=body, headers={"A2A-Version": "1.0"})
        task = sent.json()["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        page = (await http.get(f"{hub.url}/ui/tasks/{task['id']}")).text
    assert page.count("&#34;branches&#34;") == 1
    assert page.count("&#34;reason&#34;") == 1
    assert page.count('<details class="data"') == 1
