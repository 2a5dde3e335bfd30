"""The gateway over gRPC: the official a2a-sdk gRPC client reaching a2a-sdk partners that
speak 1.0 JSON-RPC, 0.3 JSON-RPC and 1.0 HTTP+JSON through the hub's gRPC door, by the
tenant the partner's gateway card names (`agents/<name>`), which the partner never sees."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import grpc
import httpx
import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    SubscribeToTaskRequest,
    TaskState,
    a2a_pb2,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from hub import testing
from hub.config import (
    AuthSettings,
    GrpcSettings,
    LimitSettings,
    ServerSettings,
    Settings,
    StoreSettings,
)
from hub.testing import LoopbackHub
from tests.client.partners import WAIT
from tests.interop.grpc_clients import grpc_client, raw_stub
from tests.interop.test_sdk_client import cancel_once_working, collect, final_task_state, user
from tests.interop.test_sdk_grpc import V1, status_of

from .conftest import SCOPED_KEY, Partner, auth_settings, entries

pytestmark = pytest.mark.anyio

PARTNERS = ["one", "old", "rest"]


def settings(auth: AuthSettings | None = None) -> Settings:
    return Settings(
        server=ServerSettings(grpc=GrpcSettings(enabled=True)),
        store=StoreSettings(kind="memory"),
        auth=auth or AuthSettings(),
        limits=LimitSettings(requests_per_second=0),
    )


@pytest.fixture
async def hub(partners: dict[str, Partner], dead_url: str) -> AsyncIterator[LoopbackHub]:
    """A hub with its gRPC door, auth off, in front of every partner and of "down"."""
    listed = entries(partners, dead_url=dead_url)
    async with testing.serve_hub(partners=listed, settings=settings()) as hub:
        yield hub


@pytest.fixture(params=PARTNERS)
def partner(request: pytest.FixtureRequest) -> str:
    """Which partner: "one" (1.0 JSON-RPC), "old" (0.3), "rest" (1.0 HTTP+JSON)."""
    return str(request.param)


async def test_the_gateway_card_names_the_door_with_the_partners_tenant(
    hub: LoopbackHub, partner: str
) -> None:
    async with httpx.AsyncClient() as http:
        card = (await http.get(f"{hub.url}/agents/{partner}/.well-known/agent-card.json")).json()
    assert [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"] == [
        {
            "url": hub.grpc_address,
            "protocolBinding": "GRPC",
            "tenant": f"agents/{partner}",
            "protocolVersion": "1.0",
        }
    ]


async def test_a_stream_get_and_a_refused_cancel_reach_the_partner(
    hub: LoopbackHub, partner: str, partners: dict[str, Partner]
) -> None:
    async with grpc_client(f"{hub.url}/agents/{partner}") as client:
        events = await collect(client.send_message(user("hello")))
        task_id = events[0].task.id
        task = await client.get_task(GetTaskRequest(id=task_id))
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))
    artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert [(a.name, [part.text for part in a.parts]) for a in artifacts] == [("echo", ["hello"])]
    assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    # The tenant is the hub's routing: none of what reached the partner names it.
    sent = partners[partner].recorder
    assert sent.bodies
    assert all(b"agents/" not in body for body in sent.bodies)


async def test_a_running_partner_task_is_canceled_and_followed_again(
    hub: LoopbackHub, partner: str
) -> None:
    async with grpc_client(f"{hub.url}/agents/{partner}") as client:
        task_id, canceled, rest = await cancel_once_working(client, user(WAIT))
    assert canceled.id == task_id
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert final_task_state(rest) == TaskState.TASK_STATE_CANCELED


async def test_a_resubscribed_stream_follows_the_partner_task(hub: LoopbackHub) -> None:
    async with grpc_client(f"{hub.url}/agents/one") as client:
        with anyio.fail_after(10):
            first = client.send_message(user(WAIT))
            task_id = (await anext(first)).task.id
            await first.aclose()
            resubscribed = client.subscribe(SubscribeToTaskRequest(id=task_id))
            snapshot = await anext(resubscribed)
            await client.cancel_task(CancelTaskRequest(id=task_id))
            rest = [event async for event in resubscribed]
    assert snapshot.task.status.state == TaskState.TASK_STATE_WORKING
    assert final_task_state(rest) == TaskState.TASK_STATE_CANCELED


async def test_unknown_and_unreachable_partners_have_their_gateway_status(
    hub: LoopbackHub,
) -> None:
    async with raw_stub(str(hub.grpc_address)) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as unknown:
            await stub.GetTask(a2a_pb2.GetTaskRequest(id="t", tenant="agents/nobody"), metadata=V1)
        stream = stub.SendStreamingMessage(
            a2a_pb2.SendMessageRequest(message=user("hi").message, tenant="agents/down"),
            metadata=V1,
        )
        with pytest.raises(grpc.aio.AioRpcError) as down:
            await stream.read()
    assert status_of(unknown.value)[:2] == (grpc.StatusCode.NOT_FOUND, "PARTNER_NOT_FOUND")
    assert status_of(down.value)[:2] == (grpc.StatusCode.UNAVAILABLE, "PARTNER_UNAVAILABLE")


async def test_a_partner_outside_the_callers_scope_does_not_exist(
    partners: dict[str, Partner],
) -> None:
    scoped = (*V1, ("x-api-key", SCOPED_KEY))
    async with (
        testing.serve_hub(partners=entries(partners), settings=settings(auth_settings())) as hub,
        raw_stub(str(hub.grpc_address)) as stub,
    ):
        reached = await stub.SendMessage(
            a2a_pb2.SendMessageRequest(message=user("hi").message, tenant="agents/old"),
            metadata=scoped,
        )
        with pytest.raises(grpc.aio.AioRpcError) as hidden:
            await stub.SendMessage(
                a2a_pb2.SendMessageRequest(message=user("hi").message, tenant="agents/one"),
                metadata=scoped,
            )
    assert reached.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert status_of(hidden.value)[:2] == (grpc.StatusCode.NOT_FOUND, "PARTNER_NOT_FOUND")
