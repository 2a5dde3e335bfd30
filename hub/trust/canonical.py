"""The bytes a card signature covers (A2A 1.0 §8.4.1): the card without `signatures`, its
default values left out, in the RFC 8785 (JCS) canonical form.

"Default values" are those the protocol's JSON form leaves out: absent or null fields, empty
strings, lists and objects (recursively: an object left empty goes too), and the `false` of
the two booleans the proto declares without presence (an extension's `required`, an
authorization-code flow's `pkceRequired`). The booleans declared `optional` (the
capabilities) keep an explicit `false`. That is the form a card parsed by the a2a-sdk has,
so a signature made here verifies there, and one made there verifies here.
"""

from __future__ import annotations

from typing import Any

import rfc8785

from hub.protocol import AgentCard

__all__ = ["signing_input"]

# Where a `false` is the proto3 default of a field without presence ("*": any key or index).
_IMPLICIT_FALSE = (
    ("capabilities", "extensions", "*", "required"),
    ("securitySchemes", "*", "oauth2SecurityScheme", "flows", "authorizationCode", "pkceRequired"),
)


def signing_input(card: AgentCard) -> bytes:
    """The canonical bytes of `card` that its signatures sign (the JWS payload)."""
    document = card.to_wire()
    document.pop("signatures", None)
    kept = _without_defaults(document, ())
    return rfc8785.dumps(kept if kept is not None else {})


def _without_defaults(value: Any, path: tuple[str, ...]) -> Any:
    """`value` with its default values left out; None when it is one itself."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            cleaned = _without_defaults(item, (*path, key))
            if cleaned is not None:
                kept[key] = cleaned
        return kept or None
    if isinstance(value, list):
        items = [_without_defaults(item, (*path, "*")) for item in value]
        return [item for item in items if item is not None] or None
    if value == "" or (value is False and _implicit(path)):
        return None
    return value


def _implicit(path: tuple[str, ...]) -> bool:
    return any(
        len(pattern) == len(path)
        and all(step in ("*", part) for step, part in zip(pattern, path, strict=True))
        for pattern in _IMPLICIT_FALSE
    )
