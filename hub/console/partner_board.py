"""The partners page's rows: each partner's card, breaker, recent calls and last card check,
its calls over the last hour, and what its card last changed.

Everything is read from the visitor's `PartnerView` (cards, breakers, the card cache's
record of each card: when it was fetched, the card it replaced), the hub's `StatsBook` (the
call statistics the router weighs) and the traffic history (calls per minute); the board
only remembers when the console last checked each card and what that gave, so a page can
show it without reading the card again.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import anyio

from hub.client import BreakerSnapshot
from hub.console.card_diff import CardChange, card_changes
from hub.console.history_charts import TrafficCharts, traffic_charts
from hub.errors import ClientError, UnknownAgentError
from hub.partners import PartnerHealth, PartnerView, StatsBook
from hub.protocol import AgentCard, utc_now
from hub.protocol.urls import shown_url
from hub.telemetry.history import TrafficHistory

__all__ = ["CardCheck", "PartnerBoard", "PartnerRow", "shown_url"]

log = logging.getLogger("hub.console")

_CHECK_TIMEOUT = 5.0


_URL = re.compile(r"https?://[^\s\]\[<>\"']+")


def _shown(found: re.Match[str]) -> str:
    return shown_url(found.group(0))


@dataclass(frozen=True, slots=True, kw_only=True)
class CardCheck:
    """The outcome of the console's last read of a partner's card."""

    at: datetime
    ms: float | None
    error: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class PartnerRow:
    """One partner as the partners page shows it."""

    name: str
    url: str
    origin: str | None
    tags: tuple[str, ...]
    card: AgentCard | None
    check: CardCheck | None
    breaker: BreakerSnapshot
    calls: int
    p50_ms: float | None
    p95_ms: float | None
    error_rate: float | None
    fetched_at: datetime | None = None
    """When the card cache last fetched the card (None: an inline card, or never read)."""
    changed_at: datetime | None = None
    """When the card cache fetched a card that differed from the one it held."""
    changes: tuple[CardChange, ...] = ()
    """What that change was, field by field."""
    charts: TrafficCharts | None = None
    """Calls, errors and latency per minute over the last hour (None: not measured)."""

    @property
    def up(self) -> bool:
        return (
            self.card is not None
            and (self.check is None or self.check.error is None)
            and self.breaker.state.value != "open"
        )


class PartnerBoard:
    """The last card check per partner, and the rows built from a `PartnerView`."""

    def __init__(self) -> None:
        self._checks: dict[str, CardCheck] = {}

    def record(self, health: PartnerHealth) -> CardCheck:
        # The operator's message names where the partner is: its URLs are shown as the
        # console shows every partner URL, without what may hold a secret.
        error = None if health.error is None else _URL.sub(_shown, health.error)
        check = CardCheck(at=utc_now(), ms=health.card_ms, error=error)
        self._checks[health.name] = check
        return check

    async def refresh(self, partners: PartnerView, name: str) -> CardCheck:
        """Read the partner's card again now (`PartnerView.check`) and remember the outcome."""
        started = time.perf_counter()
        try:
            with anyio.move_on_after(_CHECK_TIMEOUT):
                return self.record(await partners.check(name))
            error = f"the card was not read within {_CHECK_TIMEOUT:g} s"
        except UnknownAgentError:
            raise
        except Exception:
            # A fault the client layer did not name: the page says so, the log has it.
            log.exception("partner '%s': its card could not be checked", name)
            error = "the card could not be checked (the hub's log has the details)"
        check = CardCheck(at=utc_now(), ms=(time.perf_counter() - started) * 1000, error=error)
        self._checks[name] = check
        return check

    async def rows(
        self, partners: PartnerView, stats: StatsBook, history: TrafficHistory | None = None
    ) -> list[PartnerRow]:
        """Every partner in view, checking those never checked before; with the hub's
        traffic `history`, each one's calls over the last hour."""
        names = list(partners)
        unchecked = [name for name in names if name not in self._checks]
        if unchecked:
            async with anyio.create_task_group() as group:
                for name in unchecked:
                    group.start_soon(self.refresh, partners, name)
        return [await self._row(partners, stats, history, name) for name in names]

    def fingerprint(self, partners: PartnerView, stats: StatsBook) -> tuple[object, ...]:
        """What changes when a row would: breakers, calls, checks (for live updates)."""
        marks: list[object] = []
        for name in partners:
            calls = stats.get(name)
            snapshot = partners.breaker(name).snapshot()
            check = self._checks.get(name)
            record = partners.card_record(name)
            marks.append(
                (
                    name,
                    snapshot.state,
                    snapshot.consecutive_failures,
                    calls.calls if calls else 0,
                    check.at if check else None,
                    record.fetched_at if record else None,
                )
            )
        return tuple(marks)

    async def _row(
        self, partners: PartnerView, book: StatsBook, history: TrafficHistory | None, name: str
    ) -> PartnerRow:
        entry = partners.entry(name)
        check = self._checks.get(name)
        card: AgentCard | None = None
        if check is None or check.error is None:
            try:
                with anyio.fail_after(_CHECK_TIMEOUT):
                    card = await partners.card(name)
            except (ClientError, TimeoutError):
                card = None
        record = partners.card_record(name)
        stats = book.get(name)
        p50 = stats.percentile(0.5) if stats else None
        p95 = stats.percentile(0.95) if stats else None
        return PartnerRow(
            name=name,
            url=shown_url(entry.url),
            origin=partners.origin(name),
            tags=tuple(entry.tags),
            card=card,
            check=check,
            breaker=partners.breaker(name).snapshot(),
            calls=stats.calls if stats else 0,
            p50_ms=None if p50 is None else p50 * 1000,
            p95_ms=None if p95 is None else p95 * 1000,
            error_rate=stats.error_rate if stats else None,
            fetched_at=_when(record.fetched_at) if record else None,
            changed_at=_when(record.changed_at) if record and record.changed_at else None,
            changes=tuple(card_changes(record.previous, record.card))
            if record is not None and record.previous is not None
            else (),
            charts=None
            if history is None
            else traffic_charts(history.partner(name), noun="Calls", small=True),
        )


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
