"""The official a2a-sdk client against a real hub: 1.0 JSON-RPC, 1.0 HTTP+JSON, and 0.3."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.client.errors import A2AClientError
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import (
    A2AError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.struct_pb2 import Struct

pytestmark = pytest.mark.anyio

BINDINGS = {
    "jsonrpc-1.0": ([TransportProtocol.JSONRPC], "1.0"),
    "rest-1.0": ([TransportProtocol.HTTP_JSON], "1.0"),
    "jsonrpc-0.3": ([TransportProtocol.JSONRPC], "0.3"),
}


@asynccontextmanager
async def sdk_client(
    url: str,
    binding: str,
    *,
    streaming: bool = True,
    on_response: Callable[[httpx.Response], Awaitable[None]] | None = None,
) -> AsyncIterator[Client]:
    """An SDK client that speaks exactly `binding`, chosen from the hub's real card; with
    `streaming` False it sends unary calls only; `on_response` sees each response's head."""
    bindings, version = BINDINGS[binding]
    hooks = {"response": [on_response]} if on_response is not None else {}
    async with httpx.AsyncClient(timeout=10, event_hooks=hooks) as http:
        factory = ClientFactory(
            ClientConfig(
                httpx_client=http,
                streaming=streaming,
                supported_protocol_bindings=list(bindings),
            )
        )
        probe = await factory.create_from_url(url)
        card = probe._card  # the card as the SDK parsed it
        keep = [
            i
            for i in card.supported_interfaces
            if i.protocol_version == version and i.protocol_binding in bindings
        ]
        assert keep, f"the hub's card does not offer {binding}"
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)
        client = factory.create(card)
        try:
            yield client
        finally:
            await client.close()


def user(text: str, *, task_id: str = "", skill: str | None = None) -> SendMessageRequest:
    message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
    if task_id:
        message.task_id = task_id
    request = SendMessageRequest(message=message)
    if skill:
        metadata = Struct()
        metadata.update({"skill": skill})
        request.metadata.CopyFrom(metadata)
    return request


async def collect(events: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    with anyio.fail_after(10):
        return [event async for event in events]


def final_task_state(events: list[StreamResponse]) -> int:
    for event in reversed(events):
        if event.HasField("status_update"):
            return event.status_update.status.state
        if event.HasField("task"):
            return event.task.status.state
    raise AssertionError("no task state in the stream")


async def cancel_once_working(
    client: Client, request: SendMessageRequest
) -> tuple[str, Task, list[StreamResponse]]:
    """Streams `request`, cancels its task once it reports WORKING: the task's id, the
    canceled task and the events the stream had left."""
    stream = client.send_message(request)
    with anyio.fail_after(10):
        first = await anext(stream)
        task_id = first.task.id
        working = await anext(stream)
        assert working.status_update.status.state == TaskState.TASK_STATE_WORKING
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
        rest = [event async for event in stream]
    return task_id, canceled, rest


@pytest.fixture(params=list(BINDINGS))
def binding(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_streamed_send_gets_the_echo_and_completes(hub_url: str, binding: str) -> None:
    async with sdk_client(hub_url, binding) as client:
        events = await collect(client.send_message(user("hello")))
    assert events[0].HasField("task")
    artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert [part.text for a in artifacts for part in a.parts] == ["hello"]
    assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED


async def test_get_list_and_cancel(hub_url: str, binding: str) -> None:
    async with sdk_client(hub_url, binding) as client:
        events = await collect(client.send_message(user("hello")))
        task_id = events[0].task.id
        task = await client.get_task(GetTaskRequest(id=task_id))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert task.artifacts[0].parts[0].text == "hello"
        if binding != "jsonrpc-0.3":  # ListTasks does not exist in 0.3
            listed = await client.list_tasks(ListTasksRequest(context_id=task.context_id))
            assert [t.id for t in listed.tasks] == [task_id]
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))


async def test_cancel_of_a_running_task(hub_url: str, binding: str) -> None:
    async with sdk_client(hub_url, binding) as client:
        _, canceled, rest = await cancel_once_working(client, user("go", skill="waits"))
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert final_task_state(rest) == TaskState.TASK_STATE_CANCELED


async def test_resubscribe_sees_the_rest_of_a_task(hub_url: str, binding: str) -> None:
    async with sdk_client(hub_url, binding) as client:
        stream = client.send_message(user("go", skill="waits"))
        with anyio.fail_after(10):
            first = await anext(stream)
            task_id = first.task.id
            await stream.aclose()  # the client goes away; the task goes on
            resubscribed = client.subscribe(SubscribeToTaskRequest(id=task_id))
            snapshot = await anext(resubscribed)
            assert snapshot.task.id == task_id
            assert snapshot.task.status.state == TaskState.TASK_STATE_WORKING
            await client.cancel_task(CancelTaskRequest(id=task_id))
            rest = [event async for event in resubscribed]
    assert final_task_state(rest) == TaskState.TASK_STATE_CANCELED


async def test_a_subscription_that_cannot_start_is_a_clean_sdk_error(
    hub_url: str, binding: str
) -> None:
    async with sdk_client(hub_url, binding) as client:
        done = (await collect(client.send_message(user("hello"))))[0].task.id
        failures: list[A2AError] = []
        for task_id in ("nope", done):
            with anyio.fail_after(10), pytest.raises(A2AError) as failed:
                await anext(client.subscribe(SubscribeToTaskRequest(id=task_id)))
            failures.append(failed.value)
    if binding != "jsonrpc-0.3":
        assert [type(failure) for failure in failures] == [
            TaskNotFoundError,
            UnsupportedOperationError,
        ]
    else:
        # The 0.3 door refuses the stream with HTTP 404 / 400, as the 0.3 spec asks; the SDK's
        # JSON-RPC client reads an error body only from a 200, so it reports the status.
        assert [type(failure) for failure in failures] == [A2AClientError, A2AClientError]
        assert ["404" in str(failures[0]), "400" in str(failures[1])] == [True, True]


async def test_multi_turn_input_required(hub_url: str, binding: str) -> None:
    async with sdk_client(hub_url, binding) as client:
        events = await collect(client.send_message(user("hi", skill="interview")))
        assert final_task_state(events) == TaskState.TASK_STATE_INPUT_REQUIRED
        task_id = events[0].task.id
        answer = await collect(client.send_message(user("Ada", task_id=task_id)))
        assert final_task_state(answer) == TaskState.TASK_STATE_COMPLETED
        task = await client.get_task(GetTaskRequest(id=task_id))
    assert task.artifacts[0].parts[0].text == "Hello, Ada!"


async def test_unary_send_without_streaming(hub_url: str, binding: str) -> None:
    bindings, version = BINDINGS[binding]
    async with httpx.AsyncClient(timeout=10) as http:
        factory = ClientFactory(
            ClientConfig(
                httpx_client=http, streaming=False, supported_protocol_bindings=list(bindings)
            )
        )
        async with sdk_client(hub_url, binding) as streaming_client:
            card = streaming_client._card
        client = factory.create(card)
        events = await collect(client.send_message(user("unary")))
        await client.close()
    assert len(events) == 1
    assert events[0].task.status.state == TaskState.TASK_STATE_COMPLETED
    assert events[0].task.artifacts[0].parts[0].text == "unary"
    assert version in ("1.0", "0.3")
