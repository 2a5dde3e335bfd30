from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from hub.config import GrpcSettings, PushSettings, ServerSettings, Settings, StoreSettings
from hub.skills import SkillContext, skill
from hub.skills.echo import echo
from hub.store import SqliteTaskStore
from hub.testing import LoopbackHub, serve_hub


@skill(id="interview", description="asks for a name, then greets")
async def interview(ctx: SkillContext) -> str:
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}!"


@skill(id="waits", description="works until canceled")
async def waits(ctx: SkillContext) -> str:
    await ctx.progress("waiting")
    await anyio.sleep_forever()
    return "never"


@pytest.fixture
async def hub_url(tmp_path: Path) -> AsyncIterator[str]:
    """A hub on a real loopback socket with a SQLite store; its card names that socket."""
    settings = Settings(store=StoreSettings(path=str(tmp_path / "hub.db")))
    store = SqliteTaskStore(tmp_path / "hub.db")
    async with serve_hub(skills=[echo, interview, waits], settings=settings, store=store) as hub:
        yield hub.url


@pytest.fixture
async def grpc_hub(tmp_path: Path) -> AsyncIterator[LoopbackHub]:
    """The hub of `hub_url` with its gRPC door on (a free loopback port), webhooks allowed
    on loopback."""
    settings = Settings(
        server=ServerSettings(grpc=GrpcSettings(enabled=True)),
        store=StoreSettings(path=str(tmp_path / "hub.db")),
        push=PushSettings(allow_hosts=("127.0.0.1",), throttle=0.2, retry_delays=(0.05,)),
    )
    store = SqliteTaskStore(tmp_path / "hub.db")
    async with serve_hub(skills=[echo, interview, waits], settings=settings, store=store) as hub:
        yield hub
