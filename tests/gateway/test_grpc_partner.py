"""The gateway's three doors (JSON-RPC 1.0, HTTP+JSON 1.0, JSON-RPC 0.3) to a partner that
speaks only gRPC (the official a2a-sdk's gRPC server): answers, streams and errors cross
between the bindings, and the caller's A2A extensions reach the partner as gRPC metadata,
those it activates coming back under the caller's version's header."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
import httpx
import pytest
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue

from hub.client import A2AClient, user_message
from hub.errors import RemoteRpcError
from hub.protocol import Task, TaskState
from hub.testing import serve_hub
from tests.client.partners import ECHO, EchoOrWaitExecutor, final_state, streamed_texts
from tests.sdk_agents import sdk_grpc_agent

pytestmark = pytest.mark.anyio

TAG = "https://example.com/extensions/tag/v1"
DOORS = [("1.0", "jsonrpc"), ("1.0", "http+json"), ("0.3", "jsonrpc")]


class Activating(EchoOrWaitExecutor):
    """Echoes, keeping the extensions each request listed; activates `TAG` when listed, in
    the gRPC call's trailing metadata (the SDK has no way of its own to say so)."""

    def __init__(self) -> None:
        self.requested: list[set[str]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        listed = set(context.requested_extensions)
        self.requested.append(listed)
        if TAG in listed:
            grpc_context = context.call_context.state["grpc_context"]
            grpc_context.set_trailing_metadata((("a2a-extensions", TAG),))
        await super().execute(context, event_queue)


@dataclass(frozen=True)
class Bed:
    hub_url: str
    executor: Activating


@pytest.fixture
async def bed() -> AsyncIterator[Bed]:
    executor = Activating()
    async with (
        sdk_grpc_agent(
            executor, name="grpc-only", description="speaks gRPC only", skill=ECHO
        ) as partner,
        serve_hub(partners={"rpc": partner.url}) as hub,
    ):
        yield Bed(hub.url, executor)


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
