"""The partners page: every partner the visitor may reach (agents.yaml's and those added at
run time), its card and health, live; a card refresh; and the router's dry run
(`a2a-hub route` as a form)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litestar import get, post
from litestar.response import Redirect, Response, Template

from hub.console.access import (
    AnyRequest,
    Visitor,
    acting_as,
    console_of,
    form_of,
    hub_of,
    partners_of,
    visitor_of,
)
from hub.console.live import change_stream
from hub.console.render import page, problem
from hub.errors import ProtocolError, UnknownAgentError
from hub.protocol import AgentSkill
from hub.skills.delegate import ROUTING_SKILLS
from hub.swarm import RouteRequest, ScoringRouter

__all__ = ["PARTNER_ROUTES", "visible_skills"]

_WATCH_INTERVAL = 0.25


def visible_skills(request: AnyRequest, visitor: Visitor) -> Mapping[str, AgentSkill]:
    """The local skills the visitor may use, by id."""
    allowed = visitor.caller.skills
    skills = console_of(request).skills
    return {key: card for key, card in skills.items() if allowed is None or key in allowed}


async def _render(request: AnyRequest, template: str, **context: Any) -> Template:
    visitor = visitor_of(request)
    partners = partners_of(request, visitor)
    stats = hub_of(request).observability.stats
    console = console_of(request)
    history = console.traffic.history if console.traffic else None
    with acting_as(request, visitor):
        rows = await console.board.rows(partners, stats, history)
    return page(request, visitor, template, rows=rows, **context)


@get("/partners")
async def partner_list(request: AnyRequest) -> Template:
    return await _render(request, "partners.html", route=None, asked={})


@get("/partners/fragment")
async def partner_fragment(request: AnyRequest) -> Template:
    return await _render(request, "_partners.html")


@get("/partners/events")
async def partner_events(request: AnyRequest) -> Response[bytes]:
    visitor = visitor_of(request)
    partners = partners_of(request, visitor)
    stats = hub_of(request).observability.stats
    board = console_of(request).board

    async def fingerprint() -> object:
        with acting_as(request, visitor):
            return board.fingerprint(partners, stats)

    return await change_stream(request, visitor, fingerprint, interval=_WATCH_INTERVAL)


@post("/partners/{agent_name:str}/refresh", status_code=303)
async def refresh_card(request: AnyRequest) -> Template | Redirect:
    visitor = visitor_of(request)
    agent_name: str = request.path_params["agent_name"]
    await form_of(request, visitor)
    partners = partners_of(request, visitor)
    try:
        with acting_as(request, visitor):
            partners.entry(agent_name)  # an unknown (or out of scope) name is refused
            await console_of(request).board.refresh(partners, agent_name)
    except (ProtocolError, UnknownAgentError) as error:
        return problem(request, visitor, error)
    return Redirect(path=f"{console_of(request).path}/partners", status_code=303)


@get("/partners/route")
async def route(request: AnyRequest) -> Template:
    """The router's ranking for a request, and why (nothing is sent)."""
    visitor = visitor_of(request)
    params = request.query_params
    asked = {key: str(params.get(key, "")).strip() for key in ("text", "tag", "agent", "skill")}
    wanted = RouteRequest(
        text=asked["text"],
        agent=asked["agent"] or None,
        skill=asked["skill"] or None,
        tags=tuple(tag.strip() for tag in asked["tag"].split(",") if tag.strip()),
    )
    router = ScoringRouter(
        partners_of(request, visitor),
        visible_skills(request, visitor),
        stats=hub_of(request).observability.stats,
        exclude_skills=ROUTING_SKILLS,
    )
    with acting_as(request, visitor):
        ranked = await router.rank(wanted)
    return await _render(request, "partners.html", route=ranked, asked=asked)


PARTNER_ROUTES = [partner_list, partner_fragment, partner_events, refresh_card, route]
