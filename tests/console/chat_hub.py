"""A hub for the chat's tests: local skills that ask and then stream their answer, record
what they were sent, or wait for the test; a partner that streams and one that asks."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from hub.config import AuthSettings, CardSettings, LimitSettings, Settings, StoreSettings
from hub.registry import AgentEntry
from hub.skills import LocalSkill, SkillContext, skill
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.swarm import swarm
from hub.testing import LoopbackHub, ScriptedAgent, answer, ask, serve_hub, stream

GREETING = ("Hello, ", "{name}", "! Nice to ", "meet you.")
"""The chunks `interview` streams its answer in, appended to one artifact."""
PARTNER_CHUNKS = ("answer ", "from ", "pong")


@dataclass
class Received:
    """What the chat's skills were sent, for the tests to check."""

    contexts: list[str | None] = field(default_factory=list)
    metadata: list[dict[str, Any]] = field(default_factory=list)
    data: list[list[Any]] = field(default_factory=list)
    files: list[tuple[str | None, str | None, bytes]] = field(default_factory=list)
    release: anyio.Event = field(default_factory=anyio.Event)


def chat_skills(received: Received) -> list[LocalSkill]:
    @skill(id="interview", description="asks the caller's name, then streams a greeting")
    async def interview(ctx: SkillContext) -> AsyncIterator[str]:
        received.contexts.append(ctx.context_id)
        name = (await ctx.ask("What is your name?")).text()
        for chunk in GREETING:
            yield chunk.replace("{name}", name)

    @skill(id="inspect", description="records what it was sent")
    async def inspect(ctx: SkillContext) -> str:
        received.contexts.append(ctx.context_id)
        received.metadata.append(dict(ctx.metadata))
        received.data.append(ctx.data)
        for part in ctx.message.parts:
            if part.raw is not None:
                content = base64.b64decode(part.raw)
                received.files.append((part.filename, part.media_type, content))
        return f"got {len(ctx.message.parts)} parts"

    @skill(id="waits", description="answers once the test lets it")
    async def waits(ctx: SkillContext) -> str:
        await ctx.progress("waiting for the test")
        await received.release.wait()
        return "released"

    return [echo, interview, inspect, waits, delegate, swarm]


@dataclass
class ChatHub:
    url: str
    received: Received
    hub: LoopbackHub


@asynccontextmanager
async def chat_hub(
    *,
    auth: AuthSettings | None = None,
    limits: LimitSettings | None = None,
    card: CardSettings | None = None,
) -> AsyncIterator[ChatHub]:
    """A hub with the chat's skills and two partners: `pong` streams its answer in chunks,
    and answers "weather?" with a question; `quiet` does not stream (the gateway sends it
    SendMessage, and its answer is its whole task)."""
    received = Received()
    pong = ScriptedAgent(
        "pong",
        skill_id="pong",
        reply=stream(*PARTNER_CHUNKS),
        replies={"weather?": ask("Which city?", then=stream("Sunny ", "in ", "{text}"))},
    )
    quiet = ScriptedAgent(
        "quiet", skill_id="quiet", reply=answer("quietly: {text}"), streaming=False
    )
    async with AsyncExitStack() as stack:
        entries = [
            AgentEntry(name="pong", url=await stack.enter_async_context(pong.serve())),
            AgentEntry(name="quiet", url=await stack.enter_async_context(quiet.serve())),
        ]
        settings = Settings(
            store=StoreSettings(kind="memory"),
            default_skill="echo",
            auth=auth or AuthSettings(),
            limits=limits or LimitSettings(),
            card=card or CardSettings(),
        )
        hub = await stack.enter_async_context(
            serve_hub(skills=chat_skills(received), partners=entries, settings=settings)
        )
        yield ChatHub(url=hub.url, received=received, hub=hub)
