"""ListTasks ordering and the opaque page cursor every store uses."""

from __future__ import annotations

import base64
import json

from hub.errors import InvalidParamsError
from hub.protocol import Task

__all__ = ["decode_cursor", "encode_cursor", "sort_key"]


def sort_key(task: Task) -> tuple[int, str]:
    """Newest status first, then task id: (microseconds since the epoch, id)."""
    timestamp = task.status.timestamp
    micros = int(timestamp.timestamp() * 1_000_000) if timestamp is not None else 0
    return micros, task.id


def encode_cursor(key: tuple[int, str]) -> str:
    raw = json.dumps([key[0], key[1]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """The (timestamp, id) position a cursor names.

    Raises:
        InvalidParamsError: the cursor was not produced by a store.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        micros, task_id = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not isinstance(micros, int) or not isinstance(task_id, str):
            raise ValueError
    except ValueError:
        raise InvalidParamsError(
            "pageToken is not valid; pass the nextPageToken of a previous ListTasks answer",
            violations=[("pageToken", "not a token this hub produced")],
        ) from None
    return micros, task_id
