"""Try it: send a message to a local skill, to a partner through the gateway, to `delegate`
or to a `swarm` with a strategy, and follow the task on its page as it streams in."""

from __future__ import annotations

from litestar import get, post
from litestar.response import Redirect, Response, Template

from hub.console.access import AnyRequest, form_of, hub_of, partners_of, visitor_of
from hub.console.partners import visible_skills
from hub.console.render import page
from hub.console.sending import send
from hub.protocol import JsonObject, user_message
from hub.swarm import STRATEGIES

__all__ = ["TRY_ROUTES"]


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def _metadata(skill: str, fields: dict[str, str]) -> JsonObject:
    """The routing metadata for a local skill: `delegate` and `swarm` take partners and
    tags, `swarm` a strategy."""
    metadata: JsonObject = {"skill": skill}
    agents, tags = _names(fields.get("agents", "")), _names(fields.get("tags", ""))
    if skill == "delegate" and agents:
        metadata["agent"] = agents[0]
    if skill == "swarm":
        metadata["strategy"] = fields.get("strategy") or "broadcast"
        if agents:
            metadata["agents"] = list(agents)
    if skill in ("delegate", "swarm") and tags:
        metadata["tags"] = list(tags)
    return metadata


@get("/try")
async def try_form(request: AnyRequest) -> Template:
    visitor = visitor_of(request)
    agents = list(partners_of(request, visitor))
    return page(
        request,
        visitor,
        "try.html",
        skills=sorted(visible_skills(request, visitor)),
        agents=agents,
        strategies=STRATEGIES,
    )


@post("/try", status_code=303)
async def try_send(request: AnyRequest) -> Response[bytes] | Template | Redirect:
    visitor = visitor_of(request)
    fields = await form_of(request, visitor)
    text = fields.get("text", "").strip() or "(no text)"
    kind, _, name = fields.get("target", "").partition(":")
    if kind == "agent" and name:
        return await send(request, visitor, user_message(text), agent=name)
    skill = name if kind == "skill" and name else hub_of(request).settings.default_skill
    return await send(request, visitor, user_message(text), metadata=_metadata(skill, fields))


TRY_ROUTES = [try_form, try_send]
