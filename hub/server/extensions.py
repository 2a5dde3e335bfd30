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

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from hub.config import ExtensionSettings
from hub.errors import ConfigError, ExtensionSupportRequiredError
from hub.protocol import AgentExtension
from hub.protocol.extensions import (
    EXTENSIONS_HEADER,
    LEGACY_EXTENSIONS_HEADER,
    ExtensionRelay,
    extension_headers,
    parse_extensions,
)
from hub.protocol.trace import CallScope, current_scope

__all__ = [
    "ExtensionPolicy",
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


def _refusal(missing: Collection[str], *, what: str) -> ExtensionSupportRequiredError:
    uris = ", ".join(sorted(missing))
    return ExtensionSupportRequiredError(
        f"{what} requires the extension{'s' if len(missing) > 1 else ''} {uris}; list "
        f"{'them' if len(missing) > 1 else 'it'} in the {EXTENSIONS_HEADER} header "
        f"({LEGACY_EXTENSIONS_HEADER} for 0.3), comma-separated, if the client supports "
        f"{'them' if len(missing) > 1 else 'it'}",
        metadata={"extensions": ",".join(sorted(missing))},
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionPolicy:
    """Which extensions the hub declares and requires.

    Attributes:
        declared: every URI in the card.
        required: the URIs every request must list.
        by_skill: per skill id, the URIs a message to that skill must list.
    """

    declared: frozenset[str] = frozenset()
    required: frozenset[str] = frozenset()
    by_skill: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, extensions: Sequence[ExtensionSettings]) -> ExtensionPolicy:
        by_skill: dict[str, set[str]] = {}
        for extension in extensions:
            if extension.required:
                for skill in extension.skills:
                    by_skill.setdefault(skill, set()).add(extension.uri)
        return cls(
            declared=frozenset(extension.uri for extension in extensions),
            required=frozenset(e.uri for e in extensions if e.required and not e.skills),
            by_skill={skill: frozenset(uris) for skill, uris in by_skill.items()},
        )

    def activate(self, requested: Collection[str]) -> frozenset[str]:
        """The extensions a request activates: those it lists that the card declares.

        Raises:
            ExtensionSupportRequiredError: it does not list every hub-wide required one.
        """
        activated = self.declared.intersection(requested)
        missing = self.required - activated
        if missing:
            raise _refusal(missing, what="this hub")
        return activated

    def admit_skill(self, skill: str) -> None:
        """Refuse a message to `skill` when the request it came with (the current call
        scope) did not activate an extension the skill requires.

        Raises:
            ExtensionSupportRequiredError: naming the missing extensions.
        """
        needed = self.by_skill.get(skill)
        if not needed:
            return
        scope = current_scope()
        missing = needed - (scope.extensions if scope is not None else frozenset())
        if missing:
            raise _refusal(missing, what=f"skill '{skill}'")
