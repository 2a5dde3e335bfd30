"""What a message must satisfy before any task sees it: how many parts, and how large each;
and for a message that continues a task, what the task must be."""

from __future__ import annotations

from pydantic_core import to_json

from hub.config import LimitSettings
from hub.errors import (
    InvalidParamsError,
    LimitExceededError,
    PartTooLargeError,
    UnsupportedOperationError,
)
from hub.protocol import Message, Part, Task, state_name

__all__ = ["check_follow_up", "check_parts", "part_size"]


def part_size(part: Part) -> int:
    """The bytes a part holds: its text or URL (UTF-8), its inline file bytes (decoded), or
    its data (as JSON)."""
    if part.text is not None:
        return len(part.text.encode("utf-8", "surrogatepass"))
    if part.raw is not None:
        return len(part.raw) * 3 // 4 - part.raw[-2:].count("=")
    if part.url is not None:
        return len(part.url.encode("utf-8", "surrogatepass"))
    return len(to_json(part.data))


def check_parts(message: Message, limits: LimitSettings) -> None:
    """Refuse a message with more than `limits.max_parts` parts, or a part larger than
    `limits.max_part_bytes`.

    Raises:
        LimitExceededError: too many parts (naming the setting).
        PartTooLargeError: a part too large (naming the setting and the part).
    """
    if len(message.parts) > limits.max_parts:
        raise LimitExceededError(
            f"message has {len(message.parts)} parts; the limit is "
            f"{limits.max_parts} (limits.max_parts)"
        )
    limit = limits.max_part_bytes
    for index, part in enumerate(message.parts):
        size = part_size(part)
        if size > limit:
            raise PartTooLargeError(
                f"message part {index} holds {size} bytes; the limit is {limit} bytes "
                "(limits.max_part_bytes): send large content by URL",
                violations=[(f"message.parts[{index}]", f"larger than {limit} bytes")],
            )


def check_follow_up(message: Message, task: Task, limits: LimitSettings) -> None:
    """Refuse a message to `task` unless the task waits for it (input-required or
    auth-required), the message's contextId (if any) is the task's, and the task's history
    has room (`limits.max_history`).

    Raises:
        InvalidParamsError: the contextId is another one.
        UnsupportedOperationError: the task is terminal, or working.
        LimitExceededError: the task holds `limits.max_history` messages.
    """
    task_id, state = task.id, task.status.state
    if message.context_id and message.context_id != task.context_id:
        raise InvalidParamsError(
            f"contextId {message.context_id} does not match task {task_id}, whose "
            f"contextId is {task.context_id}; omit contextId or send the task's own",
            violations=[("message.contextId", "does not match the task's contextId")],
        )
    if state.is_terminal:
        raise UnsupportedOperationError(
            f"task {task_id} is {state_name(state)} and accepts no more messages; send "
            "a new message without taskId (same contextId) to start a follow-up task",
            metadata={"taskId": task_id},
        )
    if not state.is_interrupted:
        raise UnsupportedOperationError(
            f"task {task_id} is {state_name(state)}; it takes a new message only while "
            "input-required or auth-required (cancel it, or subscribe to follow it)",
            metadata={"taskId": task_id},
        )
    held = len(task.history or [])
    if held >= limits.max_history:
        raise LimitExceededError(
            f"task {task_id} holds {held} messages; the limit is "
            f"{limits.max_history} (limits.max_history): start a new task in the "
            "same context",
            metadata={"taskId": task_id},
        )
