"""A2A extensions (§4.6): those the hub declares in its card, which a request activates by
listing them in its `A2A-Extensions` header (0.3: `X-A2A-Extensions`), and which it must
list when the hub requires them.

A hub-wide `required` extension is required of every A2A operation on the hub's own
endpoints (not of the public card, and not of the gateway's `/agents/{name}` routes, where
the partner's card has its own rules). One scoped to skills (`skills: [...]`) is required of
the messages that reach those skills only, since a 1.0 `AgentSkill` has no extensions to
declare it on: the card lists it hub-wide with `required: false` and says which skills
require it. An extension a request lists that the card does not declare is ignored.

Behind the gateway the partner decides: the list a request carries is passed on to it
(`hub.protocol.extensions.ExtensionRelay`) and its answer's list comes back, without the
hub's own declarations or requirements taking part.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

from hub.config import ExtensionSettings
from hub.errors import ConfigError
from hub.protocol import AgentExtension
from hub.protocol.extensions import (
    EXTENSIONS_HEADER,
    LEGACY_EXTENSIONS_HEADER,
    ExtensionRelay,
    extension_headers,
    parse_extensions,
)
from hub.protocol.trace import CallScope
from hub.skills.extensions import ExtensionPolicy

__all__ = [
    "answer_headers",
    "card_extensions",
    "extension_scope",
    "requested_extensions",
]

_NAMES = frozenset({EXTENSIONS_HEADER.lower().encode(), LEGACY_EXTENSIONS_HEADER.lower().encode()})


def requested_extensions(headers: Iterable[tuple[bytes, bytes]]) -> frozenset[str]:
    """The URIs a request lists, from the raw ASGI headers: every `A2A-Extensions` and
    `X-A2A-Extensions` line (either name, any number of times), each comma-separated."""
    return parse_extensions(
        value.decode("latin-1") for name, value in headers if name.lower() in _NAMES
    )


def extension_scope(
    call_scope: CallScope,
    headers: Iterable[tuple[bytes, bytes]],
    *,
    policy: ExtensionPolicy | None,
) -> CallScope:
    """`call_scope` with the extensions of the request whose raw ASGI `headers` are given.

    Args:
        call_scope: the request's scope.
        headers: the request's raw headers.
        policy: the hub's own, for the hub's endpoints: the extensions the request activates
            (`ExtensionPolicy.activate`); None for the gateway's routes: the list the request
            carries, to forward to the partner.

    Raises:
        ExtensionSupportRequiredError: the hub requires an extension the request misses.
    """
    requested = requested_extensions(headers)
    if policy is None:
        if not requested:
            return call_scope
        return replace(call_scope, forward_extensions=ExtensionRelay(requested=requested))
    activated = policy.activate(requested)
    return replace(call_scope, extensions=activated) if activated else call_scope


def answer_headers(call_scope: CallScope | None, *, v03: bool = False) -> dict[str, str]:
    """The header of the answer to a request naming the extensions it activated (none: no
    header), under the name of the request's protocol version: those the hub activated, or
    behind the gateway those the partner did."""
    if call_scope is None:
        return {}
    relay = call_scope.forward_extensions
    activated = call_scope.extensions if relay is None else relay.activated
    return extension_headers(activated, v03=v03)


def _skill_note(skills: Sequence[str]) -> str:
    names = ", ".join(f"'{skill}'" for skill in skills)
    return f"required for messages to skill{'s' if len(skills) > 1 else ''} {names}"


def card_extensions(
    extensions: Sequence[ExtensionSettings], *, skills: Collection[str]
) -> list[AgentExtension] | None:
    """The card's `capabilities.extensions` (None when there are none).

    Raises:
        ConfigError: an extension names a skill the hub does not serve.
    """
    declared = []
    for extension in extensions:
        unknown = [skill for skill in extension.skills if skill not in skills]
        if unknown:
            known = ", ".join(sorted(skills)) or "none"
            raise ConfigError(
                f"card.extensions: {extension.uri} names skill(s) {', '.join(unknown)} that the "
                f"hub does not serve (known: {known})"
            )
        description = extension.description
        if extension.required and extension.skills:
            note = _skill_note(extension.skills)
            description = f"{description} ({note})" if description else note.capitalize()
        declared.append(
            AgentExtension(
                uri=extension.uri,
                description=description,
                required=extension.required and not extension.skills,
                params=extension.params,
            )
        )
    return declared or None
