"""`ExtensionPolicy`: what the A2A extensions of the hub's card ask of the requests the hub
serves (those every request must list) and of the messages that reach a skill (those its
skill requires).

The server checks a request against it as it reads the request; the task manager checks
every message against it before a skill gets it, whoever sent the message: a caller over
A2A, MCP or the console, a script through `Hub.tools`, or another skill through its tools.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from hub.config import ExtensionSettings
from hub.errors import ExtensionSupportRequiredError
from hub.protocol.extensions import EXTENSIONS_HEADER, LEGACY_EXTENSIONS_HEADER
from hub.protocol.trace import current_scope

__all__ = ["ExtensionPolicy"]


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
