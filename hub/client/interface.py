"""Choosing the interface to call from a card: first supported entry, or an explicit override.

The client speaks JSON-RPC at 1.0 and 0.3, HTTP+JSON at 1.0, and gRPC at 1.0 when the `grpc`
extra is installed. Versions are compared by `Major.Minor` with the patch ignored (§3.6); any
1.x is spoken as 1.0, since a server accepts a request of its own major version. Without the
extra a gRPC interface is passed over, and a card that offers nothing else is refused with
the command that installs it.
"""

from __future__ import annotations

from hub.errors import NoSupportedInterfaceError
from hub.protocol import AgentCard, AgentInterface
from hub.protocol.card import BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC
from hub.protocol.grpc.extra import INSTALL as GRPC_INSTALL
from hub.protocol.grpc.extra import grpc_installed

__all__ = ["SUPPORTED", "choose_interface", "normalize_binding", "normalize_version", "supported"]

SUPPORTED = frozenset(
    {(BINDING_JSONRPC, "1.0"), (BINDING_JSONRPC, "0.3"), (BINDING_HTTP_JSON, "1.0")}
)
"""The (binding, version) pairs this client speaks without extras."""

_GRPC = (BINDING_GRPC, "1.0")

_BINDING_NAMES = {
    "jsonrpc": BINDING_JSONRPC,
    "json-rpc": BINDING_JSONRPC,
    "http+json": BINDING_HTTP_JSON,
    "rest": BINDING_HTTP_JSON,
    "grpc": BINDING_GRPC,
}


def supported() -> frozenset[tuple[str, str]]:
    """The (binding, version) pairs this client speaks here: `SUPPORTED`, and gRPC 1.0 when
    the `grpc` extra is installed."""
    return SUPPORTED | {_GRPC} if grpc_installed() else SUPPORTED


def normalize_version(version: str) -> str | None:
    """`"1.0"` for any 1.x, `"0.3"` for 0.3.x, None for a version this client cannot speak."""
    pieces = version.strip().split(".")
    try:
        major = int(pieces[0])
        minor = int(pieces[1]) if len(pieces) > 1 else 0
    except ValueError:
        return None
    if major == 1:
        return "1.0"
    if (major, minor) == (0, 3):
        return "0.3"
    return None


def normalize_binding(binding: str) -> str:
    """The card's spelling of a binding name (`jsonrpc` → `JSONRPC`, `http+json` → `HTTP+JSON`,
    `grpc` → `GRPC`)."""
    return _BINDING_NAMES.get(binding.strip().lower(), binding.strip().upper())


def choose_interface(
    card: AgentCard,
    *,
    protocol_version: str | None = None,
    binding: str | None = None,
    grpc: bool = True,
) -> tuple[AgentInterface, str]:
    """The first interface of the card that this client speaks, within the override.

    Args:
        card: the partner's card (0.3 cards already upgraded).
        protocol_version: only consider this version (`"1.0"`, `"0.3"`); None or `"auto"`
            for any.
        binding: only consider this binding (`"jsonrpc"`, `"http+json"`, `"grpc"`); None or
            `"auto"` for any.
        grpc: whether a gRPC interface may be chosen (not for a partner added at run time,
            whose calls must pass the SSRF guard, which sees HTTP requests only).

    Returns:
        The interface and the version to speak to it (`"1.0"` or `"0.3"`).

    Raises:
        NoSupportedInterfaceError: nothing on the card matches; when a gRPC interface would
            have, without the `grpc` extra, the message names the command that installs it.
    """
    want_version = None if protocol_version in (None, "auto") else protocol_version
    want_binding = None if binding in (None, "auto") else normalize_binding(binding)
    if want_version is not None:
        want_version = normalize_version(want_version) or want_version
    speaks = supported() if grpc else SUPPORTED
    needs_extra = False
    for interface in card.supported_interfaces:
        version = normalize_version(interface.protocol_version)
        kind = normalize_binding(interface.protocol_binding)
        if want_version is not None and version != want_version:
            continue
        if want_binding is not None and kind != want_binding:
            continue
        if version is not None and (kind, version) in speaks:
            return interface, version
        needs_extra = needs_extra or (grpc and (kind, version) == _GRPC)
    offered = ", ".join(
        f"{i.protocol_binding} {i.protocol_version}" for i in card.supported_interfaces
    )
    wanted = f" matching {want_binding or 'any binding'} {want_version or 'any version'}"
    names = ", ".join(f"{kind} {version}" for kind, version in sorted(speaks, reverse=True))
    fix = (
        f"; gRPC needs the grpc extra: {GRPC_INSTALL}"
        if needs_extra or (grpc and want_binding == BINDING_GRPC and _GRPC not in speaks)
        else ""
    )
    raise NoSupportedInterfaceError(
        f"agent '{card.name}' offers no interface this client speaks{wanted} "
        f"(offered: {offered or 'none'}; supported: {names}){fix}"
    )
