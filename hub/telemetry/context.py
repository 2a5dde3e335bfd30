"""`Telemetry`: what one hub records (its tracer, its metrics), and how instrumented code
finds it.

The hub's app builds one `Telemetry` from its settings and makes it current for its lifespan
(so the task manager, the push sender and the gateway's pumps, which run in the lifespan's
task group, inherit it) and for each request it serves. Code anywhere below reads it with
`current_telemetry()`; outside a hub (a script, a unit test of one class) it reads
`Telemetry.off()`, which records nothing. Two hubs in one process each see their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hub.telemetry.metrics import HubMetrics
    from hub.telemetry.spend import SpendBook
    from hub.telemetry.tracing import Tracer

__all__ = ["Telemetry", "current_telemetry", "use_telemetry"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Telemetry:
    """One hub's recorders.

    Attributes:
        tracer: records spans; None when tracing is off (then nothing of OpenTelemetry is
            imported).
        metrics: the Prometheus metrics; None when metrics are off.
        access_log: write one line per request to the `hub.access` logger.
        spend: what each caller has spent, and the budgets they are held to; None outside a
            hub's app (nothing is counted or refused).
    """

    tracer: Tracer | None = None
    metrics: HubMetrics | None = None
    access_log: bool = False
    spend: SpendBook | None = None

    @staticmethod
    def off() -> Telemetry:
        """Records nothing."""
        return _OFF


_OFF = Telemetry()
_current: ContextVar[Telemetry] = ContextVar("a2a_hub_telemetry", default=_OFF)


def current_telemetry() -> Telemetry:
    """The telemetry of the hub whose work runs now (`Telemetry.off()` outside any)."""
    return _current.get()


@contextmanager
def use_telemetry(telemetry: Telemetry) -> Iterator[Telemetry]:
    """Make `telemetry` the current one inside the block."""
    token = _current.set(telemetry)
    try:
        yield telemetry
    finally:
        _current.reset(token)
