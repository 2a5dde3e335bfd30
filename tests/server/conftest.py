from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from asgi_lifespan import LifespanManager

from hub.app import create_app
from hub.config import CardSettings, LimitSettings, Settings
from hub.server.gate import StreamSlot
from hub.skills import Skill, SkillContext, skill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore


@skill(id="interview", description="asks for a name, then greets")
async def interview(ctx: SkillContext) -> str:
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}!"


def hub_skills() -> dict[str, Skill]:
    return {item.skill_id: item for item in (echo, interview)}


def hub_settings(**limits: object) -> Settings:
    # No request rate limit: these tests send hundreds of requests a second from one address
    # (tests/server/test_limits.py covers the limit).
    return Settings(
        limits=LimitSettings.model_validate({"max_body": 4096, "requests_per_second": 0, **limits})
    )


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(hub_settings(), store=MemoryTaskStore(), skills=hub_skills())
    async with LifespanManager(app):
        # Not manager.app: asgi-lifespan hands every request the same `state` dict, where
        # Litestar caches parsed headers, so requests would see each other's headers.
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
            yield http


@pytest.fixture
async def push_off_client() -> AsyncIterator[httpx.AsyncClient]:
    """Like `client`, on a hub whose card switches push notifications off."""
    settings = hub_settings().model_copy(update={"card": CardSettings(push_notifications=False)})
    app = create_app(settings, store=MemoryTaskStore(), skills=hub_skills())
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
            yield http


class SlotReleases:
    """Tells a test when the server has given a stream slot back (the real release runs)."""

    def __init__(self) -> None:
        self._seen = anyio.Event()

    def seen(self) -> None:
        self._seen.set()

    async def next(self) -> None:
        """Wait for a release since the last one waited for."""
        await self._seen.wait()
        self._seen = anyio.Event()


@pytest.fixture
def slot_releases(monkeypatch: pytest.MonkeyPatch) -> SlotReleases:
    releases = SlotReleases()
    release = StreamSlot.release

    def release_and_tell(slot: StreamSlot) -> None:
        release(slot)
        releases.seen()

    monkeypatch.setattr(StreamSlot, "release", release_and_tell)
    return releases
