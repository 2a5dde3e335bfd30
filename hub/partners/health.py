"""`PartnerHealth`: one partner's health as `a2a-hub agents check`, the console and the
federation skill show it, read by revalidating its card and building its client."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hub.client import A2AClient, BreakerSnapshot, CircuitBreaker
from hub.errors import ClientError
from hub.protocol.urls import shown_url

__all__ = ["PartnerHealth", "probe"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PartnerHealth:
    """One partner's health, as `a2a-hub agents check` shows it.

    Attributes:
        name: the partner's name.
        ok: its card could be read and its breaker lets calls through.
        card_ms: how long reading (revalidating) the card took, in milliseconds.
        interface: `BINDING VERSION URL` the client would call, when the card was read.
        breaker: the circuit breaker's state.
        error: why the partner is not ok.
    """

    name: str
    ok: bool
    card_ms: float | None
    interface: str | None
    breaker: BreakerSnapshot
    error: str | None = None


async def probe(
    name: str, breaker: CircuitBreaker, revalidate: Callable[[], Awaitable[A2AClient]]
) -> PartnerHealth:
    """The partner's health, from `revalidate` (which reads its card again and returns the
    client built from it); an unwell partner is reported, never raised."""
    started = time.perf_counter()
    error = None
    interface = None
    try:
        client = await revalidate()
        chosen = client.interface
        interface = f"{chosen.protocol_binding} {client.protocol_version} {shown_url(chosen.url)}"
    except ClientError as exc:
        error = exc.for_log()  # for the operator: where the partner is and what it said
    card_ms = (time.perf_counter() - started) * 1000
    snapshot = breaker.snapshot()
    if error is None and snapshot.state.value == "open":
        error = f"circuit open after {snapshot.consecutive_failures} failures"
    return PartnerHealth(
        name=name,
        ok=error is None,
        card_ms=card_ms if interface is not None else None,
        interface=interface,
        breaker=snapshot,
        error=error,
    )
