"""`tool_calling: json`: tools for a model that cannot call them natively.

Each step asks the model for one JSON object, constrained by a JSON Schema through the
server's structured output (OpenAI's `response_format`, which llama.cpp's server, vLLM and
Ollama turn into a grammar): `{"action": "call", "tool": ..., "input": {...}}` to call one
tool, or `{"action": "answer", "text": ...}` to answer. A tool's input keeps only its required
fields, and strings are bounded, so a small model has little room to wander. Tool results go
back to the model as user turns ("Result of ..."). A server that ignores the schema and
answers plain text is read as answering with that text.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from hub.llm.transcript import Entry, ToolCall, ToolSpec

__all__ = ["messages", "read_step", "step_schema"]

_MAX_STRING = 300
_MAX_ANSWER = 2000

_FORMAT = """Reply with one JSON object and nothing else.
To use a tool: {{"action": "call", "tool": "{example}", "input": {{"message": "..."}}}}
To answer the user once a tool has answered: {{"action": "answer", "text": "..."}}"""


def step_schema(tools: Sequence[ToolSpec], *, answer: bool = True) -> dict[str, Any]:
    """The JSON Schema of one step: a call of one of `tools`, or (with `answer`) an answer."""
    answering = {
        "type": "object",
        "properties": {
            "action": {"const": "answer"},
            "text": {"type": "string", "maxLength": _MAX_ANSWER},
        },
        "required": ["action", "text"],
        "additionalProperties": False,
    }
    calls = [
        {
            "type": "object",
            "properties": {
                "action": {"const": "call"},
                "tool": {"const": tool.name},
                "input": _compact(tool.input_schema),
            },
            "required": ["action", "tool", "input"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    choices = [*calls, answering] if answer else calls
    return choices[0] if len(choices) == 1 else {"anyOf": choices}


def _compact(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema with its required properties only, strings bounded."""
    required = [name for name in schema.get("required", []) if name in schema.get("properties", {})]
    properties = {}
    for name in required:
        prop = dict(schema["properties"][name])
        prop.pop("description", None)
        if prop.get("type") == "string":
            prop.setdefault("maxLength", _MAX_STRING)
            prop.pop("minLength", None)
        properties[name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def messages(
    instructions: str, transcript: Sequence[Entry], tools: Sequence[ToolSpec]
) -> list[Any]:
    """The transcript as pydantic-ai messages in the JSON form: the tools and the answer
    format in the system prompt, each model turn as the JSON it answered, tool results as
    user turns."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        UserPromptPart,
    )

    listing = "\n".join(f"- {tool.name}: {tool.description}" for tool in tools)
    example = tools[0].name if tools else "<tool name>"
    system = "\n\n".join(
        part
        for part in (
            instructions,
            f"Tools:\n{listing}" if tools else "",
            _FORMAT.format(example=example),
        )
        if part
    )
    result: list[Any] = []
    pending: list[Any] = [SystemPromptPart(system)]
    for entry in transcript:
        if entry.role == "assistant":
            result.append(ModelRequest(parts=pending))
            pending = []
            result.append(ModelResponse(parts=[TextPart(_as_json(entry))]))
        elif entry.role == "tool":
            pending.append(
                UserPromptPart(
                    f"Result of {entry.tool}:\n{entry.text}\n\nReply with one JSON object: "
                    'another call, or {"action": "answer", "text": ...} with what you learned.'
                )
            )
        else:
            pending.append(UserPromptPart(entry.text))
    if pending:
        result.append(ModelRequest(parts=pending))
    return result


def _as_json(entry: Entry) -> str:
    if entry.calls:
        call = entry.calls[0]
        return json.dumps({"action": "call", "tool": call.tool, "input": call.arguments})
    return json.dumps({"action": "answer", "text": entry.text})


def read_step(text: str, tools: Sequence[ToolSpec]) -> tuple[str, tuple[ToolCall, ...]]:
    """The answer's text and the call it makes (at most one)."""
    try:
        choice = json.loads(text)
    except ValueError:
        return _salvaged(text, tools)
    if not isinstance(choice, dict):
        return text.strip(), ()
    if choice.get("action") == "call" and isinstance(choice.get("tool"), str):
        arguments = choice.get("input")
        call = ToolCall(
            id=f"call-{uuid.uuid4().hex[:12]}",
            tool=choice["tool"],
            arguments=arguments if isinstance(arguments, dict) else {},
        )
        return "", (call,)
    answer = choice.get("text")
    return (answer if isinstance(answer, str) else text.strip()), ()


_ANSWER_TEXT = re.compile(r'"action"\s*:\s*"answer"\s*,\s*"text"\s*:\s*"((?:[^"\\]|\\.)*)')
_CALL = re.compile(
    r'"action"\s*:\s*"call"\s*,\s*"tool"\s*:\s*"([^"]+)"'
    r'(?:\s*,\s*"input"\s*:\s*\{\s*"message"\s*:\s*"((?:[^"\\]|\\.)*))?'
)


def _salvaged(text: str, tools: Sequence[ToolSpec]) -> tuple[str, tuple[ToolCall, ...]]:
    """A JSON step cut short (the model ran out of tokens): the call it had begun, with the
    message as far as it got, or the answer it had written; else the whole reply as the
    answer."""
    call = _CALL.search(text)
    if call is not None and call.group(1) in {tool.name for tool in tools}:
        message = _unescaped(call.group(2) or "").strip() or "(no message)"
        return "", (
            ToolCall(
                id=f"call-{uuid.uuid4().hex[:12]}",
                tool=call.group(1),
                arguments={"message": message},
            ),
        )
    answer = _ANSWER_TEXT.search(text)
    if answer is None:
        return text.strip(), ()
    return _unescaped(answer.group(1)), ()


def _unescaped(fragment: str) -> str:
    try:
        return str(json.loads(f'"{fragment}"'))
    except ValueError:
        return fragment
