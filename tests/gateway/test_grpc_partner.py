"""The gateway's doors (JSON-RPC 1.0, HTTP+JSON 1.0, JSON-RPC 0.3, and gRPC by the tenant
`agents/<name>`) to a partner that speaks only gRPC (the official a2a-sdk's gRPC server):
answers, streams and errors cross between the bindings, and the caller's A2A extensions
reach the partner as gRPC metadata, those it activates coming back under the caller's
version's header (or gRPC metadata)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
import grpc
import httpx
import pytest
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.types import GetTaskRequest, a2a_pb2
from a2a.utils.errors import TaskNotFoundError

from hub.client import A2AClient, user_message
from hub.config import GrpcSettings, ServerSettings, Settings, StoreSettings
from hub.errors import RemoteRpcError
from hub.protocol import Task, TaskState
from hub.testing import serve_hub
from tests.client.partners import ECHO, EchoOrWaitExecutor, final_state, streamed_texts
from tests.interop.grpc_clients import grpc_client, raw_stub
from tests.interop.test_sdk_client import collect, final_task_state, user
from tests.interop.test_sdk_grpc import V1, status_of
from tests.sdk_agents import sdk_grpc_agent

pytestmark = pytest.mark.anyio

TAG = "https://example.com/extensions/tag/v1"
DOORS = [("1.0", "jsonrpc"), ("1.0", "http+json"), ("0.3", "jsonrpc")]


class Activating(EchoOrWaitExecutor):
    """Echoes, keeping the extensions each request listed; activates `TAG` when listed, in
    the gRPC call's trailing metadata (the SDK has no way of its own to say so)."""

    def __init__(self) -> None:
        self.requested: list[set[str]] = []
        self.tenants: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        listed = set(context.requested_extensions)
        self.requested.append(listed)
        self.tenants.append(context.tenant)
        if TAG in listed:
            grpc_context = context.call_context.state["grpc_context"]
            grpc_context.set_trailing_metadata((("a2a-extensions", TAG),))
        await super().execute(context, event_queue)


@dataclass(frozen=True)
class Bed:
    hub_url: str
    grpc_address: str
    executor: Activating


@pytest.fixture
async def bed() -> AsyncIterator[Bed]:
    """The gRPC-only partner as `rpc`, behind a hub that serves its gRPC door too."""
    executor = Activating()
    settings = Settings(
        server=ServerSettings(grpc=GrpcSettings(enabled=True)), store=StoreSettings(kind="memory")
    )
    async with (
        sdk_grpc_agent(
            executor, name="grpc-only", description="speaks gRPC only", skill=ECHO
        ) as partner,
        serve_hub(partners={"rpc": partner.url}, settings=settings) as hub,
    ):
        yield Bed(hub.url, str(hub.grpc_address), executor)


def _text(task: Task) -> str:
    return "".join(p.text or "" for a in task.artifacts or [] for p in a.parts)


@pytest.fixture(params=DOORS, ids=["jsonrpc-1.0", "rest-1.0", "jsonrpc-0.3"])
async def door(bed: Bed, request: pytest.FixtureRequest) -> AsyncIterator[A2AClient]:
    """A client of the gRPC partner through one of the gateway's doors."""
    version, binding = request.param
    async with httpx.AsyncClient() as http:
        yield await A2AClient.from_url(
            f"{bed.hub_url}/agents/rpc", http=http, protocol_version=version, binding=binding
        )


async def test_each_door_sends_and_streams_to_the_grpc_partner(door: A2AClient) -> None:
    with anyio.fail_after(15):
        sent = await door.send(user_message("hello"))
        async with door.stream(user_message("streamed")) as events:
            seen = [event async for event in events]
        assert isinstance(sent, Task)
        fetched = await door.get_task(sent.id)

    assert sent.status.state is TaskState.COMPLETED
    assert _text(sent) == _text(fetched) == "hello"
    assert final_state(seen) is TaskState.COMPLETED
    assert streamed_texts(seen) == ["streamed"]


async def test_the_grpc_partners_task_not_found_keeps_its_code_at_each_door(
    door: A2AClient,
) -> None:
    with anyio.fail_after(15), pytest.raises(RemoteRpcError) as caught:
        await door.get_task("no-such-task")

    assert caught.value.code == -32001


@pytest.mark.parametrize(
    ("version", "header", "path"),
    [
        ("1.0", "A2A-Extensions", ""),
        ("1.0", "A2A-Extensions", "/message:send"),
        ("0.3", "X-A2A-Extensions", ""),
    ],
)
async def test_the_callers_extensions_reach_the_grpc_partner_and_come_back(
    bed: Bed, version: str, header: str, path: str
) -> None:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    if version == "0.3":
        message = {
            "messageId": "m1",
            "role": "user",
            "kind": "message",
            "parts": [{"kind": "text", "text": "hi"}],
        }
    body: dict[str, object] = {"message": message}
    if not path:
        method = "message/send" if version == "0.3" else "SendMessage"
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": body}
    headers = {"A2A-Version": version, header: f"{TAG}, https://example.com/other/v1"}
    async with httpx.AsyncClient() as http:
        with anyio.fail_after(15):
            answer = await http.post(f"{bed.hub_url}/agents/rpc{path}", json=body, headers=headers)

    assert answer.status_code == 200, answer.text
    assert "error" not in answer.json()
    assert bed.executor.requested == [{TAG, "https://example.com/other/v1"}]
    assert answer.headers.get(header) == TAG


async def test_a_grpc_client_sends_and_streams_to_the_grpc_partner_through_the_door(
    bed: Bed,
) -> None:
    card_url = f"{bed.hub_url}/agents/rpc"
    async with grpc_client(card_url, streaming=False) as unary, grpc_client(card_url) as client:
        sent = await collect(unary.send_message(user("hello")))
        events = await collect(client.send_message(user("streamed")))
        with anyio.fail_after(10):
            fetched = await client.get_task(GetTaskRequest(id=events[0].task.id))

    assert [event.task.status.state for event in sent] == [a2a_pb2.TASK_STATE_COMPLETED]
    assert [part.text for part in sent[0].task.artifacts[0].parts] == ["hello"]
    artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert [[part.text for part in a.parts] for a in artifacts] == [["streamed"]]
    assert final_task_state(events) == a2a_pb2.TASK_STATE_COMPLETED
    assert fetched.status.state == a2a_pb2.TASK_STATE_COMPLETED
    # The tenant routed the call in the hub; the partner was called without one.
    assert bed.executor.tenants == ["", ""]


async def test_the_grpc_partners_task_not_found_crosses_the_grpc_door(bed: Bed) -> None:
    async with grpc_client(f"{bed.hub_url}/agents/rpc") as client:
        with anyio.fail_after(10), pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))
    async with raw_stub(bed.grpc_address) as stub:
        request = a2a_pb2.GetTaskRequest(id="no-such-task", tenant="agents/rpc")
        with anyio.fail_after(10), pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.GetTask(request, metadata=V1)

    assert status_of(caught.value)[:2] == (grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND")


async def test_over_the_grpc_door_the_grpc_partner_sees_the_extensions_and_activates_one(
    bed: Bed,
) -> None:
    listed = (*V1, ("a2a-extensions", f"{TAG},https://example.com/other/v1"))
    request = user("hi")
    request.tenant = "agents/rpc"
    async with raw_stub(bed.grpc_address) as stub:
        with anyio.fail_after(15):
            streaming = stub.SendStreamingMessage(request, metadata=listed)
            streamed = [event async for event in streaming]
            unary = stub.SendMessage(request, metadata=listed)
            answer = await unary
            answered = dict(await unary.initial_metadata())

    assert final_task_state(streamed) == a2a_pb2.TASK_STATE_COMPLETED
    assert answer.task.status.state == a2a_pb2.TASK_STATE_COMPLETED
    assert bed.executor.requested == [{TAG, "https://example.com/other/v1"}] * 2
    # The partner names its activation in its trailers, which a unary answer's head carries
    # (a stream's head has gone before the partner's trailers come).
    assert answered.get("a2a-extensions") == TAG
