"""The base every A2A wire model shares: camelCase aliases and ProtoJSON timestamps."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

__all__ = ["JsonObject", "Timestamp", "WireModel", "format_timestamp", "new_id", "utc_now"]

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


def new_id() -> str:
    """A random 128-bit id as 32 hex digits (the form of `uuid4().hex`, at a sixth of the
    cost: no UUID object is built)."""
    return os.urandom(16).hex()


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
