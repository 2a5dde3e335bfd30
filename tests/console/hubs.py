"""Hubs for the console tests: local skills that stream, ask and wait, partners that answer
after a delay, one that is down and one whose card is hostile, tasks in memory."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from hub.client import BreakerConfig
from hub.config import AuthSettings, Settings, StoreSettings
from hub.protocol import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from hub.registry import AgentEntry
from hub.skills import LocalSkill, SkillContext, skill
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.swarm import swarm
from hub.testing import ScriptedAgent, answer, fail, serve_hub, serve_on_loopback
from tests.client.scripted import ScriptedAgent as RawAgent
from tests.client.scripted import respond

HOSTILE = (
    '<script>window.__pwned = 1; console.log("pwned")</script>'
    "<img src=x onerror=\"console.log('pwned')\">"
)
"""What a hostile partner puts in every string of its card."""


@dataclass
class Gates:
    """Events the test opens to let the `slow` skill go on, so a page is watching first."""

    release: anyio.Event = field(default_factory=anyio.Event)


def local_skills(gates: Gates) -> dict[str, LocalSkill]:
    @skill(id="slow", description="reports progress, then answers once the test lets it")
    async def slow(ctx: SkillContext) -> str:
        await ctx.progress("step 1 of 2")
        await gates.release.wait()
        await ctx.progress("step 2 of 2")
        return f"done: {ctx.text}"

    @skill(id="ask", description="asks the caller's name, then greets it")
    async def ask(ctx: SkillContext) -> str:
        answer = await ctx.ask("What is your name?")
        return f"hello {answer.text()}"

    return {"echo": echo, "slow": slow, "ask": ask, "swarm": swarm, "delegate": delegate}


def inline_partner(
    name: str, *, url: str = "http://127.0.0.1:9/", tags: tuple[str, ...] = ()
) -> AgentEntry:
    """A partner with an inline card (nothing is fetched) at `url`, whose one skill is
    `name`."""
    card = AgentCard(
        name=name.title(),
        description=f"the {name} partner",
        version="1.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id=name, name=name, description=f"does {name}", tags=list(tags))],
    )
    return AgentEntry(name=name, card=card, tags=tags)


def hostile_card(url: str) -> dict[str, Any]:
    """A card with the hostile payload in every string field a page could show."""
    return {
        "name": f"Evil {HOSTILE}",
        "description": f"desc {HOSTILE}",
        "version": f"v{HOSTILE}",
        "provider": {"organization": f"org {HOSTILE}", "url": f"https://example.com/{HOSTILE}"},
        "documentationUrl": f"javascript:alert(1)//{HOSTILE}",
        "iconUrl": f"javascript:alert(1)//{HOSTILE}",
        "supportedInterfaces": [
            {"url": f"{url}/{HOSTILE}", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": f"s{HOSTILE}",
                "name": f"skill {HOSTILE}",
                "description": f"does {HOSTILE}",
                "tags": [f"tag {HOSTILE}"],
                "examples": [f"example {HOSTILE}"],
            }
        ],
    }


def hostile_partner(url: str) -> RawAgent:
    """A partner that serves only its hostile card."""
    partner = RawAgent()
    partner.routes["GET /.well-known/agent-card.json"] = respond(
        200, json.dumps(hostile_card(url)).encode()
    )
    return partner


@dataclass
class ConsoleHub:
    url: str
    gates: Gates


@asynccontextmanager
async def console_hub(
    partners: dict[str, float | None],
    *,
    down_port: int | None = None,
    hostile: bool = False,
    auth: AuthSettings | None = None,
) -> AsyncIterator[ConsoleHub]:
    """A hub whose partners answer after the given delays (None: fail), plus a down partner
    and a hostile one when asked; breakers open after one failure."""
    gates = Gates()
    async with AsyncExitStack() as stack:
        entries = []
        for name, delay in partners.items():
            reply = fail() if delay is None else answer(f"answer from {name}", delay=delay)
            agent = ScriptedAgent(skill_id="work", reply=reply)
            url = await stack.enter_async_context(agent.serve())
            entries.append(AgentEntry(name=name, url=url))
        if down_port is not None:
            # Its card is known, but nothing answers at its address.
            entries.append(inline_partner("down", url=f"http://127.0.0.1:{down_port}/"))
        if hostile:
            url = await stack.enter_async_context(serve_on_loopback(hostile_partner))
            entries.append(AgentEntry(name="hostile", url=url))
        settings = Settings(
            store=StoreSettings(kind="memory"), default_skill="echo", auth=auth or AuthSettings()
        )
        hub = await stack.enter_async_context(
            serve_hub(
                skills=list(local_skills(gates).values()),
                partners=entries,
                settings=settings,
                breaker=BreakerConfig(failure_threshold=1),
            )
        )
        yield ConsoleHub(url=hub.url, gates=gates)


async def send(url: str, text: str, headers: dict[str, str] | None = None, **metadata: Any) -> Any:
    """SendMessage to the hub at `url` over HTTP, as any A2A client would; the task it
    answers with (the call returns once the task finished or waits for input)."""
    body = {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]},
        "metadata": metadata or None,
    }
    async with httpx.AsyncClient(timeout=30) as http:
        sent = await http.post(
            f"{url}/message:send", json=body, headers={"A2A-Version": "1.0", **(headers or {})}
        )
    assert sent.status_code == 200, sent.text
    return sent.json()["task"]
