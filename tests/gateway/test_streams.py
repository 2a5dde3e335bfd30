"""Partner streams through the gateway, over real sockets: the caller leaving closes the
partner's stream (and gives back the caller's stream slot) without cancelling the task;
idle streams get keep-alives; 0.3 callers get 0.3 events from a 1.0 partner."""

from __future__ import annotations

import gc
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from hub.protocol import StreamResponse, Task, TaskState, TaskStatus
from hub.server.gateway.stream import PartnerStreams
from tests.client.partners import WAIT

from .conftest import V1, Partner, entries, serve_hub

pytestmark = pytest.mark.anyio


def message(text: str) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@asynccontextmanager
async def open_stream(
    http: httpx.AsyncClient, hub: str, binding: str, text: str
) -> AsyncIterator[httpx.Response]:
    """SendStreamingMessage to partner "one" through the gateway, over `binding`."""
    if binding == "jsonrpc":
        request = http.stream(
            "POST",
            f"{hub}/agents/one",
            json=rpc("SendStreamingMessage", {"message": message(text)}),
            headers=V1,
        )
    else:
        request = http.stream(
            "POST", f"{hub}/agents/one/message:stream", json={"message": message(text)}, headers=V1
        )
    async with request as response:
        yield response


def event_of(line: str, binding: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(line.removeprefix("data: "))
    return document["result"] if binding == "jsonrpc" else document


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_caller_that_leaves_closes_the_partner_stream_and_frees_its_slot(
    partners: dict[str, Partner], binding: str
) -> None:
    recorder = partners["one"].recorder
    async with (
        serve_hub(entries(partners), limits={"max_streams_per_caller": 1}) as hub,
        httpx.AsyncClient(timeout=10) as http,
    ):
        with anyio.fail_after(10):
            async with open_stream(http, hub, binding, WAIT) as response:
                lines = response.aiter_lines()
                events = []
                async for line in lines:
                    if line.startswith("data: "):
                        events.append(event_of(line, binding))
                    if len(events) == 2:
                        break
                assert recorder.open_streams == 1
                # One stream per caller here: a second one is refused while this one is open.
                second = await http.post(
                    f"{hub}/agents/one",
                    json=rpc("SendStreamingMessage", {"message": message(WAIT)}),
                    headers=V1,
                )
            # The caller has gone: the hub must close its own stream to the partner.
            await recorder.stream_closed.wait()
        assert recorder.open_streams == 0
        task_id = events[0]["task"]["id"]
        assert events[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
        assert second.json()["error"]["code"] == -32602
        assert second.json()["error"]["data"][0]["reason"] == "LIMIT_EXCEEDED"

        # Leaving did not cancel the partner's task, and the slot is free again.
        got = await http.post(f"{hub}/agents/one", json=rpc("GetTask", {"id": task_id}), headers=V1)
        assert got.json()["result"]["status"]["state"] == "TASK_STATE_WORKING"
        with anyio.fail_after(10):
            async with http.stream(
                "POST",
                f"{hub}/agents/one",
                json=rpc("SubscribeToTask", {"id": task_id}),
                headers=V1,
            ) as again:
                canceled = await http.post(
                    f"{hub}/agents/one", json=rpc("CancelTask", {"id": task_id}), headers=V1
                )
                rest = [
                    json.loads(line[len("data: ") :])["result"]
                    async for line in again.aiter_lines()
                    if line.startswith("data: ")
                ]
    assert canceled.json()["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert rest[0]["task"]["id"] == task_id
    assert rest[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"


async def test_an_idle_partner_stream_gets_keepalives(partners: dict[str, Partner]) -> None:
    lines: list[str] = []
    async with (
        serve_hub(entries(partners), keepalive=0.05) as hub,
        httpx.AsyncClient(timeout=10) as http,
    ):
        with anyio.fail_after(10):
            async with open_stream(http, hub, "jsonrpc", WAIT) as response:
                async for line in response.aiter_lines():
                    lines.append(line)
                    if sum(1 for item in lines if item.startswith(":")) == 2:
                        task_id = event_of(lines[0], "jsonrpc")["task"]["id"]
                        await http.post(
                            f"{hub}/agents/one", json=rpc("CancelTask", {"id": task_id}), headers=V1
                        )
    events = [event_of(line, "jsonrpc") for line in lines if line.startswith("data: ")]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"


async def test_a_0_3_caller_streams_from_a_1_0_partner_in_0_3_events(hub_url: str) -> None:
    send = {
        "message": {
            "kind": "message",
            "messageId": uuid.uuid4().hex,
            "role": "user",
            "parts": [{"kind": "text", "text": "hello"}],
        }
    }
    async with httpx.AsyncClient(timeout=10) as http:
        with anyio.fail_after(10):
            async with http.stream(
                "POST", f"{hub_url}/agents/one", json=rpc("message/stream", send)
            ) as response:
                events = [
                    json.loads(line[len("data: ") :])["result"]
                    async for line in response.aiter_lines()
                    if line.startswith("data: ")
                ]
    task = events[0]
    assert [(event["kind"], event.get("final")) for event in events] == [
        ("task", None),
        ("artifact-update", None),
        ("status-update", True),
    ]
    assert task["status"]["state"] == "submitted"
    assert events[1] == {
        "kind": "artifact-update",
        "taskId": task["id"],
        "contextId": task["contextId"],
        "artifact": {
            "artifactId": events[1]["artifact"]["artifactId"],
            "name": "echo",
            "parts": [{"kind": "text", "text": "hello"}],
        },
        "append": False,
        "lastChunk": True,
    }
    assert events[2]["status"]["state"] == "completed"


async def test_a_caller_gone_before_the_first_event_still_closes_the_partner_stream(
    partners: dict[str, Partner],
) -> None:
    recorder = partners["one"].recorder
    body = json.dumps(rpc("SendStreamingMessage", {"message": message(WAIT)})).encode()
    async with serve_hub(entries(partners)) as hub:
        host, port = hub.removeprefix("http://").split(":")
        request = (
            f"POST /agents/one HTTP/1.1\r\nHost: {host}\r\nA2A-Version: 1.0\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        with anyio.fail_after(10):
            # The request is sent and the connection closed before any answer is read.
            async with await anyio.connect_tcp(host, int(port)) as connection:
                await connection.send(request)
            await recorder.stream_opened.wait()
            await recorder.stream_closed.wait()
    assert recorder.open_streams == 0


async def test_a_partner_stream_dropped_unread_stops_its_pump() -> None:
    # A response dropped before its body began never closes its stream: the pump (and the
    # partner connection it holds) must still stop, when the stream is garbage.
    closed = anyio.Event()

    @asynccontextmanager
    async def partner_events() -> AsyncIterator[AsyncIterator[StreamResponse]]:
        async def events() -> AsyncIterator[StreamResponse]:
            working = TaskStatus(state=TaskState.WORKING)
            yield StreamResponse(task=Task(id="t1", context_id="c1", status=working))
            await anyio.sleep_forever()

        try:
            yield events()
        finally:
            closed.set()

    async with PartnerStreams() as streams:
        stream = await streams.open(partner_events, agent_name="fake")
        del stream
        gc.collect()
        with anyio.fail_after(5):
            await closed.wait()
