"""The official a2a-sdk gRPC client against the hub's gRPC door: every RPC, streams, and the
errors with the status codes and `ErrorInfo` details the spec names."""

from __future__ import annotations

import logging

import anyio
import grpc
import httpx
import pytest
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
    a2a_pb2,
)
from a2a.utils.errors import (
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.rpc import error_details_pb2, status_pb2

from hub.config import GrpcSettings, ServerSettings, Settings, StoreSettings
from hub.telemetry import Telemetry
from hub.telemetry.metrics import HubMetrics
from hub.testing import LoopbackHub, serve_hub, serve_on_loopback
from tests.push.receiver import WebhookReceiver

from .grpc_clients import grpc_client, raw_stub
from .test_sdk_client import cancel_once_working, collect, final_task_state, user

pytestmark = pytest.mark.anyio

V1 = (("a2a-version", "1.0"),)


@pytest.fixture
def hub(grpc_hub: LoopbackHub) -> LoopbackHub:
    """The hub of conftest's `grpc_hub`: the gRPC door on, webhooks allowed on loopback."""
    return grpc_hub


def status_of(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """The call's status code, its `ErrorInfo` reason, and its other trailers."""
    trailers = dict(error.trailing_metadata() or ())
    status = status_pb2.Status.FromString(trailers.pop("grpc-status-details-bin"))
    assert status.code == error.code().value[0]
    assert status.message == error.details()
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.domain == "a2a-protocol.org"
    return error.code(), info.reason, {k: v for k, v in trailers.items() if isinstance(v, str)}


async def test_the_card_lists_the_grpc_interface(hub: LoopbackHub) -> None:
    async with httpx.AsyncClient() as http:
        card = (await http.get(f"{hub.url}/.well-known/agent-card.json")).json()
    grpc_interfaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert grpc_interfaces == [
        {"url": hub.grpc_address, "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    ]


async def test_a_streamed_send_gets_the_echo(hub: LoopbackHub) -> None:
    async with grpc_client(hub.url) as client:
        events = await collect(client.send_message(user("hello")))
    assert events[0].HasField("task")
    artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert [part.text for a in artifacts for part in a.parts] == ["hello"]
    assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED


async def test_a_unary_send_get_list_and_a_refused_cancel(hub: LoopbackHub) -> None:
    async with grpc_client(hub.url, streaming=False) as client:
        events = await collect(client.send_message(user("hello")))
        task = events[-1].task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        got = await client.get_task(GetTaskRequest(id=task.id))
        listed = await client.list_tasks(ListTasksRequest(context_id=task.context_id))
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task.id))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))
    assert got.artifacts[0].parts[0].text == "hello"
    assert [t.id for t in listed.tasks] == [task.id]
    assert listed.total_size == 1


async def test_a_running_task_is_canceled_and_its_stream_ends(hub: LoopbackHub) -> None:
    async with grpc_client(hub.url) as client:
        task_id, canceled, rest = await cancel_once_working(client, user("x", skill="waits"))
    assert canceled.id == task_id
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert final_task_state(rest) == TaskState.TASK_STATE_CANCELED


async def test_a_subscriber_follows_a_question_and_its_answer(hub: LoopbackHub) -> None:
    async with grpc_client(hub.url) as client:
        events = await collect(client.send_message(user("hi", skill="interview")))
        task = events[0].task
        assert final_task_state(events) == TaskState.TASK_STATE_INPUT_REQUIRED
        subscription = client.subscribe(SubscribeToTaskRequest(id=task.id))
        with anyio.fail_after(10):
            snapshot = await anext(subscription)
        answered = await collect(client.send_message(user("Ada", task_id=task.id)))
        followed = await collect(subscription)
        with pytest.raises(UnsupportedOperationError):  # a finished task has no updates
            await collect(client.subscribe(SubscribeToTaskRequest(id=task.id)))
    assert snapshot.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert final_task_state(answered) == TaskState.TASK_STATE_COMPLETED
    assert final_task_state(followed) == TaskState.TASK_STATE_COMPLETED
    texts = [
        part.text
        for e in followed
        if e.HasField("artifact_update")
        for part in e.artifact_update.artifact.parts
    ]
    assert texts == ["Hello, Ada!"]


async def test_push_configs_are_created_read_listed_and_deleted(hub: LoopbackHub) -> None:
    receiver = WebhookReceiver()
    async with serve_on_loopback(receiver) as webhook, grpc_client(hub.url) as client:
        events = await collect(client.send_message(user("hi", skill="interview")))
        task_id = events[0].task.id
        created = await client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task_id, url=f"{webhook}/grpc", token="t-1")
        )
        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id=created.id)
        )
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=created.id)
        )
        after = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)
        )
    assert created.id
    assert (got.url, got.token) == (f"{webhook}/grpc", "t-1")
    assert [config.id for config in listed.configs] == [created.id]
    assert list(after.configs) == []


async def test_the_extended_card_is_refused_without_auth(hub: LoopbackHub) -> None:
    async with raw_stub(str(hub.grpc_address)) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.GetExtendedAgentCard(a2a_pb2.GetExtendedAgentCardRequest(), metadata=V1)
    code, reason, _ = status_of(refused.value)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION")


async def test_errors_carry_the_spec_status_codes(hub: LoopbackHub) -> None:
    async with raw_stub(str(hub.grpc_address)) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as unknown:
            await stub.GetTask(a2a_pb2.GetTaskRequest(id="nope"), metadata=V1)
        with pytest.raises(grpc.aio.AioRpcError) as no_parts:
            await stub.SendMessage(
                a2a_pb2.SendMessageRequest(
                    message=a2a_pb2.Message(message_id="m", role=a2a_pb2.ROLE_USER)
                ),
                metadata=V1,
            )
        with pytest.raises(grpc.aio.AioRpcError) as old:
            await stub.GetTask(
                a2a_pb2.GetTaskRequest(id="nope"), metadata=(("a2a-version", "0.3"),)
            )
        with pytest.raises(grpc.aio.AioRpcError) as tenant:
            await stub.GetTask(a2a_pb2.GetTaskRequest(id="x", tenant="elsewhere"), metadata=V1)
        stream = stub.SubscribeToTask(a2a_pb2.SubscribeToTaskRequest(id="nope"), metadata=V1)
        with pytest.raises(grpc.aio.AioRpcError) as streamed:
            await stream.read()
    assert status_of(unknown.value)[:2] == (grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND")
    assert status_of(no_parts.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PARAMS")
    assert "parts" in no_parts.value.details()
    assert status_of(old.value)[:2] == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "VERSION_NOT_SUPPORTED",
    )
    assert status_of(tenant.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PARAMS")
    assert "agents/<name>" in tenant.value.details()
    assert status_of(streamed.value)[:2] == (grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND")


async def test_a_call_without_a2a_version_is_a_1_0_call(hub: LoopbackHub) -> None:
    """The 1.0 service's name says the version (0.3's service had another name)."""
    async with raw_stub(str(hub.grpc_address)) as stub:
        answer = await stub.SendMessage(a2a_pb2.SendMessageRequest(message=user("hi").message))
    assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED


async def test_a_refused_operation_reaches_the_sdk_as_its_error() -> None:
    settings = Settings(
        server=ServerSettings(grpc=GrpcSettings(enabled=True)),
        store=StoreSettings(kind="memory"),
        card={"push_notifications": False},
    )
    async with serve_hub(settings=settings) as hub, grpc_client(hub.url) as client:
        with pytest.raises(PushNotificationNotSupportedError):
            await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id="t", id="c")
            )


async def test_a_client_that_goes_away_leaves_the_task_running(hub: LoopbackHub) -> None:
    async with grpc_client(hub.url) as client:
        stream = client.send_message(user("x", skill="waits"))
        with anyio.fail_after(10):
            task_id = (await anext(stream)).task.id
    # The channel is closed: the call is canceled, its stream slot given back.
    gate = hub.app.state.hub.gate
    with anyio.fail_after(10):
        while gate.streams_open():  # noqa: ASYNC110 (the gate counts, it has no event)
            await anyio.sleep(0.01)
    async with grpc_client(hub.url) as client:
        task = await client.get_task(GetTaskRequest(id=task_id))
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
    assert task.status.state == TaskState.TASK_STATE_WORKING
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED


async def test_a_call_is_logged_counted_and_continues_the_callers_trace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="hub.access")
    metrics = HubMetrics()
    telemetry = Telemetry(metrics=metrics, access_log=True)
    settings = Settings(
        server=ServerSettings(grpc=GrpcSettings(enabled=True)), store=StoreSettings(kind="memory")
    )
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    traced = (*V1, ("traceparent", f"00-{trace_id}-00f067aa0ba902b7-01"))
    async with serve_hub(settings=settings, telemetry=telemetry) as hub:
        async with raw_stub(str(hub.grpc_address)) as stub:
            with pytest.raises(grpc.aio.AioRpcError):
                await stub.GetTask(a2a_pb2.GetTaskRequest(id="nope"), metadata=traced)
            answer = await stub.SendMessage(
                a2a_pb2.SendMessageRequest(message=user("hi").message), metadata=traced
            )
        task = await hub.store.get(answer.task.id)
    lines = [record.access for record in caplog.records if hasattr(record, "access")]
    assert [(line["path"], line["a2a_method"], line["status"]) for line in lines] == [
        ("/lf.a2a.v1.A2AService/GetTask", "GetTask", "NOT_FOUND"),
        ("/lf.a2a.v1.A2AService/SendMessage", "SendMessage", "OK"),
    ]
    assert {line["trace_id"] for line in lines} == {trace_id}
    assert task is not None
    assert task.trace_id == trace_id
    exposed = metrics.exposition().decode()
    assert 'binding="grpc"' in exposed
    assert 'method="GetTask"' in exposed
    assert 'outcome="TaskNotFoundError"' in exposed
