"""The built-in `federation` skill: the directives hubs send each other in `metadata.swarmKind`.

- `query_resources`: what this hub offers: its skills, its partners (tags, breaker state,
  recent latency and error rate, and where a partner added at run time came from). The answer
  is one data artifact.
- `execute_task`: run the local skill `metadata.target` here on the message; its result is
  this task's.
- `forward_message`: pass the message on to partner `metadata.agent` (as `delegate` does);
  the trail of hubs travels with it, so loops and long trails are refused.
- `sync_state`: this hub's partner list (name, URL, tags), for the calling hub to learn.
  With `metadata.agent` naming a partner hub, this hub asks that peer for its list instead
  and adds the partners it does not know, reached directly at their URLs (`learn`).
- `spawn_agent`: add the partner `metadata.agent` (an object: `name`, `url`, optional `tags`,
  `weight`, `protocol`, `description`; or the same object as a data part) while the hub runs.

A request with `metadata.swarmKind` reaches this skill without naming it. The caller's skill
and partner scopes apply to what a directive runs or reaches. The two directives that change
the partners (`spawn_agent`, `sync_state` naming a peer) need a permission (`federation` on
the credential, or `federation.anonymous` for callers without one); a refused one, or one
whose partner is not let in, ends the task REJECTED, its status message saying why and
carrying the error under `metadata["a2a-hub/error"]` (`code`, `status`, `reason`,
`fieldViolations`), as the same error would be sent for a refused request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from hub.client import card_url, user_message
from hub.config import FederationPermission
from hub.errors import HubError, InvalidParamsError, ProtocolError
from hub.protocol import AgentCard, JsonObject, Message, Part, Task, TaskState
from hub.protocol.trace import current_scope
from hub.registry import AgentEntry
from hub.skills.api import skill
from hub.skills.context import SkillContext
from hub.skills.delegate import delegate
from hub.skills.refusal import ERROR_METADATA_KEY, reject
from hub.tasks.choice import routing_metadata
from hub.tools import SKILL_PREFIX, tool_name

__all__ = ["DIRECTIVES", "ERROR_METADATA_KEY", "federation"]

DIRECTIVES = ("query_resources", "execute_task", "forward_message", "sync_state", "spawn_agent")

_SPAWN_KEYS = ("name", "url", "tags", "weight", "protocol", "description")
_MAX_DESCRIPTION = 500


@skill(
    id="federation",
    name="Federation",
    description="Answers other hubs' directives (metadata.swarmKind): query_resources, "
    "execute_task, forward_message, sync_state, spawn_agent.",
    tags=["federation"],
)
async def federation(ctx: SkillContext) -> list[Part] | None:
    kind = _directive(ctx).get("swarmKind")
    if kind == "query_resources":
        return [_data({"skills": _skills(ctx), "partners": _partners(ctx)})]
    if kind == "sync_state":
        peer = _directive(ctx).get("agent")
        if peer is None:
            return [_data({"partners": _partner_list(ctx)})]
        if not isinstance(peer, str):
            raise ctx.fail("sync_state: metadata.agent names the partner hub to learn from")
        return await _learn(ctx, peer)
    if kind == "spawn_agent":
        return await _spawn(ctx)
    if kind == "forward_message":
        if not isinstance(_directive(ctx).get("agent"), str):
            raise ctx.fail("forward_message needs metadata.agent, the partner to pass it to")
        await delegate.function(ctx)  # type: ignore[misc]
        return None
    if kind == "execute_task":
        target = _directive(ctx).get("target")
        if not isinstance(target, str):
            raise ctx.fail("execute_task needs metadata.target, the local skill to run")
        name = tool_name(SKILL_PREFIX, target)
        if target in ("federation",) or name not in ctx.tools:
            served = ", ".join(s for s in _skills(ctx) if s != "federation")
            raise ctx.fail(f"execute_task: no local skill '{target}' (served: {served})")
        try:
            result = await ctx.tools[name].call(message=ctx.text or "(no text)")
        except HubError as exc:  # e.g. the caller may not use that skill
            raise ctx.fail(f"execute_task: {exc}") from None
        if not result.ok:
            raise ctx.fail(f"skill '{target}' ended {result.state}: {result.message}")
        return [Part(text=result.text)]
    raise ctx.fail(f"unknown swarmKind {kind!r} (served: {', '.join(DIRECTIVES)})")


def _directive(ctx: SkillContext) -> Mapping[str, Any]:
    """The directive's keys (`swarmKind`, `agent`, `target`), from the request's metadata or
    the message's, read as the task manager read them to choose this skill."""
    return routing_metadata(ctx.metadata, ctx.message.metadata)


# -- spawn_agent ------------------------------------------------------------------------------


async def _spawn(ctx: SkillContext) -> list[Part] | None:
    caller = _caller()
    try:
        _check_permission(ctx, "spawn_agent", caller)
        entry, description = _spawn_entry(ctx)
        origin = f"spawn_agent by {caller or 'anonymous caller'}"
        card = await ctx.agents.add(entry, origin=origin, description=description)
    except ProtocolError as error:
        await reject(ctx, f"spawn_agent refused: {error.message}", error)
        return None
    added = {"name": entry.name, "url": entry.url, "tags": list(entry.tags), "origin": origin}
    return [_data({"added": added, "card": {"name": card.name, "skills": _card_skills(card)}})]


def _spawn_entry(ctx: SkillContext) -> tuple[AgentEntry, str | None]:
    """The partner a spawn_agent asks for: `metadata.agent`, or the message's data part."""
    raw = _directive(ctx).get("agent")
    if raw is None:
        raw = next((value for value in ctx.data if isinstance(value, Mapping)), None)
    if not isinstance(raw, Mapping):
        problem = "an object with name and url (tags, weight, protocol, description optional)"
        raise InvalidParamsError(
            f"spawn_agent needs metadata.agent (or a data part): {problem}",
            violations=[("metadata.agent", problem)],
        )
    violations = [
        (f"metadata.agent.{key}", f"not accepted (known: {', '.join(_SPAWN_KEYS)})")
        for key in raw
        if key not in _SPAWN_KEYS
    ]
    violations += [
        (f"metadata.agent.{key}", "required") for key in ("name", "url") if key not in raw
    ]
    description = raw.get("description")
    if description is not None and (
        not isinstance(description, str) or len(description) > _MAX_DESCRIPTION
    ):
        violations.append(
            ("metadata.agent.description", f"a string of at most {_MAX_DESCRIPTION} characters")
        )
    if violations:
        listed = "; ".join(f"{field}: {problem}" for field, problem in violations)
        raise InvalidParamsError(
            f"spawn_agent: {listed} (partners that need credentials or other settings belong "
            "in agents.yaml)",
            violations=violations,
        )
    try:
        entry = AgentEntry.model_validate({k: v for k, v in raw.items() if k != "description"})
    except ValidationError as exc:
        problems = [
            (
                ".".join(("metadata.agent", *(str(step) for step in error["loc"]))),
                error["msg"],
            )
            for error in exc.errors()
        ]
        listed = "; ".join(f"{field}: {problem}" for field, problem in problems)
        raise InvalidParamsError(f"spawn_agent: {listed}", violations=problems) from None
    return entry, description


# -- sync_state naming a peer: learning its partners ------------------------------------------


async def _learn(ctx: SkillContext, peer: str) -> list[Part] | None:
    try:
        _check_permission(ctx, "learn", _caller())
    except ProtocolError as error:
        await reject(ctx, f"sync_state refused: {error.message}", error)
        return None
    partners = ctx.agents
    client = await partners.client(peer)  # an unknown peer fails the task, naming the known
    reply = await client.send(user_message("sync_state"), metadata={"swarmKind": "sync_state"})
    listing = _partner_listing(reply)
    if listing is None:
        raise ctx.fail(
            f"sync_state: partner '{peer}' did not answer with a partner list (is it a hub "
            "serving the federation skill?)"
        )
    source = partners.entry(peer).url or peer
    hubs = _hubs_on_trail(ctx)
    known = {
        card_url(url): name for name in partners if (url := partners.entry(name).url) is not None
    }
    learned: list[JsonObject] = []
    skipped: list[JsonObject] = []
    for item in listing:
        name, url = item.get("name"), item.get("url")
        if not isinstance(name, str) or not isinstance(url, str):
            skipped.append(_skip(name, url, "INVALID_PARAMS", "no name or url"))
            continue
        target = card_url(url)
        if target in hubs:
            skipped.append(_skip(name, url, *hubs[target]))
            continue
        if target in known:
            skipped.append(_skip(name, url, "ALREADY_KNOWN", f"already partner '{known[target]}'"))
            continue
        tags = item.get("tags")
        try:
            entry = AgentEntry.model_validate(
                {"name": name, "url": url, "tags": tags if isinstance(tags, list) else []}
            )
            await partners.add(entry, origin=f"learned from {source}")
        except ValidationError as exc:
            skipped.append(_skip(name, url, "INVALID_PARAMS", exc.errors()[0]["msg"]))
        except ProtocolError as error:
            skipped.append(_skip(name, url, error.reason, error.message))
        else:
            known[target] = name
            learned.append({"name": name, "url": url, "tags": list(entry.tags)})
    return [_data({"peer": peer, "learned": learned, "skipped": skipped})]


def _partner_listing(reply: Task | Message) -> list[Mapping[str, Any]] | None:
    """The `partners` list of a peer's sync_state answer, or None when it has none."""
    if not isinstance(reply, Task) or reply.status.state is not TaskState.COMPLETED:
        return None
    for artifact in reply.artifacts or ():
        for part in artifact.parts:
            if isinstance(part.data, Mapping) and isinstance(part.data.get("partners"), list):
                return [item for item in part.data["partners"] if isinstance(item, Mapping)]
    return None


def _hubs_on_trail(ctx: SkillContext) -> dict[str, tuple[str, str]]:
    """By card URL, this hub and the hubs the request came through (the trail ends with this
    hub's public URL), with the reason each is never learned."""
    scope = current_scope()
    trail = scope.trail if scope is not None else ()
    hubs = {card_url(hub): ("ON_TRAIL", "a hub the request came through") for hub in trail}
    for here in (*trail[-1:], ctx.agents.federation.here):
        if here is not None:
            hubs[card_url(here)] = ("THIS_HUB", "this hub itself")
    return hubs


def _skip(name: object, url: object, reason: str, why: str) -> JsonObject:
    return {
        "name": name if isinstance(name, str) else None,
        "url": url if isinstance(url, str) else None,
        "reason": reason,
        "message": why,
    }


# -- shared -----------------------------------------------------------------------------------


def _caller() -> str:
    scope = current_scope()
    return scope.caller if scope is not None else ""


def _check_permission(ctx: SkillContext, permission: FederationPermission, caller: str) -> None:
    refusal = ctx.agents.federation.refusal(permission, caller)
    if refusal is not None:
        raise refusal


def _card_skills(card: AgentCard) -> list[str]:
    return [card_skill.id for card_skill in card.skills]


def _data(value: dict[str, Any]) -> Part:
    return Part(data=value, media_type="application/json")


def _skills(ctx: SkillContext) -> list[str]:
    return sorted(
        name.removeprefix(SKILL_PREFIX) for name in ctx.tools if name.startswith(SKILL_PREFIX)
    )


def _partners(ctx: SkillContext) -> list[dict[str, Any]]:
    partners = ctx.agents
    out = []
    for name in partners:
        entry = partners.entry(name)
        breaker = partners.breaker(name).snapshot()
        stats = ctx.tools.stats.get(name)
        report: dict[str, Any] = {
            "name": name,
            "tags": list(entry.tags),
            "breaker": breaker.state.value,
            "calls": stats.calls if stats else 0,
            "errorRate": round(stats.error_rate, 3) if stats else 0.0,
            "latency": round(stats.latency, 4) if stats and stats.latency else None,
        }
        origin = partners.origin(name)
        if origin is not None:
            report["origin"] = origin
        out.append(report)
    return out


def _partner_list(ctx: SkillContext) -> list[dict[str, Any]]:
    partners = ctx.agents
    return [
        {"name": name, "url": partners.entry(name).url, "tags": list(partners.entry(name).tags)}
        for name in partners
        if partners.entry(name).url
    ]
