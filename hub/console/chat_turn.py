"""One turn of the chat: the posted form read into the message to send, where it goes and
the metadata it carries.

The form names a target (`skill:<id>`, a local skill, `delegate` and `swarm` among them, or
`agent:<name>`, a partner reached through the gateway), the text, and what the visitor
attached: a JSON object as the request's metadata, a JSON value as a data part, files
(uploaded, each a file part). `context_id` continues a conversation and `task_id` answers
the task that waits for input. A field that is not what it must be is refused with a
sentence that says which and why; the hub's own limits (parts, part size) are checked by
the operation that sends it, as for every door.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from litestar.datastructures import UploadFile

from hub.errors import InvalidParamsError
from hub.protocol import JsonObject, Message, Part, user_message

__all__ = ["ChatTurn", "chat_turn", "routing_metadata"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatTurn:
    """A message to send, and to whom.

    Attributes:
        message: the visitor's message, in its context and task when it continues one.
        metadata: the request's metadata: what the visitor attached, and for a local skill
            the routing the target names.
        agent: the partner, when the target is one (sent through the gateway).
    """

    message: Message
    metadata: JsonObject | None
    agent: str | None


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def routing_metadata(skill: str, fields: dict[str, str]) -> JsonObject:
    """The routing metadata for a local skill: `delegate` and `swarm` take partners and
    tags, `swarm` a strategy."""
    metadata: JsonObject = {"skill": skill}
    agents, tags = _names(fields.get("agents", "")), _names(fields.get("tags", ""))
    if skill == "delegate" and agents:
        metadata["agent"] = agents[0]
    if skill == "swarm":
        metadata["strategy"] = fields.get("strategy") or "broadcast"
        if agents:
            metadata["agents"] = list(agents)
    if skill in ("delegate", "swarm") and tags:
        metadata["tags"] = list(tags)
    return metadata


def _json(fields: dict[str, str], name: str, what: str) -> object | None:
    """The field's JSON value, None when it is empty."""
    text = fields.get(name, "").strip()
    if not text:
        return None
    try:
        value: object = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidParamsError(
            f"{what} is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}",
            violations=[(name, "not valid JSON")],
        ) from None
    return value


def _metadata(fields: dict[str, str]) -> JsonObject:
    value = _json(fields, "metadata", "the metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParamsError(
            f"the metadata must be a JSON object ({{...}}), not {type(value).__name__}",
            violations=[("metadata", "not a JSON object")],
        )
    return value


async def _file_part(upload: UploadFile) -> Part:
    content = await upload.read()
    return Part(
        raw=base64.b64encode(content).decode(),
        filename=upload.filename,
        media_type=upload.content_type or "application/octet-stream",
    )


async def chat_turn(
    fields: dict[str, str], files: list[UploadFile], *, default_skill: str
) -> ChatTurn:
    """The turn the form describes; a target that names no skill goes to `default_skill`.

    Raises:
        InvalidParamsError: the metadata is not a JSON object, the data is not JSON, or
            the message is empty.
    """
    parts: list[Part] = []
    text = fields.get("text", "").strip()
    if text:
        parts.append(Part(text=text))
    data = _json(fields, "data", "the data part")
    if data is not None:
        parts.append(Part(data=data))
    parts.extend([await _file_part(upload) for upload in files])
    if not parts:
        raise InvalidParamsError(
            "the message is empty: write a text, or attach data or a file",
            violations=[("text", "required")],
        )
    attached = _metadata(fields)
    message = user_message(
        parts,
        context_id=fields.get("context_id") or None,
        task_id=fields.get("task_id") or None,
    )
    kind, _, name = fields.get("target", "").partition(":")
    if kind == "agent" and name:
        return ChatTurn(message=message, metadata=attached or None, agent=name)
    skill = name if kind == "skill" and name else default_skill
    return ChatTurn(
        message=message, metadata={**attached, **routing_metadata(skill, fields)}, agent=None
    )
