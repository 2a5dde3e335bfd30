"""What a tool call takes: the arguments model, its JSON Schema, and the message it becomes.

The same arguments serve every tool, remote or local, so a model that learnt to call one
can call them all: `message` (required), `context_id` and `task_id` to continue a
conversation or answer a question, `skill` to pick one of the agent's skills, `data` for
structured input and `files` for attachments. A local skill that takes options (the routing
skills' `agent`, `strategy`, ...) has a subclass with those fields. Every schema is generated
from its model (`arguments_schema`), so what a tool definition says is what a call accepts.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import ErrorDetails, core_schema

from hub.errors import FieldViolation, InvalidParamsError
from hub.protocol import JsonObject, Message, Part, user_message

__all__ = [
    "FileArgument",
    "ToolArguments",
    "arguments_schema",
    "input_schema",
    "parse_arguments",
    "validated",
]


class FileArgument(BaseModel):
    """A file to attach: by `url`, or inline as base64 `bytes`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str | None = None
    bytes: str | None = Field(default=None, json_schema_extra={"contentEncoding": "base64"})
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
    """The arguments of one tool call; a tool that takes more (the routing skills' `agent`,
    `strategy`, ...) has a subclass with those fields, which `options` turns into the
    request's metadata."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    message: str = Field(min_length=1, description="What to ask the agent, in plain language.")
    context_id: str | None = Field(
        default=None,
        description="Continue the conversation with this context id from an earlier result.",
    )
    task_id: str | None = Field(
        default=None,
        description="Answer the question of the task with this id (a result whose state is "
        "input-required or auth-required).",
    )
    skill: str | None = Field(
        default=None,
        description="Which of the agent's skills to use; the agent chooses when omitted.",
    )
    data: Any = Field(
        default=None, description="Structured input, sent to the agent as a JSON data part."
    )
    files: tuple[FileArgument, ...] = Field(
        default=(), description="Files to attach, each by url or as base64 bytes."
    )

    def to_message(self) -> Message:
        """The user message that carries these arguments to the agent."""
        parts = [Part(text=self.message)]
        if self.data is not None:
            parts.append(Part(data=self.data, media_type="application/json"))
        parts.extend(file.part() for file in self.files)
        return user_message(parts, context_id=self.context_id, task_id=self.task_id)

    def metadata(self) -> JsonObject | None:
        """Request metadata for a partner: the chosen skill, when one is."""
        return {"skill": self.skill} if self.skill else None

    def options(self) -> JsonObject:
        """Request metadata for the local skill that runs the call: what a subclass's own
        fields say (the base has none). A routing skill reads `skill` as the partner's
        skill, `agentSkill`."""
        return {}


Model = TypeVar("Model", bound=BaseModel)


def validated(
    model: type[Model],
    given: Mapping[str, Any],
    refusal: str,
    *,
    names: Mapping[str, str] | None = None,
) -> Model:
    """`given` validated as `model`.

    Raises:
        InvalidParamsError: `refusal`, then each problem: where (a field's path, its first
            step as `names` spells it when the caller knows the field by another name) and
            what is wrong, with the value given when it is a single one.
    """
    try:
        return model.model_validate(dict(given))
    except ValidationError as exc:
        problems = [_violation(error, names or {}) for error in exc.errors()]
        listed = "; ".join(f"{where}: {what}" for where, what in problems)
        raise InvalidParamsError(f"{refusal} ({listed})", violations=problems) from None


def _violation(error: ErrorDetails, names: Mapping[str, str]) -> FieldViolation:
    steps = [str(step) for step in error["loc"]]
    if steps:
        steps[0] = names.get(steps[0], steps[0])
    value = error.get("input")
    # The value given, beside what was expected of it (not beside "not permitted").
    single = isinstance(value, str | int | float) and error["type"] != "extra_forbidden"
    shown = f", not {value!r}" if single and steps else ""
    return ".".join(steps) or "arguments", error["msg"] + shown


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
    parsed = validated(model, arguments, f"tool '{tool}' was called with invalid arguments")
    if parsed.skill is not None and skills and parsed.skill not in skills:
        known = ", ".join(skills)
        raise InvalidParamsError(
            f"tool '{tool}' has no skill {parsed.skill!r} (known: {known})",
            violations=[("skill", f"must be one of: {known}")],
        )
    return parsed


class _ToolSchema(GenerateJsonSchema):
    """A model's JSON Schema as a tool definition wants it: no titles, and an optional
    argument typed as its value (leaving it out is how a caller says none), not as a union
    with null that some model APIs refuse."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        generated = super().default_schema(schema)
        if generated.get("default", ()) is None:
            del generated["default"]
        return generated


def _inlined(node: Any, definitions: Mapping[str, Any]) -> Any:
    """`node` with each `$ref` replaced by its definition and every title dropped (a tool's
    schema is read whole, without `$defs`)."""
    if isinstance(node, list):
        return [_inlined(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = definitions[node["$ref"].rsplit("/", 1)[-1]]
        node = {**target, **{key: value for key, value in node.items() if key != "$ref"}}
    return {
        key: (
            {name: _inlined(value, definitions) for name, value in item.items()}
            if key == "properties"
            else _inlined(item, definitions)
        )
        for key, item in node.items()
        if key != "title"
    }


def arguments_schema(
    model: type[ToolArguments] = ToolArguments, skills: Sequence[str] = ()
) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments, generated from `model`; `skill` is an enum of
    `skills` when given."""
    generated = model.model_json_schema(schema_generator=_ToolSchema)
    definitions = generated.pop("$defs", {})
    generated.pop("description", None)  # the model's docstring, for Python readers
    schema: dict[str, Any] = _inlined(generated, definitions)
    if skills:
        schema["properties"]["skill"]["enum"] = list(skills)
    return schema


def input_schema(skills: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON Schema of the common tool arguments (`ToolArguments`); `skill` is an enum of
    `skills` when given."""
    return arguments_schema(ToolArguments, skills)
