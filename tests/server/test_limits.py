"""Limits under abuse: body size, parts, part size, history length, live tasks and contexts,
open streams per caller and requests per second per caller, each a setting with a clear
error on both bindings."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from asgi_lifespan import LifespanManager
from litestar import Litestar

from hub.app import create_app
from hub.config import AuthSettings, LimitSettings, Settings
from hub.server.auth import Caller
from hub.server.gate import Gate
from hub.server.ratelimit import RateLimiter
from hub.store import MemoryTaskStore
from hub.testing import serve_hub
from tests.server.auth_hub import (
    ALICE,
    BOB,
    Credential,
    auth_settings,
    auth_skills,
    message,
    serve_in_process,
)
from tests.server.conftest import SlotReleases

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}
SLOW = 0.001
"""A request rate so low that no token comes back while a test runs."""


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def reason_of(response: httpx.Response) -> tuple[int, str]:
    """(HTTP status, reason) of a REST error, or (JSON-RPC code, reason) of a JSON-RPC one."""
    document = response.json()
    if "jsonrpc" in document:
        return document["error"]["code"], document["error"]["data"][0]["reason"]
    return response.status_code, document["error"]["details"][0]["reason"]


async def task_count(http: httpx.AsyncClient, who: Credential = ALICE) -> int:
    listed = await http.get("/tasks", headers={**V1, **who.headers})
    return int(listed.json()["totalSize"])


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with serve_in_process(auth_settings(max_parts=3, max_part_bytes=1000)) as client:
        yield client


# -- what one request may carry ---------------------------------------------------------------


async def test_a_body_over_max_body_is_refused_on_both_bindings(http: httpx.AsyncClient) -> None:
    big = {"message": message("x" * 5000)}
    rest = await http.post("/message:send", json=big, headers={**V1, **ALICE.headers})
    assert reason_of(rest) == (413, "PAYLOAD_TOO_LARGE")
    assert "limits.max_body" in rest.json()["error"]["message"]
    jsonrpc = await http.post("/", json=rpc("SendMessage", big), headers={**V1, **ALICE.headers})
    assert reason_of(jsonrpc) == (-32600, "PAYLOAD_TOO_LARGE")
    assert await task_count(http) == 0


async def test_too_many_parts_are_refused_on_both_bindings(http: httpx.AsyncClient) -> None:
    body = {"message": {**message("a"), "parts": [{"text": "a"}] * 4}}
    rest = await http.post("/message:send", json=body, headers={**V1, **ALICE.headers})
    assert reason_of(rest) == (429, "LIMIT_EXCEEDED")
    assert "limits.max_parts" in rest.json()["error"]["message"]
    jsonrpc = await http.post("/", json=rpc("SendMessage", body), headers={**V1, **ALICE.headers})
    assert reason_of(jsonrpc) == (-32602, "LIMIT_EXCEEDED")
    assert await task_count(http) == 0


@pytest.mark.parametrize(
    "part",
    [
        {"text": "é" * 501},  # 1002 bytes in UTF-8
        {"raw": base64.b64encode(b"\0" * 1001).decode(), "mediaType": "application/octet-stream"},
        {"data": {"values": list(range(300))}},
    ],
    ids=["text", "raw", "data"],
)
async def test_a_part_over_max_part_bytes_is_refused_naming_the_part(
    http: httpx.AsyncClient, part: dict[str, Any]
) -> None:
    body = {"message": {**message("a"), "parts": [{"text": "fine"}, part]}}
    rest = await http.post("/message:send", json=body, headers={**V1, **ALICE.headers})
    # Too large, not too many: sending it again later would not help.
    assert reason_of(rest) == (413, "PAYLOAD_TOO_LARGE")
    error = rest.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert "limits.max_part_bytes" in error["message"]
    assert error["details"][1]["fieldViolations"][0]["field"] == "message.parts[1]"
    jsonrpc = await http.post("/", json=rpc("SendMessage", body), headers={**V1, **ALICE.headers})
    assert reason_of(jsonrpc) == (-32602, "PAYLOAD_TOO_LARGE")
    assert jsonrpc.status_code == 200
    v03_part = {"kind": "text", "text": part["text"]} if "text" in part else None
    if v03_part is not None:  # the 0.3 door runs the same check
        v03 = {"message": {**message("a", v03=True), "parts": [v03_part]}}
        answer = await http.post("/", json=rpc("message/send", v03), headers=ALICE.headers)
        assert answer.json()["error"]["code"] == -32602
    assert await task_count(http) == 0


async def test_a_part_just_within_max_part_bytes_is_accepted(http: httpx.AsyncClient) -> None:
    body = {"message": {**message("a"), "parts": [{"text": "é" * 500}]}}
    sent = await http.post("/message:send", json=body, headers={**V1, **ALICE.headers})
    assert sent.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


# -- what a task may hold, and how many there may be ------------------------------------------


async def test_a_task_whose_history_is_full_takes_no_more_messages() -> None:
    async with serve_in_process(auth_settings(max_history=2)) as http:
        start = {"message": message("hi"), "metadata": {"skill": "interview"}}
        parked = (
            await http.post("/message:send", json=start, headers={**V1, **ALICE.headers})
        ).json()["task"]
        assert len(parked["history"]) == 2  # the message and the question
        answer = {"message": message("Ada", task_id=parked["id"])}
        refused = await http.post("/message:send", json=answer, headers={**V1, **ALICE.headers})
        assert reason_of(refused) == (429, "LIMIT_EXCEEDED")
        assert "limits.max_history" in refused.json()["error"]["message"]
        after = await http.get(f"/tasks/{parked['id']}", headers={**V1, **ALICE.headers})
        assert after.json() == parked


async def test_live_tasks_and_contexts_are_capped() -> None:
    async with serve_in_process(auth_settings(max_tasks=1, max_contexts=1)) as http:
        start = {"message": message("hi"), "metadata": {"skill": "interview"}}
        first = await http.post("/message:send", json=start, headers={**V1, **ALICE.headers})
        assert first.json()["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        second = await http.post("/message:send", json=start, headers={**V1, **BOB.headers})
        assert reason_of(second) == (429, "LIMIT_EXCEEDED")
        assert "limits.max_" in second.json()["error"]["message"]


# -- requests per second ---------------------------------------------------------------------


async def test_requests_over_the_rate_get_429_with_retry_after_on_both_bindings() -> None:
    async with serve_in_process(auth_settings(requests_per_second=SLOW, burst=2)) as http:
        for _ in range(2):
            assert (await http.get("/tasks", headers={**V1, **ALICE.headers})).status_code == 200
        rest = await http.get("/tasks", headers={**V1, **ALICE.headers})
        jsonrpc = await http.post("/", json=rpc("ListTasks", {}), headers={**V1, **ALICE.headers})
        other = await http.get("/tasks", headers={**V1, **BOB.headers})
    assert rest.status_code == 429
    assert int(rest.headers["retry-after"]) >= 1
    assert reason_of(rest) == (429, "RATE_LIMITED")
    assert rest.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert "limits.requests_per_second" in rest.json()["error"]["message"]
    assert jsonrpc.status_code == 429
    assert int(jsonrpc.headers["retry-after"]) >= 1
    assert reason_of(jsonrpc) == (-32602, "RATE_LIMITED")
    assert jsonrpc.json()["id"] is None
    assert other.status_code == 200  # each credential has its own bucket


def address_client(app: Litestar, address: str) -> httpx.AsyncClient:
    """A client of `app` that calls from `address`."""
    transport = httpx.ASGITransport(app=app, client=(address, 4000))
    return httpx.AsyncClient(transport=transport, base_url="http://hub")


async def test_with_per_address_on_callers_without_auth_are_limited_by_their_address() -> None:
    limits = LimitSettings(requests_per_second=SLOW, burst=1, per_address=True)
    app = create_app(Settings(limits=limits), store=MemoryTaskStore(), skills=auth_skills())
    async with (
        LifespanManager(app),
        address_client(app, "10.0.0.1") as one,
        address_client(app, "10.0.0.2") as two,
    ):
        assert (await one.get("/tasks", headers=V1)).status_code == 200
        refused = await one.get("/tasks", headers=V1)
        assert (await two.get("/tasks", headers=V1)).status_code == 200
    assert reason_of(refused) == (429, "RATE_LIMITED")
    assert int(refused.headers["retry-after"]) >= 1
    assert "address 10.0.0.1" in refused.json()["error"]["message"]


async def test_by_default_an_anonymous_address_is_not_held_to_the_rate() -> None:
    clock = 0.0  # frozen: no token comes back, whatever the speed of the machine
    gate = Gate(auth=AuthSettings(), limits=LimitSettings(), skills=[], clock=lambda: clock)
    callers = {await gate.admit({}, address="10.0.0.1") for _ in range(10_000)}
    assert callers == {Caller(address="10.0.0.1")}


async def test_by_default_a_lone_client_without_auth_is_not_throttled() -> None:
    """One address may be a proxy, a load balancer or another hub: with the default settings
    it may send far more than the default rate and burst (100/s, 200) in a second."""
    defaults = Settings().limits
    requests = 3 * (defaults.burst + int(defaults.requests_per_second))
    app = create_app(Settings(), store=MemoryTaskStore(), skills=auth_skills())
    async with LifespanManager(app), address_client(app, "10.0.0.1") as lone:
        statuses = {(await lone.get("/tasks", headers=V1)).status_code for _ in range(requests)}
        sent = await lone.post("/", json=rpc("ListTasks", {}), headers=V1)
    assert statuses == {200}
    assert sent.status_code == 200
    assert "result" in sent.json()


async def test_failed_credentials_spend_the_address_budget() -> None:
    async with serve_in_process(auth_settings(requests_per_second=SLOW, burst=2)) as http:
        wrong = {**V1, "X-API-Key": "guess-0123456789abcdef"}
        statuses = [(await http.get("/tasks", headers=wrong)).status_code for _ in range(3)]
        assert statuses == [401, 401, 429]
        assert (await http.get("/tasks", headers={**V1, **ALICE.headers})).status_code == 200


async def test_a_rate_of_zero_lets_every_request_through() -> None:
    async with serve_in_process(auth_settings(requests_per_second=0, burst=1)) as http:
        for _ in range(50):
            assert (await http.get("/tasks", headers={**V1, **ALICE.headers})).status_code == 200


def test_a_bucket_refills_at_the_rate_up_to_the_burst() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=2.0, burst=3, clock=lambda: now[0])
    assert [limiter.take("a") for _ in range(3)] == [None, None, None]
    assert limiter.take("a") == pytest.approx(0.5)
    now[0] += 0.5
    assert limiter.take("a") is None
    assert limiter.take("a") == pytest.approx(0.5)
    now[0] += 100.0  # refills to the burst, not beyond
    assert [limiter.take("a") for _ in range(4)][-1] == pytest.approx(0.5)
    assert limiter.take("b") is None


def test_idle_buckets_are_forgotten_so_the_table_stays_bounded() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=1.0, burst=1, clock=lambda: now[0])
    for index in range(10_000):
        limiter.take(f"address {index}")
    now[0] += 5.0
    limiter.take("one more")
    assert len(limiter._buckets) == 1


# -- open streams per caller ------------------------------------------------------------------


@dataclass
class OpenStream:
    """A streaming response and its line iterator (kept: one dropped half-read would close
    the response when it is collected)."""

    response: httpx.Response
    lines: AsyncIterator[str]

    @property
    def status(self) -> int:
        return self.response.status_code

    async def first_event(self) -> Any:
        async for line in self.lines:
            if line.startswith("data: "):
                return json.loads(line[6:])
        raise AssertionError("the stream ended without an event")

    async def refusal(self) -> tuple[int, str]:
        await self.response.aread()
        return reason_of(self.response)

    async def aclose(self) -> None:
        await self.response.aclose()


async def open_stream(http: httpx.AsyncClient, who: Credential, *, rest: bool) -> OpenStream:
    """Start, on a stream, a task that works until canceled."""
    body = {"message": message("go"), "metadata": {"skill": "waits"}}
    if rest:
        request = http.build_request(
            "POST", "/message:stream", json=body, headers={**V1, **who.headers}
        )
    else:
        request = http.build_request(
            "POST", "/", json=rpc("SendStreamingMessage", body), headers={**V1, **who.headers}
        )
    response = await http.send(request, stream=True)
    return OpenStream(response, response.aiter_lines())


@pytest.fixture
async def loopback_hub() -> AsyncIterator[tuple[str, Litestar]]:
    settings = auth_settings(max_streams_per_caller=2)
    async with serve_hub(skills=list(auth_skills().values()), settings=settings) as running:
        yield running.url, running.app


async def test_open_streams_are_capped_per_caller_and_given_back_when_closed(
    loopback_hub: tuple[str, Litestar], slot_releases: SlotReleases
) -> None:
    url, app = loopback_hub
    gate = app.state.hub.gate
    async with httpx.AsyncClient(base_url=url, timeout=5) as http:
        with anyio.fail_after(10):
            opened = [await open_stream(http, ALICE, rest=rest) for rest in (True, False)]
            for stream in opened:
                assert stream.status == 200
                await stream.first_event()
            refused = await open_stream(http, ALICE, rest=True)
            assert await refused.refusal() == (429, "LIMIT_EXCEEDED")
            assert "limits.max_streams_per_caller" in refused.response.json()["error"]["message"]
            refused_rpc = await open_stream(http, ALICE, rest=False)
            assert await refused_rpc.refusal() == (-32602, "LIMIT_EXCEEDED")
            assert await task_count(http) == 2  # the refused streams started nothing

            bobs = await open_stream(http, BOB, rest=True)  # another caller has its own count
            assert bobs.status == 200
            await bobs.aclose()
            await slot_releases.next()  # the server saw Bob go

            await opened.pop().aclose()
            await slot_releases.next()
            alice = await gate.authenticator.identify({"x-api-key": ALICE.headers["X-API-Key"]})
            assert gate.open_streams(alice) == 1
            again = await open_stream(http, ALICE, rest=False)
            assert again.status == 200
            await again.first_event()
            await again.aclose()
            await opened[0].aclose()


async def test_a_refused_stream_request_gives_its_slot_back(http: httpx.AsyncClient) -> None:
    for _ in range(40):  # more than max_streams_per_caller (32)
        body = rpc("SubscribeToTask", {"id": "missing"})
        answer = await http.post("/", json=body, headers={**V1, **ALICE.headers})
        assert answer.json()["error"]["code"] == -32001
    body = {"message": message("hi")}
    stream = await http.post("/message:stream", json=body, headers={**V1, **ALICE.headers})
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert uuid.UUID(json.loads(stream.text.split("data: ")[1])["task"]["id"])
