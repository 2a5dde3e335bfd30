"""The official a2a-sdk client, speaking 1.0 JSON-RPC, 1.0 HTTP+JSON or 0.3 JSON-RPC, reaching
a2a-sdk partners that speak 1.0 JSON-RPC, 0.3 JSON-RPC or 1.0 HTTP+JSON, through the gateway:
every client with every partner, the hub translating between them."""

from __future__ import annotations

import anyio
import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError

from tests.client.partners import WAIT
from tests.interop.test_sdk_client import (
    BINDINGS,
    cancel_once_working,
    collect,
    final_task_state,
    sdk_client,
    user,
)

pytestmark = pytest.mark.anyio

PARTNERS = ["one", "old", "rest"]


@pytest.fixture(params=list(BINDINGS))
def binding(request: pytest.FixtureRequest) -> str:
    """How the SDK client talks to the hub."""
    return str(request.param)


@pytest.fixture(params=PARTNERS)
def partner(request: pytest.FixtureRequest) -> str:
    """Which partner it reaches: "one" (1.0 JSON-RPC), "old" (0.3), "rest" (1.0 HTTP+JSON)."""
    return str(request.param)


async def test_stream_get_and_cancel_reach_the_partner(
    hub_url: str, binding: str, partner: str
) -> None:
    async with sdk_client(f"{hub_url}/agents/{partner}", binding) as client:
        events = await collect(client.send_message(user("hello")))
        task_id = events[0].task.id
        task = await client.get_task(GetTaskRequest(id=task_id))
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))
    assert events[0].HasField("task")
    artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert [(a.name, [part.text for part in a.parts]) for a in artifacts] == [("echo", ["hello"])]
    assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED
    assert task.id == task_id
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [part.text for part in task.artifacts[0].parts] == ["hello"]
    assert [message.parts[0].text for message in task.history][:1] == ["hello"]


async def test_a_running_partner_task_is_canceled_through_the_hub(
    hub_url: str, binding: str, partner: str
) -> None:
    async with sdk_client(f"{hub_url}/agents/{partner}", binding) as client:
        task_id, canceled, rest = await cancel_once_working(client, user(WAIT))
    assert canceled.id == task_id
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert final_task_state(rest) == TaskState.TASK_STATE_CANCELED


async def test_a_resubscribed_stream_follows_the_partner_task(hub_url: str, binding: str) -> None:
    async with sdk_client(f"{hub_url}/agents/one", binding) as client:
        stream = client.send_message(user(WAIT))
        with anyio.fail_after(10):
            task_id = (await anext(stream)).task.id
            await stream.aclose()  # the client goes away; the partner's task goes on
            resubscribed = client.subscribe(SubscribeToTaskRequest(id=task_id))
            snapshot = await anext(resubscribed)
            await client.cancel_task(CancelTaskRequest(id=task_id))
            rest = [event async for event in resubscribed]
    assert snapshot.task.id == task_id
    assert snapshot.task.status.state == TaskState.TASK_STATE_WORKING
    assert final_task_state(rest) == TaskState.TASK_STATE_CANCELED


async def test_the_partners_task_not_found_reaches_every_client(
    hub_url: str, binding: str, partner: str
) -> None:
    async with sdk_client(f"{hub_url}/agents/{partner}", binding) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))


@pytest.mark.parametrize("binding", ["jsonrpc-1.0", "rest-1.0"])
async def test_list_tasks_reaches_a_1_0_partner(hub_url: str, binding: str) -> None:
    async with sdk_client(f"{hub_url}/agents/one", binding) as client:
        events = await collect(client.send_message(user("listed")))
        task = events[0].task
        listed = await client.list_tasks(ListTasksRequest(context_id=task.context_id))
    assert [t.id for t in listed.tasks] == [task.id]


async def test_list_tasks_of_a_0_3_partner_is_unsupported(hub_url: str) -> None:
    async with sdk_client(f"{hub_url}/agents/old", "jsonrpc-1.0") as client:
        with pytest.raises(UnsupportedOperationError):
            await client.list_tasks(ListTasksRequest())
