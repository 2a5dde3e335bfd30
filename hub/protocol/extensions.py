"""The A2A extensions header (§4.6): its name in each protocol version, its value, and the
relay that carries a gateway caller's list to the partner and the partner's answer back.

A client lists the extension URIs it wants in `A2A-Extensions` (0.3: `X-A2A-Extensions`),
comma-separated, on one line or several; the agent answers with the same header naming the
ones it activated. The hub's own extensions are `hub.server.extensions`; this module only
knows the header.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

__all__ = [
    "EXTENSIONS_HEADER",
    "LEGACY_EXTENSIONS_HEADER",
    "ExtensionRelay",
    "extension_headers",
    "parse_extensions",
]

EXTENSIONS_HEADER = "A2A-Extensions"
LEGACY_EXTENSIONS_HEADER = "X-A2A-Extensions"


def parse_extensions(values: Iterable[str]) -> frozenset[str]:
    """The URIs in the values of every extensions header line, each comma-separated."""
    return frozenset(uri.strip() for value in values for uri in value.split(",") if uri.strip())


def extension_headers(uris: Collection[str], *, v03: bool = False) -> dict[str, str]:
    """The header listing `uris` (none: no header), under the name of 1.0 or of 0.3."""
    if not uris:
        return {}
    name = LEGACY_EXTENSIONS_HEADER if v03 else EXTENSIONS_HEADER
    return {name: ",".join(sorted(uris))}


@dataclass(slots=True, eq=False, kw_only=True)
class ExtensionRelay:
    """What the gateway passes on between its caller and a partner: the extensions the caller
    listed, sent with every request of the call, and those the partner's answers say it
    activated, which the gateway's answer names.

    One relay belongs to one inbound request (its `CallScope`); the HTTP client's hooks fill
    `activated` from each response, in whichever task sends the request (a stream's pump).

    Attributes:
        requested: the URIs the caller listed.
        activated: the URIs the partner named in its answers so far.
    """

    requested: frozenset[str]
    activated: set[str] = field(default_factory=set)

    def request_headers(self, version: str) -> dict[str, str]:
        """The header of a request to a partner spoken to in protocol `version`."""
        return extension_headers(self.requested, v03=version.startswith("0."))

    def note(self, values: Iterable[str]) -> None:
        """Record the extensions a partner's answer names (the values of its header lines)."""
        self.activated.update(parse_extensions(values))
