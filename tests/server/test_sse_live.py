"""SSE over a real socket: keep-alives on idle streams, disconnects that harm nothing."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.config import ServerSettings, Settings
from hub.server import create_app
from hub.skills import Skill, SkillContext, skill
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}


class Gate:
    def __init__(self) -> None:
        self.release = anyio.Event()


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
async def hub_url(gate: Gate) -> AsyncIterator[str]:
    @skill(id="gated", description="finishes when the test says so")
    async def gated(ctx: SkillContext) -> str:
        await ctx.progress("waiting")
        await gate.release.wait()
        return "released"

    skills: dict[str, Skill] = {"gated": gated}

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url, keepalive=0.05), default_skill="gated"
        )
        return create_app(settings, store=MemoryTaskStore(), skills=skills)

    async with serve_on_loopback(build) as url:
        yield url


def stream_body(request_id: int = 1) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "go"}]}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "SendStreamingMessage",
        "params": {"message": message},
    }


async def test_idle_stream_gets_keepalive_comments_then_the_rest(hub_url: str, gate: Gate) -> None:
    lines: list[str] = []
    async with httpx.AsyncClient(timeout=10) as http:
        with anyio.fail_after(10):
            async with http.stream("POST", hub_url, json=stream_body(), headers=V1) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                async for line in response.aiter_lines():
                    lines.append(line)
                    keepalives = [item for item in lines if item.startswith(":")]
                    if len(keepalives) >= 2 and not gate.release.is_set():
                        gate.release.set()
    events = [json.loads(line[len("data: ") :]) for line in lines if line.startswith("data: ")]
    assert "task" in events[0]["result"]
    assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_reader_that_disconnects_cancels_nothing_and_others_see_everything(
    hub_url: str, gate: Gate
) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        with anyio.fail_after(10):
            async with http.stream("POST", hub_url, json=stream_body(), headers=V1) as leaving:
                first = await anext(leaving.aiter_lines())
                task_id = json.loads(first[len("data: ") :])["result"]["task"]["id"]
            # The first reader is gone. A second one subscribes and sees the task finish.
            subscribe = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "SubscribeToTask",
                "params": {"id": task_id},
            }
            async with http.stream("POST", hub_url, json=subscribe, headers=V1) as staying:
                seen: list[dict[str, Any]] = []
                async for line in staying.aiter_lines():
                    if not line.startswith("data: "):
                        continue
                    seen.append(json.loads(line[len("data: ") :])["result"])
                    if len(seen) == 1:
                        assert seen[0]["task"]["status"]["state"] == "TASK_STATE_WORKING"
                        gate.release.set()
            got = await http.post(
                hub_url,
                json={"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task_id}},
                headers=V1,
            )
    assert seen[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert got.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
