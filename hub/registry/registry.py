"""The partner registry: the validated entries of `agents.yaml`, looked up by name.

A `Registry` never changes; a reload builds a new one, and `diff` says what differs.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import SecretStr

from hub.errors import UnknownAgentError
from hub.registry.models import AgentEntry

__all__ = ["Registry", "RegistryDiff"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RegistryDiff:
    """The names of the enabled partners that differ between two registries.

    Attributes:
        added: enabled in the new registry only (new, or enabled since).
        removed: enabled in the old registry only (gone, or disabled since).
        changed: enabled in both, with any setting changed (a rotated secret included).
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def __str__(self) -> str:
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("added", self.added),
                ("changed", self.changed),
                ("removed", self.removed),
            )
            if names
        ]
        return "; ".join(parts) or "no changes"


def _entry_fingerprint(entry: AgentEntry) -> str:
    # The JSON dump masks secrets; the fingerprint must change when one is rotated.
    content = _revealed(entry.model_dump(mode="python"))
    canonical = json.dumps(
        content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _revealed(value: Any) -> Any:
    """`value` (a model's dump) with every secret's own value in place of its mask."""
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {str(key): _revealed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_revealed(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted(str(_revealed(item)) for item in value)
    return value


class Registry:
    """The partners of one `agents.yaml`, in file order.

    Iteration, `len`, `in` and lookups see enabled entries only; `all()` includes the
    disabled ones.

    Args:
        entries: the partners; names must be unique.
        source: the file they were read from, if any.

    Raises:
        ValueError: two entries share a name.
    """

    __slots__ = ("_by_name", "_enabled", "_entries", "_entry_fingerprints", "_source")

    def __init__(
        self, entries: Iterable[AgentEntry] = (), *, source: str | Path | None = None
    ) -> None:
        self._entries = tuple(entries)
        by_name: dict[str, AgentEntry] = {}
        for entry in self._entries:
            if entry.name in by_name:
                raise ValueError(f"agent name '{entry.name}' is used twice")
            by_name[entry.name] = entry
        self._by_name: Mapping[str, AgentEntry] = MappingProxyType(by_name)
        self._enabled = tuple(entry for entry in self._entries if entry.enabled)
        self._entry_fingerprints: Mapping[str, str] = MappingProxyType(
            {entry.name: _entry_fingerprint(entry) for entry in self._entries}
        )
        self._source = None if source is None else Path(source)

    @property
    def source(self) -> Path | None:
        """The file the registry was read from, or None."""
        return self._source

    @property
    def fingerprint(self) -> str:
        """A SHA-256 of the validated content, in file order; equal content, equal value.

        Secrets are part of what is hashed, so rotating one changes it.
        """
        lines = "\n".join(f"{name} {digest}" for name, digest in self._entry_fingerprints.items())
        return hashlib.sha256(lines.encode()).hexdigest()

    def __getitem__(self, name: str) -> AgentEntry:
        """The enabled partner called `name`.

        Raises:
            UnknownAgentError: no partner has that name, or it is disabled.
        """
        entry = self._by_name.get(name)
        if entry is not None and entry.enabled:
            return entry
        raise UnknownAgentError(self._unknown(name, disabled=entry is not None))

    def get(self, name: str) -> AgentEntry | None:
        """The enabled partner called `name`, or None."""
        entry = self._by_name.get(name)
        return entry if entry is not None and entry.enabled else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[AgentEntry]:
        return iter(self._enabled)

    def __len__(self) -> int:
        return len(self._enabled)

    def all(self) -> tuple[AgentEntry, ...]:
        """Every entry in file order, the disabled ones included."""
        return self._entries

    def names(self) -> tuple[str, ...]:
        """The names of the enabled partners, in file order."""
        return tuple(entry.name for entry in self._enabled)

    def with_tag(self, tag: str) -> tuple[AgentEntry, ...]:
        """The enabled partners that carry `tag`, in file order."""
        return tuple(entry for entry in self._enabled if tag in entry.tags)

    def diff(self, other: Registry) -> RegistryDiff:
        """What changed from this registry to `other`, among enabled partners."""
        before = {entry.name: self._entry_fingerprints[entry.name] for entry in self._enabled}
        after = {entry.name: other._entry_fingerprints[entry.name] for entry in other._enabled}
        return RegistryDiff(
            added=tuple(name for name in after if name not in before),
            removed=tuple(name for name in before if name not in after),
            changed=tuple(name for name in after if name in before and before[name] != after[name]),
        )

    def __repr__(self) -> str:
        disabled = [entry.name for entry in self._entries if not entry.enabled]
        where = str(self._source) if self._source is not None else "no file"
        text = f"Registry({where}: {', '.join(self.names()) or 'no agents'}"
        return text + (f"; disabled: {', '.join(disabled)})" if disabled else ")")

    def unknown(
        self, name: str, *, among: frozenset[str] | None = None, added: Sequence[str] = ()
    ) -> UnknownAgentError:
        """The error for a lookup of `name` that failed, as `registry[name]` raises it.

        Args:
            name: the name looked up.
            among: the only partners the caller may know of (None: all). Any other is
                reported exactly as a name agents.yaml does not list, and the known names
                and the suggestion come from these only.
            added: partners added while the hub runs, known besides the file's.
        """
        entry = self._by_name.get(name)
        disabled = entry is not None and not entry.enabled and (among is None or name in among)
        return UnknownAgentError(
            self._unknown(name, disabled=disabled, among=among, added=tuple(added))
        )

    def _unknown(
        self,
        name: str,
        *,
        disabled: bool,
        among: frozenset[str] | None = None,
        added: tuple[str, ...] = (),
    ) -> str:
        label = self._source.name if self._source is not None else "agents.yaml"
        if disabled:
            return f"agent '{name}' is disabled in {label}"
        names = tuple(known for known in (*self.names(), *added) if among is None or known in among)
        known = f"known: {', '.join(names)}" if names else "it lists no enabled agents"
        where = f"neither in {label} nor added at run time" if added else f"not in {label}"
        message = f"agent '{name}' is {where} ({known})"
        close = difflib.get_close_matches(name, names, n=1)
        return message + (f"; did you mean '{close[0]}'?" if close else "")
