"""What a message must satisfy before any task sees it: how many parts, and how large each."""

from __future__ import annotations

from pydantic_core import to_json

from hub.config import LimitSettings
from hub.errors import LimitExceededError
from hub.protocol import Message, Part

__all__ = ["check_parts", "part_size"]


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
        LimitExceededError: naming the setting (and the part) that was exceeded.
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
            raise LimitExceededError(
                f"message part {index} holds {size} bytes; the limit is {limit} bytes "
                "(limits.max_part_bytes): send large content by URL",
                violations=[(f"message.parts[{index}]", f"larger than {limit} bytes")],
            )
