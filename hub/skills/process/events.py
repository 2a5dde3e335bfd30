"""What a process skill's output lines mean: the `output: jsonl` line format and its A2A
events (the table is in docs/skills.md, "Process skills")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeAlias

from hub.protocol import JsonObject, Message, agent_message

__all__ = [
    "TOOL_OUTPUT_LIMIT",
    "Approval",
    "Done",
    "Failure",
    "ProcessEvent",
    "Progress",
    "ResponseText",
    "parse_jsonl_line",
    "parse_text_line",
    "truncate",
]

TOOL_OUTPUT_LIMIT = 200
"""Most characters of a tool's input or output shown in a status message."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseText:
    """Text appended to the `assistant-response` artifact: the answer."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """A TASK_STATE_WORKING status update carrying `message`."""

    message: Message


@dataclass(frozen=True, slots=True, kw_only=True)
class Approval:
    """The program asks before going on: one line of answer is written to its stdin."""

    prompt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Done:
    """The program reports its work finished; the exit code decides the final state."""

    summary: str | None
    stats: JsonObject | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """The program reports an error: the task fails with `message`."""

    message: str


ProcessEvent: TypeAlias = ResponseText | Progress | Approval | Done | Failure


def truncate(text: str, limit: int = TOOL_OUTPUT_LIMIT) -> str:
    """`text` cut to at most `limit` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_text_line(line: str) -> ResponseText:
    """`output: text`: every line is response text (its line break kept)."""
    return ResponseText(text=line + "\n")


def parse_jsonl_line(line: str) -> ProcessEvent:
    """`output: jsonl`: one event per line. A line that is not an event of the format (not
    JSON, not an object, an unknown `type`, a missing field) is kept as response text."""
    try:
        event = json.loads(line)
    except ValueError:
        event = None
    parsed = _event(event) if isinstance(event, dict) else None
    return parsed if parsed is not None else parse_text_line(line)


def _event(event: dict[str, Any]) -> ProcessEvent | None:
    kind = event.get("type")
    if kind in ("text", "thinking"):
        text = event.get("text")
        if not isinstance(text, str):
            return None
        if kind == "thinking":
            # How the program works towards the answer is progress, not part of the answer.
            return _progress(text, {"processEvent": "thinking"})
        return ResponseText(text=text)
    if kind == "init":
        details = {key: value for key, value in event.items() if key != "type"}
        return _progress("started", {"processEvent": "init", "details": details})
    if kind == "tool_use":
        return _tool_use(event)
    if kind == "tool_result":
        return _tool_result(event)
    if kind == "approval_required":
        prompt = event.get("prompt")
        return Approval(prompt=prompt) if isinstance(prompt, str) and prompt else None
    if kind == "done":
        summary, stats = event.get("summary"), event.get("stats")
        if not isinstance(summary, str | None) or not isinstance(stats, dict | None):
            return None
        return Done(summary=summary, stats=stats)
    if kind == "error":
        message = event.get("message")
        if not isinstance(message, str | None):
            return None
        return Failure(message=message or "the program reported an error")
    return None


def _tool_use(event: dict[str, Any]) -> Progress | None:
    name, tool_input = event.get("name"), event.get("input")
    if not isinstance(name, str):
        return None
    shown = name if tool_input is None else f"{name} {_compact(tool_input)}"
    return _progress(truncate(shown), {"processEvent": "tool_use", "tool": name})


def _tool_result(event: dict[str, Any]) -> Progress | None:
    output, name = event.get("output"), event.get("name")
    if output is None or not isinstance(name, str | None):
        return None
    text = output if isinstance(output, str) else _compact(output)
    metadata = {"processEvent": "tool_result", "tool": name, "isError": bool(event.get("is_error"))}
    return _progress(truncate(text) or "(no output)", metadata)


def _progress(text: str, metadata: JsonObject) -> Progress:
    message = agent_message(text).model_copy(update={"metadata": metadata})
    return Progress(message=message)


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
