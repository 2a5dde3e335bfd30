"""The overview: the hub's card and version, uptime, live tasks by state, open streams, the
partners' breakers, and once the hub measures its traffic (`TrafficSource`) the request
rate and error rate and the last hour's charts: the hub's requests, errors and latency, each
partner's calls (those the visitor may reach), each model entry's tokens and cost.

The page follows the hub through `change_stream`, whose fingerprint is a few counts (live
tasks, streams, breakers, the minute, the traffic history's revision), looked at every
second but at most once per `_SETTLE` seconds after a change: an open overview reloads its
fragment soon after something it shows changed, and under steady traffic once per
`_SETTLE`. The counts are read once a second for all of a visitor's open overviews, and the
charts drawn once per change (`Memo`)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from litestar import get
from litestar.response import Response, Template
from markupsafe import Markup

from hub.console.access import (
    AnyRequest,
    Visitor,
    acting_as,
    console_of,
    hub_of,
    partners_of,
    visitor_of,
)
from hub.console.charts import Bar, bar_chart
from hub.console.history_charts import TrafficCharts, traffic_charts, usage_charts
from hub.console.live import change_stream
from hub.console.partners import visible_skills
from hub.console.render import page
from hub.console.task_view import state_label
from hub.protocol import ListTasksRequest, TaskState

__all__ = ["OVERVIEW_ROUTES"]

_WATCH_INTERVAL = 1.0
_SETTLE = 5.0
"""Seconds after a change before an open overview is told of the next (charts are per
minute; a task's state is the task page's to follow as it happens)."""

_LIVE_STATES = (
    TaskState.SUBMITTED,
    TaskState.WORKING,
    TaskState.INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED,
)


@cache
def _package_version() -> str:
    """The installed package's version, read once (it scans the installed distributions)."""
    try:
        return version("a2a-hub")
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True, slots=True, kw_only=True)
class PartnerTraffic:
    """One partner on the overview: its breaker and its calls' charts."""

    name: str
    breaker: str
    failures: int
    charts: TrafficCharts | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelUsage:
    """One model entry on the overview: its tokens and cost per minute."""

    name: str
    tokens: Markup
    cost: Markup


@dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    uptime: str
    live: list[tuple[str, int]]
    """Tasks in each unfinished state (the visitor's own with auth on)."""
    streams: int
    requests_per_second: float | None
    error_rate: float | None
    measured: bool
    """Whether the hub measures its traffic (hub/telemetry) at all."""
    states: Markup
    """Live tasks by state, as bars."""
    hub: TrafficCharts | None = None
    partners: list[PartnerTraffic] = field(default_factory=list)
    models: list[ModelUsage] = field(default_factory=list)


def _uptime(seconds: float) -> str:
    """`3 min`, `2 h 05 min`, `1 d 4 h 05 min` (the page reloads at least once a minute)."""
    minutes = int(seconds) // 60
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days} d {hours} h {minutes:02d} min"
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min"


async def _live(request: AnyRequest, visitor: Visitor) -> list[tuple[str, int]]:
    """Tasks in each unfinished state, as ListTasks answers the visitor (read at most once
    a second for all the visitor's open overviews)."""
    service = hub_of(request).service

    async def count() -> list[tuple[str, int]]:
        live: list[tuple[str, int]] = []
        with acting_as(request, visitor):
            for state in _LIVE_STATES:
                # ListTasks reads its totalSize from the counts the store keeps per state.
                query = ListTasksRequest(status=state, page_size=1, history_length=0)
                listed = await service.list_tasks(query, visitor.name)
                live.append((state_label(state), listed.total_size))
        return live

    live: list[tuple[str, int]] = await console_of(request).counts.get(
        ("live", visitor.name), count
    )
    return live


def _streams(request: AnyRequest, visitor: Visitor) -> int:
    gate = hub_of(request).gate
    return gate.open_streams(visitor.caller) if visitor.name else gate.streams_open()


def _breakers(request: AnyRequest, visitor: Visitor) -> list[tuple[str, str, int]]:
    """(partner, breaker state, consecutive failures) of the partners in the visitor's view."""
    partners = partners_of(request, visitor)
    marks = []
    for name in partners:
        snapshot = partners.breaker(name).snapshot()
        marks.append((name, snapshot.state.value, snapshot.consecutive_failures))
    return marks


@dataclass(frozen=True, slots=True, kw_only=True)
class _Drawn:
    """The charts of one scope at one version of what they show."""

    states: Markup
    hub: TrafficCharts | None
    partners: list[PartnerTraffic]
    models: list[ModelUsage]


def _visible_models(request: AnyRequest, visitor: Visitor) -> set[str] | None:
    """The model entries whose tokens and cost the visitor sees: those of the orchestrator
    skills its credential may use (None: every one, for a credential without a skill list)."""
    allowed = visitor.caller.skills
    if allowed is None:
        return None
    models = console_of(request).skill_models
    return {models[skill] for skill in allowed if skill in models}


def _draw(
    request: AnyRequest,
    visitor: Visitor,
    live: list[tuple[str, int]],
    breakers: list[tuple[str, str, int]],
) -> _Drawn:
    traffic = console_of(request).traffic
    history = traffic.history if traffic else None
    partners = [
        PartnerTraffic(
            name=name,
            breaker=state,
            failures=failures,
            charts=None
            if history is None
            else traffic_charts(history.partner(name), noun="Calls", small=True),
        )
        for name, state, failures in breakers
    ]
    models = []
    if history is not None:
        seen = _visible_models(request, visitor)
        for name in history.models():
            if seen is None or name in seen:
                tokens, cost = usage_charts(history.model(name))
                models.append(ModelUsage(name=name, tokens=tokens, cost=cost))
    return _Drawn(
        states=bar_chart(
            "Live tasks by state", [Bar(label=label, key=label, value=n) for label, n in live]
        ),
        hub=None
        if history is None
        else traffic_charts(history.hub(), noun="Requests", small=False),
        partners=partners,
        models=models,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Marks:
    """What the overview shows changes when one of these does."""

    live: tuple[tuple[str, int], ...]
    streams: int
    breakers: tuple[tuple[str, str, int], ...]
    minute: int
    """The charts move on, and the uptime with them."""
    revision: int
    """The traffic history's (-1: not measured)."""


async def _marks(request: AnyRequest, visitor: Visitor) -> _Marks:
    traffic = console_of(request).traffic
    return _Marks(
        live=tuple(await _live(request, visitor)),
        streams=_streams(request, visitor),
        breakers=tuple(_breakers(request, visitor)),
        minute=math.floor(time.time() / 60),
        revision=traffic.history.revision if traffic else -1,
    )


async def _figures(request: AnyRequest, visitor: Visitor) -> Figures:
    console = console_of(request)
    traffic = console.traffic
    marks = await _marks(request, visitor)

    async def draw() -> _Drawn:
        return _draw(request, visitor, list(marks.live), list(marks.breakers))

    # The visitor's open overviews fetch after the same change: the charts are drawn once.
    drawn: _Drawn = await console.drawn.get(("overview", visitor.name), draw, version=marks)
    return Figures(
        uptime=_uptime(time.monotonic() - console.started),
        live=list(marks.live),
        streams=marks.streams,
        requests_per_second=traffic.requests_per_second() if traffic else None,
        error_rate=traffic.error_rate() if traffic else None,
        measured=traffic is not None,
        states=drawn.states,
        hub=drawn.hub,
        partners=drawn.partners,
        models=drawn.models,
    )


async def _render(request: AnyRequest, template: str) -> Template:
    visitor = visitor_of(request)
    card = hub_of(request).service.card.card
    return page(
        request,
        visitor,
        template,
        card=card,
        skills=[skill for skill in card.skills if skill.id in visible_skills(request, visitor)],
        package_version=_package_version(),
        started_at=console_of(request).started_at.isoformat(timespec="seconds"),
        figures=await _figures(request, visitor),
    )


@get("/")
async def overview(request: AnyRequest) -> Template:
    return await _render(request, "overview.html")


@get("/overview/fragment")
async def overview_fragment(request: AnyRequest) -> Template:
    return await _render(request, "_overview.html")


@get("/overview/events")
async def overview_events(request: AnyRequest) -> Response[bytes]:
    visitor = visitor_of(request)
    told: dict[str, Any] = {"marks": None, "at": -math.inf}

    async def fingerprint() -> object:
        # Quiet for `_SETTLE` seconds after telling the page of a change: under steady
        # traffic the page reloads once per `_SETTLE`, not once per look.
        now = time.monotonic()
        if told["marks"] is not None and now - told["at"] < _SETTLE:
            return told["marks"]
        marks = await _marks(request, visitor)
        if told["marks"] is None:
            told["marks"] = marks  # what the page was rendered with: nothing to tell
        elif marks != told["marks"]:
            told["marks"], told["at"] = marks, now
        return marks

    return await change_stream(request, visitor, fingerprint, interval=_WATCH_INTERVAL)


OVERVIEW_ROUTES = [overview, overview_fragment, overview_events]
