"""The overview: the hub's card and version, uptime, live tasks, open streams, and the
request rate and error rate once the hub measures them (`TrafficSource`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from litestar import get
from litestar.response import Response, Template

from hub.console.access import AnyRequest, Visitor, acting_as, console_of, hub_of, visitor_of
from hub.console.live import change_stream
from hub.console.partners import visible_skills
from hub.console.render import page
from hub.console.task_view import state_label
from hub.protocol import ListTasksRequest, TaskState

__all__ = ["OVERVIEW_ROUTES"]

_LIVE_STATES = (
    TaskState.SUBMITTED,
    TaskState.WORKING,
    TaskState.INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED,
)


def _package_version() -> str:
    try:
        return version("a2a-hub")
    except PackageNotFoundError:
        return "unknown"


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


def _uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return (f"{days}d " if days else "") + f"{hours:02d}:{minutes:02d}:{secs:02d}"


async def _figures(request: AnyRequest, visitor: Visitor) -> Figures:
    hub, console = hub_of(request), console_of(request)
    live: list[tuple[str, int]] = []
    with acting_as(request, visitor):
        for state in _LIVE_STATES:
            # ListTasks reads its totalSize from the counts the store keeps per state.
            query = ListTasksRequest(status=state, page_size=1, history_length=0)
            listed = await hub.service.list_tasks(query, visitor.name)
            live.append((state_label(state), listed.total_size))
    gate = hub.gate
    streams = gate.open_streams(visitor.caller) if visitor.name else gate.streams_open()
    traffic = console.traffic
    return Figures(
        uptime=_uptime(time.monotonic() - console.started),
        live=live,
        streams=streams,
        requests_per_second=traffic.requests_per_second() if traffic else None,
        error_rate=traffic.error_rate() if traffic else None,
        measured=traffic is not None,
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

    async def fingerprint() -> object:
        return await _figures(request, visitor)

    return await change_stream(request, visitor, fingerprint, interval=1.0)


OVERVIEW_ROUTES = [overview, overview_fragment, overview_events]
