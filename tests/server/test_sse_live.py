"""SSE over a real socket: keep-alives on idle streams, disconnects that harm nothing, a body
that ends with its closing update, and stream slots given back, on both bindings."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.config import CardSettings, LimitSettings, ServerSettings, Settings
from hub.skills import Skill, SkillContext, skill
from hub.testing import serve_hub
from tests.server.conftest import SlotReleases

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}


class Gate:
    def __init__(self) -> None:
        self.release = anyio.Event()


@pytest.fixture
def gate() -> Gate:
    return Gate()


def gated_skills(gate: Gate) -> dict[str, Skill]:
    @skill(id="gated", description="finishes when the test says so")
    async def gated(ctx: SkillContext) -> str:
        await ctx.progress("waiting")
        await gate.release.wait()
        return "released"

    return {"gated": gated}


@pytest.fixture
async def hub_url(gate: Gate) -> AsyncIterator[str]:
    settings = Settings(server=ServerSettings(keepalive=0.05), default_skill="gated")
    async with serve_hub(skills=list(gated_skills(gate).values()), settings=settings) as running:
        yield running.url


CITE = "https://example.com/extensions/cite/v1"


@pytest.fixture
async def quiet_hub(gate: Gate) -> AsyncIterator[tuple[str, Litestar]]:
    """A hub whose keep-alive never comes within a test, one stream per caller, and one
    extension to echo."""
    settings = Settings(
        server=ServerSettings(keepalive=60),
        limits=LimitSettings(max_streams_per_caller=1),
        card=CardSettings.model_validate({"extensions": [{"uri": CITE}]}),
        default_skill="gated",
    )
    async with serve_hub(skills=list(gated_skills(gate).values()), settings=settings) as running:
        yield running.url, running.app


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


BINDINGS = ["jsonrpc", "rest"]


def stream_request(http: httpx.AsyncClient, url: str, binding: str) -> httpx.Request:
    """A SendStreamingMessage on `binding`, listing the hub's extension."""
    headers = {**V1, "A2A-Extensions": CITE}
    if binding == "rest":
        body = {"message": stream_body()["params"]["message"]}
        return http.build_request("POST", f"{url}/message:stream", json=body, headers=headers)
    return http.build_request("POST", url, json=stream_body(), headers=headers)


def event_of(line: str, binding: str) -> Any:
    """The stream item a `data:` line carries (JSON-RPC wraps it in a result)."""
    event = json.loads(line[len("data: ") :])
    return event if binding == "rest" else event["result"]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_body_ends_with_the_closing_update_without_waiting_for_a_keepalive(
    quiet_hub: tuple[str, Litestar], gate: Gate, binding: str
) -> None:
    url, _ = quiet_hub
    lines: list[str] = []
    async with httpx.AsyncClient(timeout=10) as http:
        # The keep-alive is a minute away: only the closing update can end the body in time.
        with anyio.fail_after(5):
            response = await http.send(stream_request(http, url, binding), stream=True)
            async for line in response.aiter_lines():
                lines.append(line)
                if line.startswith("data: "):
                    gate.release.set()
            await response.aclose()
    events = [event_of(line, binding) for line in lines if line.startswith("data: ")]
    assert [line for line in lines if line and not line.startswith("data: ")] == []
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_stream_carries_the_sse_and_extension_headers(
    quiet_hub: tuple[str, Litestar], gate: Gate, binding: str
) -> None:
    url, _ = quiet_hub
    gate.release.set()
    async with httpx.AsyncClient(timeout=10) as http:
        with anyio.fail_after(5):
            response = await http.send(stream_request(http, url, binding))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["a2a-extensions"] == CITE
    assert "content-length" not in response.headers


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_client_that_leaves_mid_stream_gives_its_stream_slot_back(
    quiet_hub: tuple[str, Litestar], gate: Gate, binding: str, slot_releases: SlotReleases
) -> None:
    url, app = quiet_hub
    async with httpx.AsyncClient(timeout=10) as http:
        with anyio.fail_after(5):
            leaving = await http.send(stream_request(http, url, binding), stream=True)
            first = await anext(leaving.aiter_lines())
            assert "task" in event_of(first, binding)
            refused = await http.send(stream_request(http, url, binding))
            assert refused.status_code == (429 if binding == "rest" else 200)
            assert "max_streams_per_caller" in refused.text
            await leaving.aclose()
            await slot_releases.next()  # the server saw the client go, with the task still working
            assert app.state.hub.gate.streams_open() == 0
            staying = await http.send(stream_request(http, url, binding), stream=True)
            assert staying.status_code == 200
            first = await anext(staying.aiter_lines())
            assert "task" in event_of(first, binding)
            gate.release.set()
            await staying.aclose()
