"""A2AClient over gRPC against a scripted gRPC server: every way a gRPC call fails becomes the
hub error an HTTP partner's same failure gives (and so the same retries, breaker and
messages), and what an HTTP request carries in headers goes in the call's metadata."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import anyio
import grpc
import httpx
import pytest

from hub.client import A2AClient, BreakerState, GrpcChannels, RetryPolicy, Timeouts, user_message
from hub.client.grpc_channels import grpc_target
from hub.errors import (
    AgentBusyError,
    AgentTimeoutError,
    AgentUnreachableError,
    InvalidAgentResponseError,
    NoSupportedInterfaceError,
    RemoteRpcError,
)
from hub.protocol.grpc import a2a_pb2 as pb
from hub.protocol.trace import CallScope, use_scope
from tests.client.grpc_scripted import ScriptedGrpc, abort, reply, scripted_grpc

pytestmark = pytest.mark.anyio

SECRET = "s3cr3t-db-password-7f2c"
DONE = pb.Task(
    id="t1", context_id="c1", status=pb.TaskStatus(state=pb.TaskState.TASK_STATE_COMPLETED)
).SerializeToString()
FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.01)


@pytest.fixture
async def scripted() -> AsyncIterator[ScriptedGrpc]:
    async with scripted_grpc() as server:
        yield server


@pytest.fixture
async def channels() -> AsyncIterator[GrpcChannels]:
    pool = GrpcChannels()
    yield pool
    await pool.aclose()


def client_for(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient, **options: object
) -> A2AClient:
    return A2AClient(
        scripted.card(),
        http=http,
        agent_name="grpc-partner",
        channels=channels,
        retry=FAST,
        **options,  # type: ignore[arg-type]
    )


async def test_an_a2a_error_keeps_its_code_from_the_error_info_reason(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    scripted.routes["GetTask"] = abort(
        grpc.StatusCode.NOT_FOUND, "task t9 was not found", reason="TASK_NOT_FOUND"
    )
    client = client_for(scripted, channels, http)

    with anyio.fail_after(10), pytest.raises(RemoteRpcError) as caught:
        await client.get_task("t9")

    assert caught.value.code == -32001
    assert str(caught.value) == (
        "agent 'grpc-partner': GetTask failed: task t9 was not found (TASK_NOT_FOUND)"
    )
    assert client.breaker.state is BreakerState.CLOSED
    assert len(scripted.calls) == 1  # a refusal is not retried


async def test_an_internal_failure_hides_the_partners_words_and_counts_for_the_breaker(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    scripted.routes["SendMessage"] = abort(
        grpc.StatusCode.INTERNAL, f"database password={SECRET} refused"
    )
    client = client_for(scripted, channels, http)

    with anyio.fail_after(10), pytest.raises(RemoteRpcError) as caught:
        await client.send(user_message("hello"))

    assert caught.value.code == 500
    assert SECRET not in str(caught.value)
    assert str(caught.value) == (
        "agent 'grpc-partner': SendMessage failed with an internal error (INTERNAL)"
    )
    assert client.breaker.snapshot().consecutive_failures == 1


async def test_unimplemented_is_an_unsupported_operation(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    client = client_for(scripted, channels, http)

    with anyio.fail_after(10), pytest.raises(RemoteRpcError) as caught:
        await client.list_tasks()

    assert caught.value.code == -32004
    assert client.breaker.state is BreakerState.CLOSED


async def test_unavailable_from_the_partner_is_busy_and_retried_for_reads_after_its_wait(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    busy = abort(grpc.StatusCode.UNAVAILABLE, "overloaded", reason="PARTNER_BUSY", retry_after=0)
    answers = iter([busy, reply(DONE)])
    scripted.routes["GetTask"] = lambda request, context: next(answers)(request, context)
    scripted.routes["SendMessage"] = busy
    client = client_for(scripted, channels, http)

    with anyio.fail_after(10):
        task = await client.get_task("t1")
        with pytest.raises(AgentBusyError) as caught:
            await client.send(user_message("hello"))

    assert task.id == "t1"
    assert caught.value.retry_after == 0
    assert [rpc for rpc, _ in scripted.calls] == ["GetTask", "GetTask", "SendMessage"]


async def test_bytes_that_are_not_the_answer_are_an_invalid_response(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    scripted.routes["GetTask"] = reply(b"\xff\xff\xff" + SECRET.encode())
    client = client_for(scripted, channels, http)

    with anyio.fail_after(10), pytest.raises(InvalidAgentResponseError) as caught:
        await client.get_task("t1")

    assert str(caught.value).startswith("agent 'grpc-partner' answered something that is not A2A")
    assert SECRET not in str(caught.value)


async def test_a_slow_partner_times_out_and_send_is_not_resent(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    scripted.routes["SendMessage"] = reply(DONE, delay=5)
    client = client_for(scripted, channels, http, timeouts=Timeouts(connect=2, read=0.3))

    with anyio.fail_after(10), pytest.raises(AgentTimeoutError) as caught:
        await client.send(user_message("hello"))

    assert "did not answer in time" in str(caught.value)
    assert len(scripted.calls) == 1


async def test_a_refused_port_is_unreachable_and_opens_the_breaker(
    channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = ScriptedGrpc(target=f"127.0.0.1:{port}")
    client = A2AClient(closed.card(), http=http, agent_name="gone", channels=channels, retry=FAST)

    for _ in range(5):
        with anyio.fail_after(10), pytest.raises(AgentUnreachableError) as caught:
            await client.get_task("t1")

    assert str(caught.value) == "agent 'gone' is unreachable"
    assert client.breaker.state is BreakerState.OPEN


async def test_headers_travel_as_metadata_with_the_version_and_the_callers_trace(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    scripted.routes["GetTask"] = reply(DONE)
    headers = {"Authorization": f"Bearer {SECRET}", "X-Team": "blue"}
    client = client_for(scripted, channels, http, headers=headers)
    scope = CallScope.new()

    with anyio.fail_after(10), use_scope(scope):
        await client.get_task("t1")
        await client.get_task("t1")

    (_, metadata), _ = scripted.calls
    assert metadata["authorization"] == f"Bearer {SECRET}"
    assert metadata["x-team"] == "blue"
    assert metadata["a2a-version"] == "1.0"
    assert metadata["traceparent"].split("-")[1] == scope.trace_id
    assert len(channels) == 1  # both calls on one channel


async def test_one_channel_per_target_whatever_the_clients(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    scripted.routes["GetTask"] = reply(DONE)
    first = client_for(scripted, channels, http)
    second = A2AClient(scripted.card(url=scripted.target), http=http, channels=channels, tls=False)

    with anyio.fail_after(10):
        await first.get_task("t1")
        await second.get_task("t1")

    assert len(channels) == 1


@pytest.mark.parametrize(
    ("url", "tls", "expected"),
    [
        ("127.0.0.1:50051", False, ("127.0.0.1:50051", False)),
        ("127.0.0.1:50051", None, ("127.0.0.1:50051", True)),
        ("grpcs://agent.example.com:443", False, ("agent.example.com:443", True)),
        ("https://agent.example.com:8443/a2a", False, ("agent.example.com:8443", True)),
        ("grpc://[::1]:50051", True, ("[::1]:50051", False)),
    ],
)
def test_a_grpc_interface_url_gives_its_target_and_whether_it_is_encrypted(
    url: str, tls: bool | None, expected: tuple[str, bool]
) -> None:
    assert grpc_target(url, tls=tls) == expected


@pytest.mark.parametrize("url", ["agent.example.com", "ftp://agent.example.com:21", "x:port"])
async def test_a_grpc_interface_url_that_is_not_host_port_is_refused_clearly(
    url: str, http: httpx.AsyncClient
) -> None:
    scripted = ScriptedGrpc(target="unused")

    with pytest.raises(NoSupportedInterfaceError) as refused:
        A2AClient(scripted.card(url=url), http=http, agent_name="odd")

    assert str(refused.value).startswith("agent 'odd' offers a gRPC interface URL")
    assert str(refused.value).endswith("a gRPC interface URL is host:port")


async def test_the_partner_learns_the_calls_deadline_from_the_timeouts_and_the_caller(
    scripted: ScriptedGrpc, channels: GrpcChannels, http: httpx.AsyncClient
) -> None:
    scripted.routes["GetTask"] = reply(DONE)
    client = client_for(scripted, channels, http, timeouts=Timeouts(connect=2, read=30))

    with anyio.fail_after(10):
        await client.get_task("t1")
        with use_scope(CallScope.new(timeout=5)):
            await client.get_task("t1")

    own, callers = scripted.deadlines
    assert own is not None
    assert 25 < own <= 33  # connect + read, which gRPC rounds up
    assert callers is not None
    assert 2 < callers <= 6  # the caller's time left
