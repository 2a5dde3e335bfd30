"""ListTasks ordering and the opaque page cursor that every store shares.

Records are ordered by their *status key*, `(status time in epoch microseconds, task id)`,
newest first. A page cursor is the key of the last record on the page, so the next page starts
strictly below it: tasks created between two page requests sort above the cursor and never
shift the pages that follow (no duplicates, no skipped tasks).
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime, timedelta

from hub.errors import InvalidParamsError
from hub.protocol import Task

__all__ = [
    "NO_TIMESTAMP",
    "check_page_size",
    "decode_cursor",
    "encode_cursor",
    "epoch_micros",
    "status_key",
]

NO_TIMESTAMP = -(2**63)
"""The status time of a task whose status has no timestamp: older than any real time, and
the smallest value a SQLite INTEGER holds."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_INT64 = range(-(2**63), 2**63)


def epoch_micros(moment: datetime) -> int:
    """`moment` in whole microseconds since the epoch (a naive datetime is taken as UTC).

    Integer arithmetic, not `timestamp() * 1e6`: a float product can land one microsecond off.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MICROSECOND


def status_key(task: Task) -> tuple[int, str]:
    """The ordering key of `task`: (status time in epoch microseconds, task id).

    The time is cut to the milliseconds the wire carries, so the key stored beside a task is
    the one its stored JSON would give again; a task with no status timestamp sorts as oldest.
    """
    timestamp = task.status.timestamp
    if timestamp is None:
        return NO_TIMESTAMP, task.id
    micros = epoch_micros(timestamp)
    return micros - micros % 1000, task.id


def encode_cursor(key: tuple[int, str]) -> str:
    """An opaque, URL-safe page token naming the position just below `key`."""
    raw = json.dumps([key[0], key[1]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """The status key a cursor names.

    Raises:
        InvalidParamsError: the cursor was not produced by `encode_cursor`.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, binascii.Error):  # also UnicodeError and JSONDecodeError
        decoded = None
    if (
        isinstance(decoded, list)
        and len(decoded) == 2
        and type(decoded[0]) is int  # not a bool
        and decoded[0] in _INT64
        and isinstance(decoded[1], str)
    ):
        return decoded[0], decoded[1]
    raise InvalidParamsError(
        "pageToken is not valid; pass the nextPageToken of a previous ListTasks answer, "
        "or leave it out for the first page",
        violations=[("pageToken", "not a token this hub produced")],
    )


def check_page_size(page_size: int) -> int:
    """`page_size`, if it is at least 1.

    Raises:
        InvalidParamsError: a page of fewer than one task was asked for.
    """
    if page_size < 1:
        raise InvalidParamsError(
            f"pageSize must be at least 1 (got {page_size})",
            violations=[("pageSize", "must be at least 1")],
        )
    return page_size
