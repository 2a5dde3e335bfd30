"""The conversation a plan keeps: the hub's own record of it, independent of any provider.

A transcript is a list of entries: the caller's messages, the model's answers (text and the
tool calls it made) and the tools' results. It is what the plan journal and the stored
conversation hold, what the console shows, and what `hub.llm.chat` renders into a provider's
messages for each step.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = ["Entry", "ToolCall", "ToolSpec", "Transcript"]


class ToolCall(BaseModel):
    """One tool call the model asked for."""

    model_config = ConfigDict(frozen=True)

    id: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Entry(BaseModel):
    """One turn of the conversation.

    `user`: a caller's message (`text`). `assistant`: the model's answer, its `text` and the
    `calls` it made. `tool`: the result (`text`) of the call `call_id` to `tool`.
    """

    model_config = ConfigDict(frozen=True)

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    call_id: str | None = None
    tool: str | None = None


class ToolSpec(BaseModel):
    """A tool as the model sees it: name, description and the JSON Schema of its input."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    input_schema: dict[str, Any]


Transcript = list[Entry]
TRANSCRIPT = TypeAdapter(list[Entry])
