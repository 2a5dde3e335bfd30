from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from litestar import Litestar

from hub.config import ServerSettings, Settings, StoreSettings
from hub.server import create_app
from hub.skills import Skill, SkillContext, skill
from hub.skills.echo import echo
from hub.store import SqliteTaskStore
from hub.testing import serve_on_loopback


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
    skills: dict[str, Skill] = {s.skill_id: s for s in (echo, interview, waits)}

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(path=str(tmp_path / "hub.db")),
        )
        return create_app(settings, store=SqliteTaskStore(tmp_path / "hub.db"), skills=skills)

    async with serve_on_loopback(build) as url:
        yield url
