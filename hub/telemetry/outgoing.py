"""One call to a partner, observed: a CLIENT span named by the A2A method, the partner call
metrics, and a DEBUG line on `hub.client` (partner calls never log at INFO).

`partner_call()` is entered by `A2AClient` around each operation, retries included, so a
retried call is one span with a `retry` event per retry (and `breaker.*` events for the
breaker's decisions), and one count."""

from __future__ import annotations

import logging
import time
from types import TracebackType

from hub.telemetry.context import Telemetry, current_telemetry
from hub.telemetry.tracing import SpanHandle, SpanKind, span

__all__ = ["CARD_METHOD", "card_read_failed", "partner_call"]

CARD_METHOD = "GetAgentCard"
"""The `method` a failed read of a partner's card is counted under."""

log = logging.getLogger("hub.client")


class _Observed:
    __slots__ = ("_method", "_partner", "_span", "_started", "_telemetry")

    def __init__(
        self, telemetry: Telemetry, partner: str, method: str, binding: str, version: str
    ) -> None:
        self._telemetry = telemetry
        self._partner = partner
        self._method = method
        self._started = 0.0
        self._span = span(
            method,
            kind=SpanKind.CLIENT,
            attributes={
                "a2a.method.name": method,
                "a2a.protocol.version": version,
                "a2a.protocol.binding": binding,
                "a2a_hub.partner.name": partner,
                "gen_ai.agent.name": partner,
            },
        )

    def __enter__(self) -> SpanHandle | None:
        self._started = time.perf_counter()
        return self._span.__enter__()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._span.__exit__(exc_type, exc, tb)
        seconds = time.perf_counter() - self._started
        if exc is None:
            outcome = "ok"
        elif isinstance(exc, Exception):
            outcome = type(exc).__name__
        else:
            outcome = "canceled"
        metrics = self._telemetry.metrics
        if metrics is not None:
            metrics.partner_call(self._partner, self._method, outcome=outcome, seconds=seconds)
        log.debug(
            "partner %s %s: %s in %.1f ms", self._partner, self._method, outcome, seconds * 1000
        )


def partner_call(partner: str, method: str, *, binding: str, version: str) -> _Observed:
    """Observe one call of `method` to `partner` over `binding` in protocol `version`."""
    return _Observed(current_telemetry(), partner, method, binding, version)


def card_read_failed(partner: str, *, outcome: str, seconds: float) -> None:
    """Count a read of `partner`'s card that failed (`outcome`: the error's type name) as a
    failed call: a partner whose card cannot be read is as down as one whose calls fail, and
    its calls never get as far as `partner_call`."""
    metrics = current_telemetry().metrics
    if metrics is not None:
        metrics.partner_call(partner, CARD_METHOD, outcome=outcome, seconds=seconds)
    log.debug("partner %s %s: %s in %.1f ms", partner, CARD_METHOD, outcome, seconds * 1000)
