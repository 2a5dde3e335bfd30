"""Connections still sending their first request's headers: a pool of their own, apart from
the connections being served, bounded in all and per client address.

Such a connection costs the hub a file and a little memory, and it has given no sign yet of
being a client rather than someone holding sockets open. So it takes no slot of
`server.max_connections`: a flood of them cannot turn real clients away. They are bounded
here instead, so that the flood cannot use up the process's open files either: past
`server.max_pending_per_address` connections from one address, a new one from it closes that
address's longest-waiting one; past `server.max_pending_connections` in all, a new one closes
its own address's longest-waiting one if it has any, else the longest-waiting of all. A client
sends its headers within a round trip of connecting, so the one closed is almost always one
that was never going to send them; and an address churning its own connections only ever
closes its own.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["PendingConnections", "address_group"]

C = TypeVar("C", bound=Hashable)


def address_group(host: str) -> str:
    """The client address a connection is counted under: an IPv4 address as it is (also when
    it reaches a dual-stack socket as an IPv4-mapped IPv6 address), an IPv6 address by its
    /64 network, the unit one host or site is given; anything else (a Unix socket) as given."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host


class PendingConnections(Generic[C]):
    """The connections waiting for their headers, oldest first, in all and by address group.

    Args:
        total: most connections waiting at once (`server.max_pending_connections`).
        per_address: most from one address group (`server.max_pending_per_address`).
    """

    def __init__(self, *, total: int, per_address: int) -> None:
        self._total = total
        self._per_address = per_address
        self._all: dict[C, str] = {}
        self._by_group: dict[str, dict[C, None]] = {}

    def __len__(self) -> int:
        return len(self._all)

    def add(self, connection: C, host: str) -> C | None:
        """Count a new connection from `host`.

        Returns:
            The connection it displaces, already uncounted, for the caller to close; None
            while there is room.
        """
        group = address_group(host)
        own = self._by_group.get(group)
        displaced: C | None = None
        if own and (len(own) >= self._per_address or len(self._all) >= self._total):
            displaced = next(iter(own))
        elif len(self._all) >= self._total:
            displaced = next(iter(self._all))
        if displaced is not None:
            self.remove(displaced)
        self._all[connection] = group
        self._by_group.setdefault(group, {})[connection] = None
        return displaced

    def remove(self, connection: C) -> None:
        """Uncount a connection (its headers are in, or it closed); nothing if not counted."""
        group = self._all.pop(connection, None)
        if group is None:
            return
        own = self._by_group[group]
        del own[connection]
        if not own:
            del self._by_group[group]
