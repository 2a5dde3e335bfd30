"""The built-in `federation` skill: the directives hubs send each other in `metadata.swarmKind`.

- `query_resources`: what this hub offers: its skills, its partners (tags, breaker state,
  recent latency and error rate). The answer is one data artifact.
- `execute_task`: run the local skill `metadata.target` here on the message; its result is
  this task's.
- `forward_message`: pass the message on to partner `metadata.agent` (as `delegate` does);
  the trail of hubs travels with it, so loops and long trails are refused.
- `sync_state`: this hub's partner list (name, URL, tags), for the calling hub to learn.

A request with `metadata.swarmKind` reaches this skill without naming it. The caller's skill
and partner scopes apply to what a directive runs or reaches. Directives that
change the hub (registering partners at run time) are not served.
"""

from __future__ import annotations

from typing import Any

from hub.errors import HubError
from hub.protocol import Part
from hub.skills.api import skill
from hub.skills.context import SkillContext
from hub.skills.delegate import delegate
from hub.tools import SKILL_PREFIX, tool_name

__all__ = ["DIRECTIVES", "federation"]

DIRECTIVES = ("query_resources", "execute_task", "forward_message", "sync_state")


@skill(
    id="federation",
    name="Federation",
    description="Answers other hubs' directives (metadata.swarmKind): query_resources, "
    "execute_task, forward_message, sync_state.",
    tags=["federation"],
)
async def federation(ctx: SkillContext) -> list[Part] | None:
    kind = ctx.metadata.get("swarmKind")
    if kind == "query_resources":
        return [_data({"skills": _skills(ctx), "partners": _partners(ctx)})]
    if kind == "sync_state":
        return [_data({"partners": _partner_list(ctx)})]
    if kind == "forward_message":
        if not isinstance(ctx.metadata.get("agent"), str):
            raise ctx.fail("forward_message needs metadata.agent, the partner to pass it to")
        await delegate.function(ctx)  # type: ignore[misc]
        return None
    if kind == "execute_task":
        target = ctx.metadata.get("target")
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
        stats = partners.stats.get(name)
        out.append(
            {
                "name": name,
                "tags": list(entry.tags),
                "breaker": breaker.state.value,
                "calls": stats.calls if stats else 0,
                "errorRate": round(stats.error_rate, 3) if stats else 0.0,
                "latency": round(stats.latency, 4) if stats and stats.latency else None,
            }
        )
    return out


def _partner_list(ctx: SkillContext) -> list[dict[str, Any]]:
    partners = ctx.agents
    return [
        {"name": name, "url": partners.entry(name).url, "tags": list(partners.entry(name).tags)}
        for name in partners
        if partners.entry(name).url
    ]
