"""Which conversation with which partner each of the hub's own conversations continues.

When the hub delegates one turn of a conversation (a hub context id) to a partner, the
partner answers in a context of its own; the next turn must go to that same partner context
so the partner remembers what was said. The map is bounded (least recently used entries go
first) and lives as long as the hub process.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["Conversations", "hub_conversation"]


def hub_conversation(caller: str, context_id: str) -> str:
    """The key of one caller's hub conversation. A client may choose its contextId, so one
    caller's context id can be another's: partner conversations are kept per caller, and no
    caller continues another's."""
    return f"{caller}/{context_id}"


class Conversations:
    """(hub context id, partner name) → the partner's context id, least recently used first
    out once `capacity` is reached."""

    def __init__(self, capacity: int = 10_000) -> None:
        self._capacity = capacity
        self._map: OrderedDict[tuple[str, str], str] = OrderedDict()

    def get(self, hub_context: str, agent: str) -> str | None:
        key = (hub_context, agent)
        partner_context = self._map.get(key)
        if partner_context is not None:
            self._map.move_to_end(key)
        return partner_context

    def remember(self, hub_context: str, agent: str, partner_context: str) -> None:
        self._map[(hub_context, agent)] = partner_context
        self._map.move_to_end((hub_context, agent))
        while len(self._map) > self._capacity:
            self._map.popitem(last=False)

    def __len__(self) -> int:
        return len(self._map)
