"""A2AClient against real partners: the a2a-sdk 1.3 (1.0 JSON-RPC, 1.0 HTTP+JSON only, 0.3
JSON-RPC, 1.0 gRPC only) and the hub (over JSON-RPC, and over its gRPC door); every call
gives the same shape of result whatever the partner speaks."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest

from hub.client import A2AClient, BreakerState, user_message
from hub.errors import RemoteRpcError
from hub.protocol import SendMessageConfiguration, StreamResponse, Task, TaskState
from hub.protocol.v03.translate import is_final_v1
from hub.testing import serve_on_loopback
from tests.client.partners import WAIT, hub_partner, streamed_texts

pytestmark = pytest.mark.anyio

EXPECTED_INTERFACE = {
    "sdk-jsonrpc-1.0": ("JSONRPC", "1.0"),
    "sdk-rest-1.0": ("HTTP+JSON", "1.0"),
    "sdk-jsonrpc-0.3": ("JSONRPC", "0.3"),
    "sdk-grpc-1.0": ("GRPC", "1.0"),
    "hub-grpc": ("GRPC", "1.0"),
}


def _artifact_text(task: Task) -> str:
    return "".join(part.text or "" for artifact in task.artifacts or [] for part in artifact.parts)


async def test_client_picks_the_partners_interface(
    partner_url: str,
    binding: str | None,
    http: httpx.AsyncClient,
    request: pytest.FixtureRequest,
) -> None:
    client = await A2AClient.from_url(partner_url, http=http, binding=binding)

    name = request.node.callspec.params["partner_url"]
    expected = EXPECTED_INTERFACE.get(name, ("JSONRPC", "1.0"))
    assert (client.interface.protocol_binding, client.protocol_version) == expected


async def test_send_returns_a_completed_task_with_the_echo(
    partner_url: str, binding: str | None, http: httpx.AsyncClient
) -> None:
    client = await A2AClient.from_url(partner_url, http=http, binding=binding)

    with anyio.fail_after(10):
        result = await client.send(user_message("hello"))

    assert isinstance(result, Task)
    assert result.status.state is TaskState.COMPLETED
    assert _artifact_text(result) == "hello"
    fetched = await client.get_task(result.id)
    assert fetched.id == result.id
    assert fetched.status.state is TaskState.COMPLETED
    assert _artifact_text(fetched) == "hello"


async def test_stream_ends_with_the_completed_state_and_carries_the_echo(
    partner_url: str, binding: str | None, http: httpx.AsyncClient
) -> None:
    client = await A2AClient.from_url(partner_url, http=http, binding=binding)

    events: list[StreamResponse] = []
    with anyio.fail_after(10):
        async with client.stream(user_message("hello")) as stream:
            events = [event async for event in stream]

    assert is_final_v1(events[-1])
    assert events[-1].status_update is not None
    assert events[-1].status_update.status.state is TaskState.COMPLETED
    assert streamed_texts(events) == ["hello"]


async def test_subscribe_then_cancel_ends_the_subscription_canceled(
    partner_url: str, binding: str | None, http: httpx.AsyncClient
) -> None:
    client = await A2AClient.from_url(partner_url, http=http, binding=binding)
    configuration = SendMessageConfiguration(return_immediately=True)

    with anyio.fail_after(10):
        started = await client.send(user_message(WAIT), configuration=configuration)
        assert isinstance(started, Task)
        async with client.subscribe(started.id) as events:
            first = await anext(events)
            assert first.task is not None
            assert first.task.id == started.id
            canceled = await client.cancel(started.id)
            rest = [event async for event in events]

    assert canceled.status.state is TaskState.CANCELED
    assert rest[-1].status_update is not None
    assert rest[-1].status_update.status.state is TaskState.CANCELED
    assert (await client.get_task(started.id)).status.state is TaskState.CANCELED


@pytest.mark.parametrize(
    ("version", "binding"), [("1.0", "jsonrpc"), ("1.0", "http+json"), ("0.3", "jsonrpc")]
)
async def test_the_hub_answers_alike_through_each_override(
    version: str, binding: str, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    async with serve_on_loopback(hub_partner(tmp_path)) as url:
        client = await A2AClient.from_url(url, http=http, protocol_version=version, binding=binding)
        with anyio.fail_after(10):
            result = await client.send(user_message("hello"))
            async with client.stream(user_message("hello")) as stream:
                events = [event async for event in stream]

    assert client.protocol_version == version
    assert isinstance(result, Task)
    assert _artifact_text(result) == "hello"
    assert events[-1].status_update is not None
    assert events[-1].status_update.status.state is TaskState.COMPLETED


async def test_an_unknown_task_is_task_not_found_whatever_the_binding(
    partner_url: str, binding: str | None, http: httpx.AsyncClient
) -> None:
    client = await A2AClient.from_url(partner_url, http=http, binding=binding)

    with anyio.fail_after(10), pytest.raises(RemoteRpcError) as caught:
        await client.get_task("no-such-task")

    assert caught.value.code == -32001
    assert client.breaker.state is BreakerState.CLOSED
