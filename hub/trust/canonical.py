"""The bytes a card signature covers (A2A 1.0 §8.4.1): the card without `signatures`, its
default values left out, in the RFC 8785 (JCS) canonical form.

"Default values" are those the protocol's JSON form leaves out: absent or null fields, empty
strings, lists and objects (recursively: an object left empty goes too), and the `false` of
the two booleans the proto declares without presence (an extension's `required`, an
authorization-code flow's `pkceRequired`). The booleans declared `optional` (the
capabilities) keep an explicit `false`. That is the form a card parsed by the a2a-sdk has,
so a signature made here verifies there, and one made there verifies here.

A rendering of the card that holds fields the 1.0 `AgentCard` does not know (the hybrid
card's 0.3 fields) is covered by a signature of its own (`rendering_signing_input`): a
verifier that reads the JSON as it came, without first parsing it as a 1.0 card, keeps
those fields as they are and leaves out the defaults of the fields it knows.
"""

from __future__ import annotations

import types
from typing import Any, Union, get_args, get_origin

import rfc8785
from pydantic import BaseModel

from hub.protocol import AgentCard

__all__ = ["rendering_signing_input", "signing_input"]

# Where a `false` is the proto3 default of a field without presence ("*": any key or index).
_IMPLICIT_FALSE = (
    ("capabilities", "extensions", "*", "required"),
    ("securitySchemes", "*", "oauth2SecurityScheme", "flows", "authorizationCode", "pkceRequired"),
)


def signing_input(card: AgentCard) -> bytes:
    """The canonical bytes of `card` that its signatures sign (the JWS payload): those of
    its 1.0 JSON, where every field is one the 1.0 card knows."""
    return rendering_signing_input(card.to_wire())


def rendering_signing_input(document: dict[str, Any]) -> bytes:
    """The canonical bytes a signature over one rendering of a card covers: `document`
    without `signatures`; the fields the 1.0 `AgentCard` knows without their defaults, as
    `signing_input` leaves them out; every other field as it is."""
    rendered = dict(document)
    rendered.pop("signatures", None)
    kept = _known_without_defaults(rendered, AgentCard, ())
    return rfc8785.dumps(kept if kept is not None else {})


def _known_without_defaults(
    value: dict[str, Any], model: type[BaseModel], path: tuple[str, ...]
) -> dict[str, Any] | None:
    known = {(field.alias or name): field.annotation for name, field in model.model_fields.items()}
    kept: dict[str, Any] = {}
    for key, item in value.items():
        if key not in known:
            kept[key] = item  # a field the 1.0 card does not know: as it came
            continue
        cleaned = _typed_without_defaults(item, known[key], (*path, key))
        if cleaned is not None:
            kept[key] = cleaned
    return kept or None


def _typed_without_defaults(value: Any, annotation: Any, path: tuple[str, ...]) -> Any:
    """`value` of a known field typed `annotation`, its defaults left out."""
    annotation = _required(annotation)
    origin = get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if isinstance(value, dict):
            return _known_without_defaults(value, annotation, path)
    elif origin is list and isinstance(value, list):
        (item_type,) = get_args(annotation)
        items = [_typed_without_defaults(item, item_type, (*path, "*")) for item in value]
        return [item for item in items if item is not None] or None
    elif origin is dict and isinstance(value, dict):
        _, item_type = get_args(annotation)
        entries = {
            key: _typed_without_defaults(item, item_type, (*path, key))
            for key, item in value.items()
        }
        return {key: item for key, item in entries.items() if item is not None} or None
    return _without_defaults(value, path)


def _required(annotation: Any) -> Any:
    """`annotation` without its `| None`."""
    if get_origin(annotation) in (Union, types.UnionType):
        options = [option for option in get_args(annotation) if option is not type(None)]
        if len(options) == 1:
            return options[0]
    return annotation


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
