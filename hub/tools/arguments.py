"""What a tool call takes: the arguments model, its JSON Schema, and the message it becomes.

The same arguments serve every tool, remote or local, so a model that learnt to call one
can call them all: `message` (required), `context_id` and `task_id` to continue a
conversation or answer a question, `skill` to pick one of the agent's skills, `data` for
structured input and `files` for attachments.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hub.errors import InvalidParamsError
from hub.protocol import JsonObject, Message, Part, user_message

__all__ = ["FileArgument", "ToolArguments", "input_schema", "parse_arguments"]


class FileArgument(BaseModel):
    """A file: by `url`, or inline as base64 `bytes`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str | None = None
    bytes: str | None = None
    name: str | None = None
    media_type: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> FileArgument:
        if (self.url is None) == (self.bytes is None):
            raise ValueError("a file needs exactly one of 'url' or 'bytes'")
        if self.bytes is not None:
            try:
                base64.b64decode(self.bytes, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("'bytes' must be base64") from None
        return self

    def part(self) -> Part:
        return Part(url=self.url, raw=self.bytes, filename=self.name, media_type=self.media_type)


class ToolArguments(BaseModel):
    """The arguments of one tool call (see `input_schema` for their meaning)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    message: str = Field(min_length=1)
    context_id: str | None = None
    task_id: str | None = None
    skill: str | None = None
    data: Any = None
    files: tuple[FileArgument, ...] = ()

    def to_message(self) -> Message:
        """The user message that carries these arguments to the agent."""
        parts = [Part(text=self.message)]
        if self.data is not None:
            parts.append(Part(data=self.data, media_type="application/json"))
        parts.extend(file.part() for file in self.files)
        return user_message(parts, context_id=self.context_id, task_id=self.task_id)

    def metadata(self) -> JsonObject | None:
        """Request metadata: the chosen skill, when one is."""
        return {"skill": self.skill} if self.skill else None


Arguments = TypeVar("Arguments", bound=ToolArguments)


@overload
def parse_arguments(
    tool: str, arguments: Mapping[str, Any], skills: Sequence[str] = ()
) -> ToolArguments: ...


@overload
def parse_arguments(
    tool: str, arguments: Mapping[str, Any], skills: Sequence[str] = (), *, model: type[Arguments]
) -> Arguments: ...


def parse_arguments(
    tool: str,
    arguments: Mapping[str, Any],
    skills: Sequence[str] = (),
    *,
    model: type[ToolArguments] = ToolArguments,
) -> ToolArguments:
    """Validate a call's arguments (as `model`, a `ToolArguments` with more fields, when a
    tool takes more).

    Raises:
        InvalidParamsError: an argument is missing, unknown or of the wrong type, or `skill`
            is not one of `skills` (when the agent lists any); the message names each.
    """
    try:
        parsed = model.model_validate(dict(arguments))
    except ValidationError as exc:
        problems = [
            (".".join(str(step) for step in error["loc"]) or "arguments", error["msg"])
            for error in exc.errors()
        ]
        listed = "; ".join(f"{where}: {what}" for where, what in problems)
        raise InvalidParamsError(
            f"tool '{tool}' was called with invalid arguments ({listed})", violations=problems
        ) from None
    if parsed.skill is not None and skills and parsed.skill not in skills:
        known = ", ".join(skills)
        raise InvalidParamsError(
            f"tool '{tool}' has no skill {parsed.skill!r} (known: {known})",
            violations=[("skill", f"must be one of: {known}")],
        )
    return parsed


def input_schema(skills: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments; `skill` is an enum of `skills` when given."""
    skill: dict[str, Any] = {
        "type": "string",
        "description": "Which of the agent's skills to use; the agent chooses when omitted.",
    }
    if skills:
        skill["enum"] = list(skills)
    return {
        "type": "object",
        "properties": {
            "message": {
                "type": "string",
                "minLength": 1,
                "description": "What to ask the agent, in plain language.",
            },
            "context_id": {
                "type": "string",
                "description": "Continue the conversation with this context id from an earlier "
                "result.",
            },
            "task_id": {
                "type": "string",
                "description": "Answer the question of the task with this id (a result whose "
                "state is input-required or auth-required).",
            },
            "skill": skill,
            "data": {"description": "Structured input, sent to the agent as a JSON data part."},
            "files": {
                "type": "array",
                "description": "Files to attach, each by url or as base64 bytes.",
                "items": {
                    "type": "object",
                    "properties": {
                        "url": {"type": "string"},
                        "bytes": {"type": "string", "contentEncoding": "base64"},
                        "name": {"type": "string"},
                        "media_type": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
            },
        },
        "required": ["message"],
        "additionalProperties": False,
    }
