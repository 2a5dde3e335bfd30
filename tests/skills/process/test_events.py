"""The jsonl line format, line by line, and the argument templating (no process runs)."""

from __future__ import annotations

import json

import pytest

from hub.config import ProcessSkillSettings
from hub.errors import SkillError
from hub.protocol import Message, Part, Role
from hub.skills.process.command import build_argv
from hub.skills.process.events import (
    Approval,
    Done,
    Failure,
    Progress,
    ResponseText,
    parse_jsonl_line,
    parse_text_line,
)


def line(**event: object) -> str:
    return json.dumps(event)


def test_text_is_response_text_and_thinking_is_progress() -> None:
    assert parse_jsonl_line(line(type="text", text="Hi")) == ResponseText(text="Hi")
    event = parse_jsonl_line(line(type="thinking", text="Hmm"))
    assert isinstance(event, Progress)
    assert event.message.text() == "Hmm"
    assert event.message.metadata == {"processEvent": "thinking"}


def test_init_is_a_working_message_with_its_details() -> None:
    event = parse_jsonl_line(line(type="init", session="s-1"))
    assert isinstance(event, Progress)
    assert event.message.text() == "started"
    assert event.message.metadata == {"processEvent": "init", "details": {"session": "s-1"}}


def test_tool_use_shows_the_tool_and_its_input() -> None:
    event = parse_jsonl_line(line(type="tool_use", name="Bash", input={"command": "ls"}))
    assert isinstance(event, Progress)
    assert event.message.text() == 'Bash {"command":"ls"}'
    assert event.message.metadata == {"processEvent": "tool_use", "tool": "Bash"}


def test_tool_result_output_is_cut_to_200_characters() -> None:
    event = parse_jsonl_line(line(type="tool_result", name="Bash", output="y" * 1000))
    assert isinstance(event, Progress)
    assert len(event.message.text()) == 200
    assert event.message.text() == "y" * 199 + "…"
    assert event.message.metadata == {
        "processEvent": "tool_result",
        "tool": "Bash",
        "isError": False,
    }


def test_short_tool_result_is_kept_whole() -> None:
    event = parse_jsonl_line(line(type="tool_result", output="ok", is_error=True))
    assert isinstance(event, Progress)
    assert event.message.text() == "ok"
    assert event.message.metadata is not None
    assert event.message.metadata["isError"] is True


def test_done_error_and_approval() -> None:
    assert parse_jsonl_line(line(type="done", summary="ok", stats={"n": 1})) == Done(
        summary="ok", stats={"n": 1}
    )
    assert parse_jsonl_line(line(type="done")) == Done(summary=None, stats=None)
    assert parse_jsonl_line(line(type="error", message="bad")) == Failure(message="bad")
    assert parse_jsonl_line(line(type="error")) == Failure(message="the program reported an error")
    assert parse_jsonl_line(line(type="approval_required", prompt="Go?")) == Approval(prompt="Go?")


@pytest.mark.parametrize(
    "raw",
    [
        "not json at all",
        '{"type": "text", "text": "unterminated',
        "[1, 2, 3]",
        '"a string"',
        line(type="mystery"),
        line(text="no type"),
        line(type="text"),
        line(type="text", text=5),
        line(type="tool_use"),
        line(type="tool_result", name="Bash"),
        line(type="approval_required"),
        line(type="done", stats=[1]),
        line(type="error", message=7),
    ],
)
def test_a_line_that_is_not_an_event_is_kept_as_text(raw: str) -> None:
    assert parse_jsonl_line(raw) == ResponseText(text=raw + "\n")


def test_text_output_keeps_every_line_as_it_is() -> None:
    assert parse_text_line('{"type": "done"}') == ResponseText(text='{"type": "done"}\n')


def settings(*command: str) -> ProcessSkillSettings:
    return ProcessSkillSettings(id="t", description="d", command=command)


def user(*parts: Part) -> Message:
    return Message(message_id="m", role=Role.USER, parts=list(parts))


def test_each_placeholder_fills_exactly_one_argument() -> None:
    evil = "--evil; rm -rf / $(touch x) {task_id} 'quoted' \"double\"\nsecond line"
    argv = build_argv(
        settings("agent", "--prompt={text}", "{text}", "--id", "{task_id}", "{context_id}"),
        user(Part(text=evil)),
        task_id="t-1",
        context_id="c-1",
    )
    assert argv == ["agent", f"--prompt={evil}", evil, "--id", "t-1", "c-1"]


def test_data_placeholder_is_the_json_array_of_data_parts() -> None:
    argv = build_argv(
        settings("agent", "{data}"),
        user(Part(text="x"), Part(data={"a": 1}), Part(data=[2])),
        task_id="t",
        context_id="c",
    )
    assert json.loads(argv[1]) == [{"a": 1}, [2]]


def test_a_nul_character_cannot_reach_the_program() -> None:
    with pytest.raises(SkillError):
        build_argv(
            settings("agent", "{text}"), user(Part(text="a\0b")), task_id="t", context_id="c"
        )


@pytest.mark.parametrize(
    "command",
    [[], ["{text}"], ["agent", "{txt}"], [""]],
)
def test_bad_commands_are_refused_in_the_settings(command: list[str]) -> None:
    with pytest.raises(ValueError, match="command"):
        ProcessSkillSettings.model_validate({"id": "t", "description": "d", "command": command})
