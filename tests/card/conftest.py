from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from asgi_lifespan import LifespanManager

from hub.app import create_app
from hub.config import Settings
from hub.store import MemoryTaskStore
from tests.server.auth_hub import auth_skills


@asynccontextmanager
async def card_hub(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The hub built from `settings` (the auth tests' skills), with an httpx client talking
    to it in process."""
    app = create_app(settings, store=MemoryTaskStore(), skills=auth_skills())
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
            yield http
