"""What changed between two versions of a partner's agent card, field by field, for the
partners page: skills and interfaces are matched by their id and URL (so one added skill
reads as one added skill, not as every field after it moving), everything else by its path
in the card's wire form."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from hub.protocol import AgentCard

__all__ = ["CardChange", "card_changes"]

_KEYED = {"skills": "id", "supportedInterfaces": "url"}
"""Lists whose items are told apart by a field rather than by their place."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CardChange:
    """One field that differs.

    Attributes:
        field: where in the card, e.g. `version`, `skills[translate].tags`.
        kind: added, removed or changed.
        before: the old value as text (None when added).
        after: the new value as text (None when removed).
    """

    field: str
    kind: Literal["added", "removed", "changed"]
    before: str | None
    after: str | None


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value) if value else "(none)"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _flat(value: Any, path: str, into: dict[str, Any]) -> None:
    """`value`'s leaves by path; keyed lists become one entry per item, by key."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _flat(inner, f"{path}.{key}" if path else key, into)
        return
    key = _KEYED.get(path)
    if key is not None and isinstance(value, list):
        for item in value:
            name = item.get(key, "?") if isinstance(item, dict) else _shown(item)
            into[f"{path}[{name}]"] = item
        return
    into[path] = value


def _items(card: AgentCard) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    _flat(card.to_wire(), "", flat)
    return flat


def card_changes(before: AgentCard, after: AgentCard) -> list[CardChange]:
    """The fields of `after` that differ from `before`, in the order of the card."""
    old, new = _items(before), _items(after)
    changes: list[CardChange] = []
    for path, value in new.items():
        if path not in old:
            changes.append(CardChange(field=path, kind="added", before=None, after=_shown(value)))
        elif old[path] != value:
            if isinstance(value, dict) and isinstance(old[path], dict):
                # One skill (interface) whose fields changed: each field, under its key.
                inner_old: dict[str, Any] = {}
                inner_new: dict[str, Any] = {}
                _flat(old[path], path, inner_old)
                _flat(value, path, inner_new)
                changes.extend(_leaves(inner_old, inner_new))
            else:
                changes.append(
                    CardChange(
                        field=path, kind="changed", before=_shown(old[path]), after=_shown(value)
                    )
                )
    for path, value in old.items():
        if path not in new:
            changes.append(CardChange(field=path, kind="removed", before=_shown(value), after=None))
    return changes


def _leaves(old: dict[str, Any], new: dict[str, Any]) -> list[CardChange]:
    changes = []
    for path in [*new, *(path for path in old if path not in new)]:
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        kind: Literal["added", "removed", "changed"] = (
            "added" if path not in old else "removed" if path not in new else "changed"
        )
        changes.append(
            CardChange(
                field=path,
                kind=kind,
                before=None if path not in old else _shown(before),
                after=None if path not in new else _shown(after),
            )
        )
    return changes
