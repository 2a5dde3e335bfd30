"""`a2a-hub agents list|show|check|refresh`, `call`, `route` and `swarm`: the partners of
agents.yaml."""

from __future__ import annotations

import argparse
import difflib
import json
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from typing import Any

import anyio

from hub.cli.compose import json_option
from hub.cli.outcome import FAILED, NEEDS_INPUT, OK, Running, UsageError
from hub.cli.render import answer_hint, camel_keys, state_label
from hub.cli.settings import command_settings
from hub.cli.stream import print_events, stream_style
from hub.client import A2AClient
from hub.errors import InvalidParamsError
from hub.partners import PartnerHealth, Partners
from hub.protocol import AgentCard
from hub.protocol.urls import shown_url
from hub.registry import AgentEntry, Registry, registry_for
from hub.skills import configured_skills
from hub.skills.delegate import ROUTING_SKILLS
from hub.swarm import Branch, RouteRequest, ScoringRouter, SwarmSpec, choose_partners, run_swarm
from hub.tools import RemoteAgentTool, ToolResult

__all__ = ["agents", "call", "partner_client", "registry_options", "route", "swarm"]


def registry_options(args: argparse.Namespace) -> str:
    """The `--config` and `--agents` options this command line gave, to repeat them."""
    given = [(flag, getattr(args, key, None)) for flag, key in REGISTRY_FLAGS]
    return "".join(f" {flag} {shlex.quote(value)}" for flag, value in given if value)


REGISTRY_FLAGS = (("--config", "config"), ("--agents", "agents"))


@asynccontextmanager
async def partner_client(args: argparse.Namespace, name: str) -> AsyncIterator[A2AClient]:
    """Partner `name`'s client, with its credentials from agents.yaml, as `call` reaches it.

    Raises:
        UnknownAgentError: agents.yaml has no enabled partner of that name.
    """
    async with Partners(_registry(args)) as partners:
        yield await partners.client(name)


def _registry(args: argparse.Namespace) -> Registry:
    """The partners: of --agents, or of the file the settings name."""
    return registry_for(command_settings(args), args.agents)


async def agents(args: argparse.Namespace, running: Running) -> int:
    """Run one `agents` action; returns the exit status."""
    if args.hub is not None:
        if args.action != "check":
            raise UsageError(f"--hub goes with `agents check`, not `agents {args.action}`")
        from hub.cli.status import check_running_hub

        return await check_running_hub(args, running)
    registry = _registry(args)
    if args.action == "list":
        _list(registry, as_json=args.json)
        return 0
    async with Partners(registry) as partners:
        if args.action == "check":
            return await _check(partners, args.names, as_json=args.json)
        if len(args.names) != 1:
            raise UsageError(f"agents {args.action} takes one NAME")
        name = args.names[0]
        running.url = partners.entry(name).url
        if args.action == "show":
            card = await partners.card(name)
        else:
            card = await partners.refresh(name)
        if args.json:
            print(json.dumps(json.loads(card.to_json()), indent=2))
        else:
            _show(partners.entry(name), card)
        return 0


async def call(args: argparse.Namespace, running: Running) -> int:
    """`a2a-hub call NAME TEXT`: send TEXT to partner NAME and print the outcome; returns the
    exit status."""
    registry = _registry(args)
    arguments: dict[str, Any] = {"message": args.text}
    for key in ("skill", "context_id", "task_id"):
        if getattr(args, key):
            arguments[key] = getattr(args, key)
    if args.data is not None:
        arguments["data"] = json_option("--data", args.data)
    async with Partners(registry) as partners:
        tool = partners[args.name]
        if args.skill:
            await _check_skill(partners, args.name, args.skill)
        running.what = f"the call to {args.name}"
        # Named, not located: the hint after Ctrl-C reaches the task as this command did,
        # with the credentials of agents.yaml, and shows no address.
        running.agent, running.registry_options = args.name, registry_options(args)
        if args.stream:
            async with tool.stream(**arguments) as events:
                answer_with = f"a2a-hub call {args.name}"
                return await print_events(
                    events, running, style=stream_style(args), answer_with=answer_with
                )
        result = await tool.call(**arguments)
    print(json.dumps(camel_keys(result.to_dict()), indent=2) if args.json else _result(result))
    if result.ok:
        return OK
    return NEEDS_INPUT if result.needs_input else FAILED


async def _check_skill(partners: Partners, name: str, skill: str) -> None:
    """Refuse a skill the partner's card does not list, before any message is sent (a card
    that lists no skills accepts any)."""
    offered = [entry.id for entry in (await partners.card(name)).skills]
    if offered and skill not in offered:
        close = difflib.get_close_matches(skill, offered, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise UsageError(
            f"partner '{name}' has no skill '{skill}'{hint} (its skills: {', '.join(offered)})"
        )


async def route(args: argparse.Namespace, running: Running) -> int:
    """`a2a-hub route TEXT`: the ranked candidates for a request and why (nothing is sent but
    card reads)."""
    settings = command_settings(args)
    registry = registry_for(settings, args.agents)
    skills = {sid: local.card for sid, local in configured_skills(settings).items()}
    request = RouteRequest(
        text=args.text, agent=args.agent, skill=args.skill, tags=tuple(args.tag or ())
    )
    async with Partners(registry) as partners:
        ranked = await ScoringRouter(partners, skills, exclude_skills=ROUTING_SKILLS).rank(request)
    if args.json:
        print(json.dumps(camel_keys([asdict(candidate) for candidate in ranked]), indent=2))
        return 0 if ranked else 1
    if not ranked:
        print("no candidate matches")
        return 1
    for place, candidate in enumerate(ranked, 1):
        print(f"{place}. {candidate.kind} {candidate.name}  score {candidate.score:g}")
        for reason in candidate.reasons:
            print(f"     {reason}")
    return 0


async def swarm(args: argparse.Namespace, running: Running) -> int:
    """`a2a-hub swarm TEXT --strategy S`: several partners at once, each branch printed as it
    ends, then the strategy's answer."""
    settings = command_settings(args)
    registry = registry_for(settings, args.agents)
    spec = _swarm_spec(args)
    running.what = "the swarm"

    async def show(branch: Branch) -> None:
        if not args.json:
            outcome = branch.answer if branch.ok else branch.error
            label = state_label(branch.state)
            print(f"[{branch.agent}] {label}" + (f": {outcome}" if outcome else ""))

    async with Partners(registry) as partners:
        chosen = await choose_partners(
            partners,
            text=args.text,
            agents=spec.agents,
            tags=spec.tags,
            skill=spec.skill,
            limit=spec.limit,
        )
        if not chosen:
            print("a2a-hub: no partner agent matches", file=sys.stderr)
            return 1
        try:
            result = await run_swarm(
                partners,
                args.text,
                spec.model_copy(update={"agents": tuple(chosen)}),
                judge=_judge(partners, spec.judge) if spec.judge else None,
                on_branch=show,
                limits=settings.swarm,
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        except InvalidParamsError as exc:
            raise UsageError(exc.message) from None
    if args.json:
        print(json.dumps(camel_keys(result.to_dict()), indent=2))
    else:
        verdict = "answer" if result.ok else "no answer"
        print(f"{result.strategy}: {verdict} ({result.reason})")
        if result.answer is not None:
            print(result.answer)
    return 0 if result.ok else 1


_SWARM_FLAGS = {"agents": "agent", "tags": "tag"}
"""`SwarmSpec` fields whose `swarm` flag is named otherwise (a repeated `--agent`, since
`--agents` names agents.yaml); every other field has a flag of its own name."""


def _swarm_spec(args: argparse.Namespace) -> SwarmSpec:
    """The swarm the command's flags describe (the parser has checked their values)."""
    flags = {name: getattr(args, _SWARM_FLAGS.get(name, name)) for name in SwarmSpec.model_fields}
    given = {name: value for name, value in flags.items() if value is not None}
    if args.items is not None:
        given["items"] = json_option("--items", args.items)
        if not isinstance(given["items"], list):
            raise UsageError("--items must be a JSON list")
    try:
        return SwarmSpec.parse(given)
    except InvalidParamsError as exc:
        raise UsageError(exc.message) from None


def _judge(partners: Partners, name: str) -> RemoteAgentTool:
    """The best_of judge, named as the swarm skill's `judge` metadata names it (the tool
    `a2a_<partner>`) or by the partner's name alone."""
    bare = name.removeprefix("a2a_")
    if bare != name and bare in list(partners):
        return partners[bare]
    return partners[name]


def _list(registry: Registry, *, as_json: bool) -> None:
    entries = registry.all()
    if as_json:
        print(json.dumps([_entry_json(entry) for entry in entries], indent=2))
        return
    if not entries:
        where = registry.source or "agents.yaml"
        print(f"no partner agents in {where}")
        return
    for entry in entries:
        state = "" if entry.enabled else "  (disabled)"
        print(f"{entry.name}{state}\n  {shown_url(entry.url) or '(inline card)'}")
        details = [f"tags: {', '.join(entry.tags) or '-'}", f"weight: {entry.weight:g}"]
        if entry.protocol.version != "auto" or entry.protocol.binding != "auto":
            details.append(f"protocol: {entry.protocol.version} {entry.protocol.binding}")
        details.append(f"auth: {_auth_kind(entry)}")
        print("  " + "; ".join(details))


def _entry_json(entry: AgentEntry) -> dict[str, Any]:
    return {
        "name": entry.name,
        "url": entry.url,
        "cardUrl": entry.card_url,
        "enabled": entry.enabled,
        "tags": list(entry.tags),
        "weight": entry.weight,
        "protocol": {"version": entry.protocol.version, "binding": entry.protocol.binding},
        "auth": _auth_kind(entry),
    }


def _auth_kind(entry: AgentEntry) -> str:
    """Which kind of credential is configured, never its value."""
    auth = entry.auth
    kinds = []
    if auth.bearer is not None:
        kinds.append("bearer")
    if auth.api_key is not None:
        kinds.append(f"api key in {auth.header}")
    if auth.oauth2 is not None:
        kinds.append(f"oauth2 client credentials as '{auth.oauth2.client_id}'")
    if auth.headers:
        kinds.append(f"headers {', '.join(sorted(auth.headers))}")
    on_behalf = entry.on_behalf
    if on_behalf is not None:
        kinds.append(
            "on behalf: token exchange"
            if on_behalf.token_exchange is not None
            else "on behalf: the caller's own token"
        )
    return ", ".join(kinds) or "none"


def _show(entry: AgentEntry, card: AgentCard) -> None:
    print(f"{entry.name}: {card.name} {card.version}")
    print(f"  {card.description}")
    for interface in card.supported_interfaces:
        print(
            f"  interface: {interface.protocol_binding} {interface.protocol_version} "
            f"{shown_url(interface.url)}"
        )
    streaming = "yes" if card.capabilities.streaming else "no"
    print(f"  streaming: {streaming}")
    for skill in card.skills:
        tags = f" [{', '.join(skill.tags)}]" if skill.tags else ""
        print(f"  skill {skill.id}{tags}: {skill.description}")


async def _check(partners: Partners, names: list[str], *, as_json: bool) -> int:
    chosen = names or list(partners)
    for name in chosen:
        partners.entry(name)  # an unknown name is an error before any request
    results: dict[str, PartnerHealth] = {}

    async def one(name: str) -> None:
        results[name] = await partners.check(name)

    async with anyio.create_task_group() as group:
        for name in chosen:
            group.start_soon(one, name)
    ordered = [results[name] for name in chosen]
    if as_json:
        print(json.dumps([_health_json(health) for health in ordered], indent=2))
    else:
        if not ordered:
            print("no partner agents to check")
        width = max((len(health.name) for health in ordered), default=0)
        for health in ordered:
            print(_health_line(health, width))
    return 0 if all(health.ok for health in ordered) else 1


def _health_line(health: PartnerHealth, width: int) -> str:
    """One partner's line, its name padded to `width` so that the columns line up."""
    status = "ok  " if health.ok else "FAIL"
    timing = f"{health.card_ms:.0f} ms" if health.card_ms is not None else "-"
    line = (
        f"{status} {health.name:<{width}}  card {timing:>7}  breaker {health.breaker.state.value}"
    )
    if health.interface:
        line += f"  via {health.interface}"
    if health.error:
        line += f"\n     {health.error}"
    return line


def _health_json(health: PartnerHealth) -> dict[str, Any]:
    return {
        "name": health.name,
        "ok": health.ok,
        "cardMs": health.card_ms,
        "interface": health.interface,
        "breaker": {
            "state": health.breaker.state.value,
            "consecutiveFailures": health.breaker.consecutive_failures,
            "retryIn": health.breaker.retry_in,
        },
        "error": health.error,
    }


def _result(result: ToolResult) -> str:
    lines = [f"{result.agent}: {state_label(result.state)}"]
    if result.task_id:
        lines[0] += f"  (task {result.task_id}, context {result.context_id})"
    for artifact in result.artifacts:
        if artifact.text:
            lines.append(f"  {artifact.name or 'artifact'}: {artifact.text}")
        for value in artifact.data:
            lines.append(f"  {artifact.name or 'artifact'} data: {json.dumps(value)}")
    if result.message and (result.needs_input or not result.artifacts):
        lines.append(f"  {result.message}")
    if result.needs_input:
        lines.append(answer_hint(f"a2a-hub call {result.agent}", result.task_id))
    return "\n".join(lines)
