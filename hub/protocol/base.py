"""The base every A2A wire model shares: camelCase aliases and ProtoJSON timestamps."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

from hub.protocol.entropy import random_bytes

__all__ = [
    "JsonObject",
    "Timestamp",
    "WireModel",
    "format_timestamp",
    "id_time",
    "new_id",
    "utc_now",
]

JsonObject = dict[str, Any]
"""A JSON object as received (a `google.protobuf.Struct`)."""


def _assume_utc(value: datetime) -> datetime:
    # 0.3 peers often send timestamps with no zone; the spec's clock is UTC.
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_timestamp(value: datetime) -> str:
    """ISO 8601 in UTC with millisecond precision and a `Z` suffix, as §5.6.1 asks."""
    # isoformat is several times faster than strftime on this hot path.
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc_now() -> datetime:
    """Now, in UTC, at the millisecond precision the wire carries (so a timestamp read back
    from JSON equals the one written)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond - now.microsecond % 1000)


# A UUIDv7 (RFC 9562) in 128 bits: 48 bits of Unix time in milliseconds, the version (7) in
# 4 bits, 12 random bits, the variant (binary 10) in 2 bits and 62 random bits.
_RANDOM_BITS = (1 << 80) - 1 & ~(0xF << 76) & ~(0x3 << 62)
_VERSION_AND_VARIANT = 0x7 << 76 | 0x2 << 62


def new_id() -> str:
    """A new id: a UUIDv7 as 32 hex digits (the form of `uuid.hex`; no UUID object is built).

    74 of its bits are random, so ids cannot be guessed; the first 48 are the time in
    milliseconds, so ids made one after another sort one after another. A store's indexes on
    task and context ids then grow at one end, and the tasks one commit writes share pages
    instead of each touching a page of its own.
    """
    random = int.from_bytes(random_bytes(10)) & _RANDOM_BITS
    return (time.time_ns() // 1_000_000 << 80 | _VERSION_AND_VARIANT | random).to_bytes(16).hex()


def id_time(value: str) -> datetime | None:
    """When an id of `new_id`'s form was made (to the millisecond), or None for any other id
    (a client's own message ids, a partner's task ids may be anything)."""
    if len(value) != 32:
        return None
    try:
        number = int(value, 16)
    except ValueError:
        return None
    if number & (0xF << 76 | 0x3 << 62) != _VERSION_AND_VARIANT:
        return None
    return datetime.fromtimestamp((number >> 80) / 1000, tz=UTC)


Timestamp = Annotated[
    datetime,
    AfterValidator(_assume_utc),
    PlainSerializer(format_timestamp, return_type=str, when_used="json"),
]


class WireModel(BaseModel):
    """A model that reads and writes the protocol's JSON form.

    Python names are snake_case; the wire is camelCase through the alias generator. Unknown
    fields are ignored (§5.7: receivers should ignore what they do not know), and `None`
    fields are left out when written.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="ignore",
        # Validators and serializers are built when a model is first used, not at import:
        # a command (or a server's first request) pays only for the models it uses.
        defer_build=True,
    )

    def to_json(self) -> bytes:
        """The wire form of this object, `None` fields omitted."""
        return self.__pydantic_serializer__.to_json(self, by_alias=True, exclude_none=True)

    def to_wire(self) -> dict[str, Any]:
        """The wire form as a JSON-ready dict (for embedding in a larger document)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
