"""A task as the console shows it: a conversation of messages, each with its role, its
sender and its time when known; text as text (a text streamed in chunks as the one text it
is), data as formatted JSON shown once, files as downloads.

Nothing here builds HTML: the templates escape every string they are given, so a partner's
or a caller's text shows as text whatever it holds.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from hub.protocol import Message, Part, Task, TaskState, id_time, part_runs

if TYPE_CHECKING:
    from hub.console.children import DelegationView

__all__ = [
    "FileContent",
    "MessageView",
    "PartView",
    "TaskView",
    "file_content",
    "message_view",
    "pretty_json",
    "shown_time",
    "state_label",
    "task_view",
]

_LINK_SCHEMES = ("http://", "https://")


def state_label(state: TaskState) -> str:
    """`TASK_STATE_INPUT_REQUIRED` → `input-required`."""
    return state.value.removeprefix("TASK_STATE_").lower().replace("_", "-")


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def shown_time(when: datetime | None) -> str:
    """A time as the page shows it: UTC to the millisecond ("" when unknown)."""
    return when.isoformat(timespec="milliseconds") if when is not None else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PartView:
    kind: Literal["text", "data", "file", "link", "url"]
    text: str
    """The text, the formatted JSON, a file's name, or a URL."""
    media_type: str = ""
    href: str = ""
    """Where a file downloads from, or a link's target (http and https URLs only)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageView:
    role: str
    parts: list[PartView]
    agent: str
    """The partner a delegated update came from, or whose question it relays
    (`metadata.agent`), if any."""
    sender: str = ""
    """Who sent it: the caller's credential for a caller's message, the skill for the hub's
    (the partner, when `agent`, is shown beside it)."""
    time: str = ""
    """When it was sent, when its id says so (the hub's ids carry their time)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactView:
    name: str
    description: str
    parts: list[PartView]
    metadata: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskView:
    task_id: str
    context_id: str
    state: str
    timestamp: str
    status_text: str
    terminal: bool
    waiting: bool
    """Parked for the caller's answer (input-required or auth-required)."""
    messages: list[MessageView]
    artifacts: list[ArtifactView]
    metadata: str
    delegation: DelegationView | None
    started: str = ""
    """When the task was created, when its id says so."""
    trace_url: str = ""
    """The task's trace in the operator's tracing UI ("" when none is set or known)."""


def _part(part: Part, download: str) -> PartView:
    if part.text is not None:
        return PartView(kind="text", text=part.text, media_type=part.media_type or "")
    if part.raw is not None:
        return PartView(
            kind="file",
            text=part.filename or "file",
            media_type=part.media_type or "application/octet-stream",
            href=download,
        )
    if part.url is not None:
        linkable = part.url.lower().startswith(_LINK_SCHEMES)
        return PartView(
            kind="link" if linkable else "url",
            text=part.filename or part.url,
            media_type=part.media_type or "",
            href=part.url if linkable else "",
        )
    return PartView(kind="data", text=pretty_json(part.data), media_type=part.media_type or "")


def message_view(
    message: Message,
    *,
    base: str,
    index: int,
    caller: str = "",
    skill: str = "",
    sent: datetime | None = None,
) -> MessageView:
    """A message; its file parts download from below `base` (none when `base` is ""); a
    caller's is sent by `caller`, the hub's by `skill`, at the time its id carries or else
    at `sent`. A text streamed in chunks is one text."""
    agent = (message.metadata or {}).get("agent")
    role = message.role.value.removeprefix("ROLE_").lower()
    return MessageView(
        role=role,
        parts=[
            _part(part, f"{base}/files/messages/{index}/{number}" if base else "")
            for number, part in part_runs(message.parts)
        ],
        agent=agent if isinstance(agent, str) else "",
        sender=caller if role == "user" else skill,
        time=shown_time(id_time(message.message_id) or sent),
    )


def _said_in(metadata: dict[str, Any], parts: list[Part]) -> bool:
    """Whether every entry of an artifact's `metadata` is also in one of its data parts (a
    swarm's result says its strategy and reason in both): then it is not shown twice."""
    return any(
        isinstance(part.data, dict)
        and all(key in part.data and part.data[key] == value for key, value in metadata.items())
        for part in parts
    )


def task_view(
    task: Task,
    *,
    base: str,
    delegation: DelegationView | None,
    caller: str = "",
    trace_url: str = "",
    started: datetime | None = None,
) -> TaskView:
    """The view of `task`, whose page is at `base` (downloads are below it), created by
    `caller` at `started` (when known)."""
    status = task.status
    skill = (task.metadata or {}).get("skill")
    return TaskView(
        task_id=task.id,
        context_id=task.context_id or "",
        state=state_label(status.state),
        timestamp=shown_time(status.timestamp),
        status_text=status.message.text() if status.message else "",
        terminal=status.state.is_terminal,
        waiting=status.state in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED),
        messages=[
            message_view(
                message,
                base=base,
                index=index,
                caller=caller,
                skill=skill if isinstance(skill, str) else "",
                # The first message came with the task.
                sent=started if index == 0 else None,
            )
            for index, message in enumerate(task.history or [])
        ],
        artifacts=[
            ArtifactView(
                name=artifact.name or artifact.artifact_id,
                description=artifact.description or "",
                # A text streamed in chunks shows as one text; a file keeps its number.
                parts=[
                    _part(part, f"{base}/files/artifacts/{index}/{number}")
                    for number, part in part_runs(artifact.parts)
                ],
                metadata=(
                    pretty_json(artifact.metadata)
                    if artifact.metadata and not _said_in(artifact.metadata, artifact.parts)
                    else ""
                ),
            )
            for index, artifact in enumerate(task.artifacts or [])
        ],
        metadata=pretty_json(task.metadata) if task.metadata else "",
        delegation=delegation,
        started=shown_time(started),
        trace_url=trace_url,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class FileContent:
    content: bytes
    filename: str


def file_content(task: Task, where: str, index: int, number: int) -> FileContent | None:
    """The bytes of a file part of the task (a message's or an artifact's), or None."""
    holders: list[list[Part]]
    if where == "messages":
        holders = [message.parts for message in task.history or []]
    elif where == "artifacts":
        holders = [artifact.parts for artifact in task.artifacts or []]
    else:
        return None
    if not (0 <= index < len(holders) and 0 <= number < len(holders[index])):
        return None
    part = holders[index][number]
    if part.raw is None:
        return None
    try:
        content = base64.b64decode(part.raw, validate=True)
    except (binascii.Error, ValueError):
        return None
    return FileContent(content=content, filename=part.filename or "file")
