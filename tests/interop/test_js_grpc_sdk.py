"""@a2a-js/sdk 1.3 over gRPC against the official Python a2a-sdk 1.3 over gRPC, both ways: the
JS client against the Python SDK's gRPC server, and the Python SDK's gRPC client against the
JS agent that serves only gRPC. This proves the JS pieces (tests/interop/js) speak A2A 1.0
over gRPC as another SDK reads it, before they meet the hub."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import grpc
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)
from a2a.utils.constants import TransportProtocol
from a2a.utils.errors import TaskNotFoundError
from google.protobuf.json_format import ParseDict

from tests.client.partners import ECHO, WAIT, EchoOrWaitExecutor
from tests.interop.js_sdk import JsAgent, JsClient, JsError, js_client, js_grpc_agent, needs_js
from tests.sdk_agents import sdk_grpc_agent

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, needs_js]

NOT_FOUND = grpc.StatusCode.NOT_FOUND.value[0]


def said(text: str) -> dict[str, Any]:
    """A SendMessageRequest in the JSON form: one user text part."""
    return {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    }


def states(events: list[dict[str, Any]]) -> list[str]:
    return [e["statusUpdate"]["status"]["state"] for e in events if "statusUpdate" in e]


@asynccontextmanager
async def js_against_python_sdk() -> AsyncIterator[JsClient]:
    """The JS client, given only the address of the Python SDK's gRPC server."""
    async with (
        sdk_grpc_agent(
            EchoOrWaitExecutor(), name="python-grpc", description="a2a-sdk over gRPC", skill=ECHO
        ) as agent,
        js_client(agent.target) as client,
    ):
        yield client


@asynccontextmanager
async def python_sdk_against_js(*, streaming: bool) -> AsyncIterator[tuple[Client, JsAgent]]:
    """The Python SDK's gRPC client, made from the JS agent's own card."""
    async with js_grpc_agent() as agent:
        card = ParseDict(agent.card, AgentCard())
        factory = ClientFactory(
            ClientConfig(
                streaming=streaming,
                supported_protocol_bindings=[TransportProtocol.GRPC],
                grpc_channel_factory=grpc.aio.insecure_channel,
            )
        )
        client = factory.create(card)
        try:
            yield client, agent
        finally:
            await client.close()


def user(text: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text=text)])
    )


async def collect(events: AsyncIterator[StreamResponse]) -> list[StreamResponse]:
    with anyio.fail_after(30):
        return [event async for event in events]


async def test_js_client_sends_streams_and_gets_from_the_python_sdk() -> None:
    async with js_against_python_sdk() as client:
        assert client.transport == "GrpcTransport"
        with anyio.fail_after(30):
            sent = await client.call("send", said("hello"))
            streamed = [event async for event in client.stream("stream", said("again"))]
            got = await client.call("get", {"id": sent["task"]["id"]})
    assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert sent["task"]["artifacts"][0]["parts"] == [{"text": "hello"}]
    assert "task" in streamed[0]
    chunks = [e["artifactUpdate"]["artifact"] for e in streamed if "artifactUpdate" in e]
    assert [part["text"] for chunk in chunks for part in chunk["parts"]] == ["again"]
    assert states(streamed)[-1] == "TASK_STATE_COMPLETED"
    assert got["status"]["state"] == "TASK_STATE_COMPLETED"
    assert got["artifacts"] == sent["task"]["artifacts"]


async def test_js_client_cancels_a_python_sdk_task_mid_stream() -> None:
    async with js_against_python_sdk() as client:
        with anyio.fail_after(30):
            events = client.stream("stream", said(WAIT))
            task_id = (await anext(events))["task"]["id"]
            working = await anext(events)
            assert working["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
            canceled = await client.call("cancel", {"id": task_id})
            rest = [event async for event in events]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert states(rest) == ["TASK_STATE_CANCELED"]


async def test_js_client_reads_the_python_sdks_not_found_from_its_grpc_status() -> None:
    async with js_against_python_sdk() as client:
        with anyio.fail_after(30), pytest.raises(JsError) as raised:
            await client.call("get", {"id": "no-such-task"})
    assert (raised.value.name, raised.value.reason) == ("TaskNotFoundError", "TASK_NOT_FOUND")
    assert raised.value.status == NOT_FOUND


async def test_python_sdk_client_sends_to_the_js_grpc_agent() -> None:
    async with python_sdk_against_js(streaming=False) as (client, _):
        (answer,) = await collect(client.send_message(user("hello big world")))
        task = await client.get_task(GetTaskRequest(id=answer.task.id))
    assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert "".join(p.text for p in answer.task.artifacts[0].parts) == "hello big world"
    assert task.artifacts == answer.task.artifacts


async def test_python_sdk_client_streams_the_js_agents_chunks_in_order() -> None:
    async with python_sdk_against_js(streaming=True) as (client, _):
        events = await collect(client.send_message(user("one two three")))
    assert events[0].HasField("task")
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [c.artifact.parts[0].text for c in chunks] == ["one ", "two ", "three"]
    assert [c.append for c in chunks] == [False, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, True]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_python_sdk_client_cancels_the_js_agents_task_and_reads_its_errors() -> None:
    async with python_sdk_against_js(streaming=True) as (client, _):
        stream = client.send_message(user("wait for me"))
        with anyio.fail_after(30):
            task_id = (await anext(stream)).task.id
            working = await anext(stream)
            assert working.status_update.status.state == TaskState.TASK_STATE_WORKING
            canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
            rest = [event async for event in stream]
        failed = await collect(client.send_message(user("fail on purpose")))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert rest[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
    assert failed[-1].status_update.status.state == TaskState.TASK_STATE_FAILED
    assert failed[-1].status_update.status.message.parts[0].text == "fail on purpose"
