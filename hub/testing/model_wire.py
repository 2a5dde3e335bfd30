"""The wire formats the scripted model server speaks (`hub.testing.model_server`): an answer
as an OpenAI Chat Completions or Anthropic Messages body, or as the server-sent events of its
stream; an error in each provider's error JSON; the text and blocks of a message sent."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

__all__ = ["Answer", "Encoded", "Provider", "blocks", "encode", "error_body", "split", "text"]

Provider = Literal["openai", "anthropic"]

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error"}
_ERROR_TYPES |= {404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}


@dataclass(frozen=True, slots=True)
class Answer:
    """What one answer says: its id, the model named, the text and the tool calls (id, name,
    arguments as JSON), the (input, output) token usage, and how many deltas the text and
    each call's arguments are cut into when streamed."""

    ident: str
    model: str
    text: str
    calls: Sequence[tuple[str, str, str]]
    usage: tuple[int, int]
    chunks: int


@dataclass(frozen=True, slots=True)
class Encoded:
    """An answer as a whole JSON body, and as the frames of its stream; `first` is the index
    of the frame that holds the first delta (where a hanging answer stops)."""

    body: dict[str, Any]
    frames: list[bytes]
    first: int


def encode(provider: Provider, answer: Answer, *, include_usage: bool = False) -> Encoded:
    """`answer` in the provider's format; `include_usage` adds the OpenAI stream's usage
    chunk (the client asked for it with `stream_options.include_usage`)."""
    if provider == "openai":
        return _openai(answer, include_usage=include_usage)
    return _anthropic(answer)


def error_body(provider: Provider, status: int, message: str) -> dict[str, Any]:
    """An error of `status` in the provider's error JSON."""
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    detail = {"type": kind, "message": message}
    if provider == "openai":
        return {"error": detail | {"param": None, "code": None}}
    return {"type": "error", "error": detail}


def blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The content blocks (or parts) of a message sent; none when its content is a string."""
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def text(message: Mapping[str, Any]) -> str:
    """The text of a message sent: its string content, or its text blocks joined."""
    if isinstance(content := message.get("content"), str):
        return content
    return "".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text")


def split(whole: str, parts: int) -> list[str]:
    """`whole` cut into `parts` pieces of near-equal length (fewer when it is shorter)."""
    parts = min(parts, len(whole))
    bounds = [len(whole) * index // parts for index in range(parts + 1)] if parts else []
    return [whole[start:end] for start, end in pairwise(bounds)]


def _sse(data: Any, event: str | None = None) -> bytes:
    line = f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
    return (f"event: {event}\n{line}" if event else line).encode()


def _openai(answer: Answer, *, include_usage: bool) -> Encoded:
    """A `chat.completion`, or its `chat.completion.chunk` frames then `[DONE]`."""
    head = {"id": answer.ident, "created": int(time.time()), "model": answer.model}
    prompt, completion = answer.usage
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    usage["total_tokens"] = prompt + completion
    tools: list[dict[str, Any]] = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        for call_id, name, arguments in answer.calls
    ]
    reason = "tool_calls" if tools else "stop"
    message = {"role": "assistant", "content": answer.text or (None if tools else "")}
    choice = {"index": 0, "message": message | ({"tool_calls": tools} if tools else {})}
    choice |= {"finish_reason": reason, "logprobs": None}
    body = head | {"object": "chat.completion", "choices": [choice], "usage": usage}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return head | {"object": "chat.completion.chunk", "choices": [choice]}

    deltas: list[dict[str, Any]] = [{"content": p} for p in split(answer.text, answer.chunks)]
    for index, tool in enumerate(tools):
        function = tool["function"]
        deltas.append(
            {"tool_calls": [tool | {"index": index, "function": function | {"arguments": ""}}]}
        )
        for piece in split(function["arguments"], answer.chunks):
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    deltas = deltas or [{"content": ""}]
    deltas[0] = {"role": "assistant"} | deltas[0]
    chunks = [chunk(delta) for delta in deltas] + [chunk({}, reason)]
    if include_usage:
        chunks.append(head | {"object": "chat.completion.chunk", "choices": [], "usage": usage})
    return Encoded(body, [_sse(each) for each in chunks] + [_sse("[DONE]")], 0)


def _anthropic(answer: Answer) -> Encoded:
    """A `message`, or its stream: message_start, a content block's start, deltas and stop
    for each block, message_delta (stop reason, usage), message_stop."""
    said = [("text", answer.text)] if answer.text else []
    said += [("tool_use", arguments) for _, _, arguments in answer.calls]
    content: list[dict[str, Any]] = [{"type": "text", "text": answer.text}] if answer.text else []
    content += [
        {"type": "tool_use", "id": call_id, "name": name, "input": json.loads(arguments)}
        for call_id, name, arguments in answer.calls
    ]
    reason = "tool_use" if answer.calls else "end_turn"
    usage = {"input_tokens": answer.usage[0], "output_tokens": answer.usage[1]}
    body: dict[str, Any] = {"id": answer.ident, "type": "message", "role": "assistant"}
    body["model"] = answer.model
    body |= {"content": content, "stop_reason": reason, "stop_sequence": None, "usage": usage}
    opening = body | {"content": [], "stop_reason": None, "usage": usage | {"output_tokens": 0}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": opening}]
    first = 0
    for index, (block, (kind, whole)) in enumerate(zip(content, said, strict=True)):
        start = block | {"text": ""} if kind == "text" else block | {"input": {}}
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        first = first or len(events)
        for piece in split(whole, answer.chunks):
            delta = {"type": "text_delta", "text": piece}
            if kind == "tool_use":
                delta = {"type": "input_json_delta", "partial_json": piece}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    ending = {"stop_reason": reason, "stop_sequence": None}
    events.append({"type": "message_delta", "delta": ending, "usage": usage})
    events.append({"type": "message_stop"})
    return Encoded(body, [_sse(event, event["type"]) for event in events], first)
