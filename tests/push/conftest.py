"""Real hubs and a real webhook receiver, both on loopback sockets, for the push tests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.config import AuthSettings, PushSettings, ServerSettings, Settings
from hub.push import PushNotifier, Resolver
from hub.server.service import A2AService
from hub.skills import Skill, SkillContext, skill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore, TaskStore
from hub.testing import serve_on_loopback

from .receiver import WebhookReceiver

V1 = {"A2A-Version": "1.0"}

FAST = PushSettings(
    allow_hosts=("127.0.0.1",), throttle=0.3, retry_delays=(0.05, 0.1, 0.2), timeout=2.0
)
"""Loopback allowed, and throttle and retries short enough for tests."""


@skill(id="interview", description="asks for a name, then greets")
async def interview(ctx: SkillContext) -> str:
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}!"


class Pacer:
    """A skill whose progress steps a test releases: each text sent is one `progress`
    step, and `finish()` ends the task with an artifact."""

    def __init__(self) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[str](100)

        @skill(id="paced", description="reports the steps the test releases")
        async def paced(ctx: SkillContext) -> str:
            async for step in self._receive:
                if step == "":
                    break
                await ctx.progress(step)
            return "all steps done"

        self.skill = paced

    def step(self, *texts: str) -> None:
        for text in texts:
            self._send.send_nowait(text)

    def finish(self) -> None:
        self._send.send_nowait("")


@dataclass
class Hub:
    """A hub served on loopback, and an HTTP client for it."""

    url: str
    app: Litestar
    http: httpx.AsyncClient

    @property
    def service(self) -> A2AService:
        service: A2AService = self.app.state.hub.service
        return service

    @property
    def push(self) -> PushNotifier:
        assert self.service.push is not None
        return self.service.push

    async def call(
        self, method: str, params: Any, *, v03: bool = False, headers: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """A JSON-RPC call; returns the whole response document."""
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        sent = {**({} if v03 else V1), **(headers or {})}
        response = await self.http.post(self.url, json=body, headers=sent)
        assert response.status_code == 200
        document: dict[str, Any] = response.json()
        return document

    async def result(self, method: str, params: Any, *, v03: bool = False) -> Any:
        document = await self.call(method, params, v03=v03)
        assert "result" in document, document
        return document["result"]

    async def send(self, text: str, *, skill: str | None = None, **configuration: Any) -> Any:
        """SendMessage; returns the task."""
        params: dict[str, Any] = {"message": user_message(text)}
        if skill:
            params["metadata"] = {"skill": skill}
        if configuration:
            params["configuration"] = configuration
        return (await self.result("SendMessage", params))["task"]

    async def parked_task(self) -> str:
        """A task waiting in input-required (the interview skill); returns its id."""
        task = await self.send("hi", skill="interview")
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        task_id: str = task["id"]
        return task_id

    async def add_config(self, task_id: str, url: str, **fields: Any) -> Any:
        params = {"taskId": task_id, "url": url, **fields}
        return await self.result("CreateTaskPushNotificationConfig", params)


def user_message(text: str, **fields: Any) -> dict[str, Any]:
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        **fields,
    }


@asynccontextmanager
async def running_hub(
    *,
    push: PushSettings = FAST,
    skills: Sequence[Skill] = (),
    store: TaskStore | None = None,
    resolver: Resolver | None = None,
    auth: AuthSettings | None = None,
) -> AsyncIterator[Hub]:
    """A hub with echo, interview and `skills`, served on a loopback socket."""
    served = {s.skill_id: s for s in (echo, interview, *skills)}
    built: list[Litestar] = []

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url), push=push, auth=auth or AuthSettings()
        )
        app = create_app(
            settings, store=store or MemoryTaskStore(), skills=served, push_resolver=resolver
        )
        built.append(app)
        return app

    async with (
        serve_on_loopback(build) as url,
        httpx.AsyncClient(timeout=10) as http,
    ):
        yield Hub(url=url, app=built[0], http=http)


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[WebhookReceiver, str]]:
    """A webhook receiver on a loopback socket, and its URL."""
    app = WebhookReceiver()
    async with serve_on_loopback(app) as url:
        try:
            yield app, url
        finally:
            app.hang.set()
