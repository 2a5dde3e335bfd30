"""A2A-Version negotiation (§3.6): which protocol version a request speaks."""

from __future__ import annotations

import re
from collections.abc import Mapping

from hub.errors import VersionNotSupportedError

__all__ = ["SUPPORTED_VERSIONS", "check_version", "major_of", "requested_version"]

SUPPORTED_VERSIONS = ("1.0", "0.3")
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)(?:\.\d+)?\s*$")


def requested_version(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The `A2A-Version` a request names (header first, then query parameter), or None."""
    value = headers.get("a2a-version") or query.get("A2A-Version") or query.get("a2a-version")
    if value is None or not value.strip():
        return None
    return value.strip()


def major_of(version: str) -> int | None:
    """The major number of a `Major.Minor[.patch]` version, or None when it is not one."""
    match = _VERSION.match(version)
    return None if match is None else int(match.group(1))


def check_version(speaks: str, requested: str | None, *, accept_missing: bool) -> None:
    """Refuse a request whose `A2A-Version` does not match the method family it used.

    Args:
        speaks: "1.0" for PascalCase methods and the REST routes, "0.3" for slash methods.
        requested: the A2A-Version sent, or None.
        accept_missing: read a missing version on a 1.0 method as 1.0 (the spec reads 0.3).

    Raises:
        VersionNotSupportedError: the version is unknown, malformed, or of the other family.
    """
    if requested is None:
        if speaks == "0.3" or accept_missing:
            return
        raise VersionNotSupportedError(
            "this request uses an A2A 1.0 method but sent no A2A-Version, which the spec reads "
            "as 0.3; send the header 'A2A-Version: 1.0' (or the query parameter "
            "?A2A-Version=1.0)",
            metadata={"supportedVersions": ",".join(SUPPORTED_VERSIONS)},
        )
    match = _VERSION.match(requested)
    if match is None:
        raise VersionNotSupportedError(
            f"A2A-Version {requested!r} is not a version; send 'Major.Minor', e.g. 1.0",
            metadata={"supportedVersions": ",".join(SUPPORTED_VERSIONS)},
        )
    version = f"{int(match.group(1))}.{int(match.group(2))}"
    if version != speaks:
        if version in SUPPORTED_VERSIONS:
            hint = (
                "use the 1.0 method names (SendMessage, GetTask, ...)"
                if version == "1.0"
                else "use the 0.3 method names (message/send, tasks/get, ...)"
            )
            message = f"A2A-Version {version} does not match a {speaks} method; {hint}"
        else:
            message = (
                f"A2A-Version {version} is not supported; this hub speaks "
                f"{' and '.join(SUPPORTED_VERSIONS)}"
            )
        raise VersionNotSupportedError(
            message, metadata={"supportedVersions": ",".join(SUPPORTED_VERSIONS)}
        )
