"""Credentials as gRPC metadata: the same gate, scopes and limits as over HTTP, and nothing
of a secret in what a refused caller is told."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from a2a.client import ClientCallContext
from a2a.types import (
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    TaskState,
    a2a_pb2,
)
from a2a.utils.errors import TaskNotFoundError

from hub.config import (
    AuthSettings,
    CardSettings,
    CredentialSettings,
    GrpcSettings,
    LimitSettings,
    ServerSettings,
    Settings,
    StoreSettings,
)
from hub.skills.echo import echo
from hub.testing import LoopbackHub, serve_hub

from .conftest import interview
from .grpc_clients import grpc_client, raw_stub
from .test_sdk_client import collect, final_task_state, user
from .test_sdk_grpc import V1, status_of

pytestmark = pytest.mark.anyio

OPS_KEY = "ops-grpc-key-7d2a9c4e1b"
OTHER_KEY = "other-grpc-key-3f8b6e0a2c"
BOT_TOKEN = "bot-grpc-token-5e1c7a9d3b"


def key(secret: str) -> ClientCallContext:
    """A call context that sends `secret` as the API key, in the metadata."""
    return ClientCallContext(service_parameters={"x-api-key": secret})


@pytest.fixture
async def hub() -> AsyncIterator[LoopbackHub]:
    """Auth on: `ops` (an API key), `bot` (a bearer token), and `other` (an API key, the
    echo skill only)."""
    settings = Settings(
        server=ServerSettings(grpc=GrpcSettings(enabled=True)),
        store=StoreSettings(kind="memory"),
        card=CardSettings(extended_card=True),
        auth=AuthSettings(
            enabled=True,
            credentials=(
                CredentialSettings(name="ops", api_key=OPS_KEY),
                CredentialSettings(name="bot", bearer=BOT_TOKEN),
                CredentialSettings(name="other", api_key=OTHER_KEY, skills=("echo",)),
            ),
        ),
    )
    async with serve_hub(skills=[echo, interview], settings=settings) as hub:
        yield hub


async def test_no_credential_is_unauthenticated_with_a_challenge(hub: LoopbackHub) -> None:
    async with raw_stub(str(hub.grpc_address)) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=V1)
        with pytest.raises(grpc.aio.AioRpcError) as wrong:
            await stub.ListTasks(
                a2a_pb2.ListTasksRequest(), metadata=(*V1, ("x-api-key", "guessed-key-123"))
            )
        stream = stub.SendStreamingMessage(
            a2a_pb2.SendMessageRequest(message=user("hi").message), metadata=V1
        )
        with pytest.raises(grpc.aio.AioRpcError) as streamed:
            await stream.read()
    code, reason, trailers = status_of(missing.value)
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
    assert "x-api-key" in missing.value.details().lower()
    assert "Bearer" in trailers["www-authenticate"]
    assert status_of(wrong.value)[:2] == (grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
    told = wrong.value.details() + repr(wrong.value.trailing_metadata())
    assert "guessed-key-123" not in told
    assert status_of(streamed.value)[0] == grpc.StatusCode.UNAUTHENTICATED


async def test_a_bearer_token_names_its_caller(hub: LoopbackHub) -> None:
    bearer = (*V1, ("authorization", f"Bearer {BOT_TOKEN}"))
    async with raw_stub(str(hub.grpc_address)) as stub:
        sent = await stub.SendMessage(
            a2a_pb2.SendMessageRequest(message=user("hi").message), metadata=bearer
        )
        got = await stub.GetTask(a2a_pb2.GetTaskRequest(id=sent.task.id), metadata=bearer)
        with pytest.raises(grpc.aio.AioRpcError) as hidden:
            await stub.GetTask(
                a2a_pb2.GetTaskRequest(id=sent.task.id), metadata=(*V1, ("x-api-key", OPS_KEY))
            )
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    assert status_of(hidden.value)[:2] == (grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND")


async def test_a_credential_sees_only_its_own_tasks(hub: LoopbackHub) -> None:
    async with grpc_client(hub.url) as client:
        events = await collect(client.send_message(user("mine"), context=key(OPS_KEY)))
        task_id = events[0].task.id
        assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED
        own = await client.list_tasks(ListTasksRequest(), context=key(OPS_KEY))
        others = await client.list_tasks(ListTasksRequest(), context=key(OTHER_KEY))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=task_id), context=key(OTHER_KEY))
    assert [task.id for task in own.tasks] == [task_id]
    assert list(others.tasks) == []


async def test_a_skill_scope_holds_and_the_extended_card_is_narrowed(hub: LoopbackHub) -> None:
    async with raw_stub(str(hub.grpc_address)) as stub:
        scoped = (*V1, ("x-api-key", OTHER_KEY))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.SendMessage(user("hi", skill="interview"), metadata=scoped)
    async with grpc_client(hub.url) as client:
        card = await client.get_extended_agent_card(
            GetExtendedAgentCardRequest(), context=key(OTHER_KEY)
        )
        full = await client.get_extended_agent_card(
            GetExtendedAgentCardRequest(), context=key(OPS_KEY)
        )
    assert status_of(refused.value)[:2] == (
        grpc.StatusCode.PERMISSION_DENIED,
        "SKILL_NOT_ALLOWED",
    )
    assert [skill.id for skill in card.skills] == ["echo"]
    assert sorted(skill.id for skill in full.skills) == ["echo", "interview"]


async def test_past_the_request_rate_a_call_is_resource_exhausted() -> None:
    settings = Settings(
        server=ServerSettings(grpc=GrpcSettings(enabled=True)),
        store=StoreSettings(kind="memory"),
        limits=LimitSettings(requests_per_second=0.01, burst=1),
        auth=AuthSettings(
            enabled=True, credentials=(CredentialSettings(name="ops", api_key=OPS_KEY),)
        ),
    )
    metadata = (*V1, ("x-api-key", OPS_KEY))
    async with serve_hub(settings=settings) as hub, raw_stub(str(hub.grpc_address)) as stub:
        await stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=metadata)
        with pytest.raises(grpc.aio.AioRpcError) as limited:
            await stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=metadata)
    code, reason, trailers = status_of(limited.value)
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
    assert int(trailers["retry-after"]) >= 1
