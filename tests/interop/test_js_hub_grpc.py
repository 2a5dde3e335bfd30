"""@a2a-js/sdk 1.3 and the hub over gRPC: the JS gRPC client against the hub's gRPC door (the
door found on the hub's card, read over HTTP), and the JS agent that serves only gRPC as a
partner the hub delegates to and the gateway forwards to."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import grpc
import httpx
import pytest

from hub.client import A2AClient, build_http_client, user_message
from hub.errors import RemoteRpcError, TaskNotFoundError
from hub.protocol import StreamResponse, Task, TaskState
from hub.registry import AgentEntry
from hub.testing import LoopbackHub, serve_hub
from tests.interop.js_sdk import JsAgent, JsError, js_client, js_grpc_agent, needs_js

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, needs_js]


def said(text: str, *, skill: str | None = None) -> dict[str, Any]:
    """A SendMessageRequest in the JSON form: one user text part, for `skill` when given."""
    request: dict[str, Any] = {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    }
    if skill is not None:
        request["metadata"] = {"skill": skill}
    return request


def states(events: list[dict[str, Any]]) -> list[str]:
    return [e["statusUpdate"]["status"]["state"] for e in events if "statusUpdate" in e]


def texts(task: Task) -> str:
    return "".join(part.text or "" for artifact in task.artifacts or [] for part in artifact.parts)


# The JS client against the hub's gRPC door.


async def test_js_client_finds_the_grpc_door_on_the_hubs_card_and_sends(
    grpc_hub: LoopbackHub,
) -> None:
    async with js_client(grpc_hub.url) as client:
        assert client.transport == "GrpcTransport"  # chosen from the card, beside JSON-RPC
        with anyio.fail_after(30):
            sent = await client.call("send", said("hello"))
            got = await client.call("get", {"id": sent["task"]["id"]})
    assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert sent["task"]["artifacts"][0]["parts"] == [{"text": "hello"}]
    assert got["status"]["state"] == "TASK_STATE_COMPLETED"
    assert got["artifacts"] == sent["task"]["artifacts"]
    async with build_http_client() as http:  # the same task, through the JSON-RPC door
        over_http = await A2AClient.from_url(grpc_hub.url, http=http)
        assert texts(await over_http.get_task(sent["task"]["id"])) == "hello"


async def test_js_client_streams_from_the_hubs_grpc_door(grpc_hub: LoopbackHub) -> None:
    async with js_client(grpc_hub.url) as client:
        with anyio.fail_after(30):
            events = [event async for event in client.stream("stream", said("streamed"))]
    assert "task" in events[0]
    chunks = [e["artifactUpdate"]["artifact"] for e in events if "artifactUpdate" in e]
    assert [part["text"] for chunk in chunks for part in chunk["parts"]] == ["streamed"]
    assert states(events)[-1] == "TASK_STATE_COMPLETED"


async def test_js_client_cancels_a_hub_task_mid_stream(grpc_hub: LoopbackHub) -> None:
    async with js_client(grpc_hub.url) as client:
        with anyio.fail_after(30):
            events = client.stream("stream", said("wait", skill="waits"))
            task_id = (await anext(events))["task"]["id"]
            working = await anext(events)
            assert working["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
            canceled = await client.call("cancel", {"id": task_id})
            rest = [event async for event in events]
            got = await client.call("get", {"id": task_id})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert states(rest)[-1:] == ["TASK_STATE_CANCELED"]
    assert got["status"]["state"] == "TASK_STATE_CANCELED"


async def test_js_client_reads_the_hubs_errors_from_grpc_status_and_error_info(
    grpc_hub: LoopbackHub,
) -> None:
    async with js_client(grpc_hub.url) as client:
        with anyio.fail_after(30):
            with pytest.raises(JsError) as missing:
                await client.call("get", {"id": "no-such-task"})
            done = await client.call("send", said("done"))
            with pytest.raises(JsError) as finished:
                await client.call("cancel", {"id": done["task"]["id"]})
    assert (missing.value.name, missing.value.reason) == ("TaskNotFoundError", "TASK_NOT_FOUND")
    assert missing.value.status == grpc.StatusCode.NOT_FOUND.value[0]
    assert (finished.value.name, finished.value.reason) == (
        "TaskNotCancelableError",
        "TASK_NOT_CANCELABLE",
    )
    assert finished.value.status == grpc.StatusCode.FAILED_PRECONDITION.value[0]


# The JS agent, serving only gRPC, as the hub's partner.


@asynccontextmanager
async def hub_with_js_partner() -> AsyncIterator[tuple[LoopbackHub, JsAgent, httpx.AsyncClient]]:
    """The JS agent, and a hub whose agents.yaml lists it as `js` by its inline card (this
    gRPC-only agent serves no card over HTTP). The listed card says `grpc://` for plaintext:
    the hub calls an inline card's bare `host:port` over TLS (docs/grpc.md)."""
    async with js_grpc_agent() as agent:
        interface = {**agent.card["supportedInterfaces"][0], "url": f"grpc://{agent.address}"}
        card = {**agent.card, "supportedInterfaces": [interface]}
        entry = AgentEntry.model_validate({"name": "js", "card": card})
        async with serve_hub(partners=[entry]) as hub, build_http_client() as http:
            yield hub, agent, http


async def test_hub_delegates_a_one_shot_message_to_the_js_grpc_agent() -> None:
    async with hub_with_js_partner() as (hub, _, http):
        client = await A2AClient.from_url(hub.url, http=http)
        with anyio.fail_after(30):
            task = await client.send(user_message("hello big world"), metadata={"agent": "js"})
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert texts(task) == "hello big world"


async def test_gateway_streams_the_js_grpc_agents_chunks_in_order() -> None:
    async with hub_with_js_partner() as (hub, _, http):
        client = await A2AClient.from_url(f"{hub.url}/agents/js", http=http)
        with anyio.fail_after(30):
            async with client.stream(user_message("one two three")) as stream:
                events: list[StreamResponse] = [event async for event in stream]
    chunks = [e.artifact_update for e in events if e.artifact_update is not None]
    assert [part.text for c in chunks for part in c.artifact.parts] == ["one ", "two ", "three"]
    assert [bool(c.append) for c in chunks] == [False, True, True]
    assert events[-1].status_update is not None
    assert events[-1].status_update.status.state is TaskState.COMPLETED


async def test_gateway_cancels_the_js_grpc_agents_task_and_carries_its_errors() -> None:
    async with hub_with_js_partner() as (hub, agent, http):
        client = await A2AClient.from_url(f"{hub.url}/agents/js", http=http)
        with anyio.fail_after(30):
            async with client.stream(user_message("wait for a cancel")) as stream:
                async for event in stream:
                    if event.task is not None:
                        task_id = event.task.id
                    if event.status_update is not None:
                        assert event.status_update.status.state is TaskState.WORKING
                        break
            canceled = await client.cancel(task_id)
            with pytest.raises(RemoteRpcError) as missing:
                await client.get_task("no-such-task")
            async with js_client(agent.address) as direct:
                at_partner = await direct.call("get", {"id": task_id})
    assert canceled.status.state is TaskState.CANCELED
    assert at_partner["status"]["state"] == "TASK_STATE_CANCELED"
    assert missing.value.code == TaskNotFoundError.code
