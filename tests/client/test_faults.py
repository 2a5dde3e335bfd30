"""Partners that fail, over real sockets: every failure is a hub error naming the partner."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from hub.client import (
    A2AClient,
    BreakerConfig,
    CircuitBreaker,
    RetryPolicy,
    Timeouts,
    build_http_client,
    user_message,
)
from hub.errors import (
    AgentBusyError,
    AgentTimeoutError,
    AgentUnreachableError,
    CircuitOpenError,
    ConnectionLostError,
    InvalidAgentResponseError,
    RemoteRpcError,
)
from hub.protocol import AgentCard, StreamResponse, TaskState
from hub.testing import serve_on_loopback
from tests.client.scripted import (
    ScriptedAgent,
    card_document,
    hang,
    in_turn,
    respond,
    rpc_result,
    sse,
    truncated,
)

pytestmark = pytest.mark.anyio

TASK = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}
DONE = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}
FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.01, max_retry_after=0.05)


@pytest.fixture(params=["aiohttp", "httpx"])
async def http(request: pytest.FixtureRequest) -> AsyncIterator[httpx.AsyncClient]:
    """Both transports: each must turn every failure into the same hub error."""
    if request.param == "httpx":
        async with httpx.AsyncClient() as client:
            yield client
    else:
        async with build_http_client() as client:
            yield client


@pytest.fixture
async def agent() -> AsyncIterator[tuple[ScriptedAgent, str]]:
    scripted = ScriptedAgent()
    async with serve_on_loopback(scripted) as url:
        yield scripted, url


def client_for(url: str, http: httpx.AsyncClient, *, read: float = 5.0) -> A2AClient:
    card = AgentCard.model_validate(card_document(url))
    return A2AClient(
        card, http=http, agent_name="flaky", retry=FAST, timeouts=Timeouts(connect=2, read=read)
    )


async def test_a_refused_connection_is_unreachable(http: httpx.AsyncClient) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = client_for(f"http://127.0.0.1:{port}", http)

    with anyio.fail_after(5), pytest.raises(AgentUnreachableError, match="flaky"):
        await client.send(user_message("hi"))


async def test_repeated_failures_open_the_partners_circuit(http: httpx.AsyncClient) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    card = AgentCard.model_validate(card_document(f"http://127.0.0.1:{port}"))
    breaker = CircuitBreaker("down", BreakerConfig(failure_threshold=2, cool_down=60))
    client = A2AClient(card, http=http, retry=RetryPolicy(attempts=1), breaker=breaker)

    with anyio.fail_after(5):
        for _ in range(2):
            with pytest.raises(AgentUnreachableError):
                await client.get_task("t1")
        with pytest.raises(CircuitOpenError):
            await client.get_task("t1")
    assert breaker.snapshot().consecutive_failures == 2


async def test_a_slow_partner_times_out_and_send_is_not_resent(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["SendMessage"] = hang
    client = client_for(url, http, read=0.2)

    with anyio.fail_after(5), pytest.raises(AgentTimeoutError, match="flaky"):
        await client.send(user_message("hi"))
    assert scripted.calls["SendMessage"] == 1


async def test_a_call_past_its_deadline_times_out(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["GetTask"] = hang
    card = AgentCard.model_validate(card_document(url))
    client = A2AClient(card, http=http, timeouts=Timeouts(read=30, deadline=0.2))

    with anyio.fail_after(5), pytest.raises(AgentTimeoutError, match="deadline"):
        await client.get_task("t1")


async def test_an_http_500_page_is_a_remote_error_with_the_status(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["GetTask"] = respond(500, b"<html><h1>Oops</h1></html>", "text/html")
    client = client_for(url, http)

    with anyio.fail_after(5), pytest.raises(RemoteRpcError) as caught:
        await client.get_task("t1")
    assert caught.value.code == 500


async def test_503_with_retry_after_is_retried_for_get_task(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    busy = respond(503, b"busy", "text/plain", headers=[("retry-after", "0")])
    scripted.routes["GetTask"] = in_turn(busy, rpc_result(DONE))
    client = client_for(url, http)

    with anyio.fail_after(5):
        task = await client.get_task("t1")

    assert task.status.state is TaskState.COMPLETED
    assert scripted.calls["GetTask"] == 2


async def test_503_with_retry_after_is_not_retried_for_send_message(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    busy = respond(503, b"busy", "text/plain", headers=[("retry-after", "0")])
    scripted.routes["SendMessage"] = in_turn(busy, rpc_result({"task": DONE}))
    client = client_for(url, http)

    with anyio.fail_after(5), pytest.raises(AgentBusyError) as caught:
        await client.send(user_message("hi"))

    assert (caught.value.code, caught.value.retry_after) == (503, 0.0)
    assert scripted.calls["SendMessage"] == 1


async def test_a_remote_jsonrpc_error_keeps_its_code_and_data(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    error = {"code": -32001, "message": "Task not found", "data": [{"taskId": "t9"}]}
    scripted.routes["GetTask"] = respond(
        200, json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode()
    )
    client = client_for(url, http)

    with anyio.fail_after(5), pytest.raises(RemoteRpcError) as caught:
        await client.get_task("t9")
    assert (caught.value.code, caught.value.data) == (-32001, [{"taskId": "t9"}])
    assert scripted.calls["GetTask"] == 1


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"{not json", "application/json"),
        (b"<html><body>Welcome to nginx</body></html>", "text/html"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": {"hello": "world"}}', "application/json"),
        (b'{"hello": "world"}', "application/json"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": {}}', "text/plain"),
    ],
    ids=["invalid-json", "html-page", "non-a2a-result", "not-jsonrpc", "wrong-content-type"],
)
async def test_a_garbage_answer_is_an_invalid_response_naming_the_partner(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient, body: bytes, content_type: str
) -> None:
    scripted, url = agent
    scripted.routes["SendMessage"] = respond(200, body, content_type)
    client = client_for(url, http)

    with anyio.fail_after(5), pytest.raises(InvalidAgentResponseError) as caught:
        await client.send(user_message("hi"))
    assert caught.value.metadata == {"agent": "flaky"}


async def test_a_truncated_answer_is_a_lost_connection_and_not_resent(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["SendMessage"] = truncated(b'{"jsonrpc": "2.0", "id": 1, "res')
    client = client_for(url, http)

    with anyio.fail_after(5), pytest.raises(ConnectionLostError, match="flaky"):
        await client.send(user_message("hi"))
    assert scripted.calls["SendMessage"] == 1


async def test_a_stream_answered_with_an_html_page_is_invalid(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["SendStreamingMessage"] = respond(200, b"<html>hi</html>", "text/html")
    client = client_for(url, http)

    with anyio.fail_after(5), pytest.raises(InvalidAgentResponseError):
        async with client.stream(user_message("hi")) as events:
            _ = [event async for event in events]


async def test_a_stream_cut_before_naming_a_task_cannot_resume(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["SendStreamingMessage"] = sse([], then="reset")
    client = client_for(url, http)

    with anyio.fail_after(5), pytest.raises(ConnectionLostError):
        async with client.stream(user_message("hi")) as events:
            _ = [event async for event in events]
    assert scripted.calls["SubscribeToTask"] == 0


def _status(state: str) -> dict[str, object]:
    return {"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": state}}}


def _chunk(text: str, *, append: bool) -> dict[str, object]:
    artifact = {"artifactId": "a1", "parts": [{"text": text}]}
    return {
        "artifactUpdate": {
            "taskId": "t1",
            "contextId": "c1",
            "artifact": artifact,
            "append": append,
        }
    }


def _snapshot(*texts: str) -> dict[str, object]:
    artifact = {"artifactId": "a1", "parts": [{"text": text} for text in texts]}
    return {"task": {**TASK, "artifacts": [artifact]}}


async def test_a_dropped_stream_resumes_without_losing_or_repeating_an_event(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    working = _status("TASK_STATE_WORKING")
    scripted.routes["SendStreamingMessage"] = sse(
        [{"task": TASK}, working, _chunk("a", append=False), _chunk("b", append=True)],
        then="reset",
    )
    scripted.routes["SubscribeToTask"] = in_turn(
        # "c" was lost in the cut and only shows in the snapshot; "working" is sent again.
        sse([_snapshot("a", "b", "c"), working, _chunk("d", append=True)], then="close"),
        sse([_snapshot("a", "b", "c", "d"), _status("TASK_STATE_COMPLETED")], then="close"),
    )
    assert await _streamed(url, http) == [
        "task TASK_STATE_WORKING",
        "status TASK_STATE_WORKING",
        "artifact a",
        "artifact +b",
        "artifact +c",
        "artifact +d",
        "status TASK_STATE_COMPLETED",
    ]
    assert scripted.calls["SubscribeToTask"] == 2


async def test_a_resumed_stream_adds_only_the_text_a_joined_snapshot_has_more(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    # A partner that keeps appended text joined in one part (as the hub does): its snapshot
    # after the cut holds "Hello, wor", of which the caller has had "Hello".
    scripted, url = agent
    scripted.routes["SendStreamingMessage"] = sse(
        [{"task": TASK}, _chunk("Hel", append=False), _chunk("lo", append=True)], then="reset"
    )
    scripted.routes["SubscribeToTask"] = sse(
        [_snapshot("Hello, wor"), _chunk("ld!", append=True), _status("TASK_STATE_COMPLETED")],
        then="close",
    )
    assert await _streamed(url, http) == [
        "task TASK_STATE_WORKING",
        "artifact Hel",
        "artifact +lo",
        "artifact +, wor",
        "artifact +ld!",
        "status TASK_STATE_COMPLETED",
    ]


async def test_a_chunk_that_repeats_the_one_before_is_not_dropped(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    chunks = [_chunk("ha", append=False), _chunk("ha", append=True), _chunk("ha", append=True)]
    scripted.routes["SendStreamingMessage"] = sse(
        [{"task": TASK}, *chunks, _status("TASK_STATE_COMPLETED")], then="close"
    )
    assert await _streamed(url, http) == [
        "task TASK_STATE_WORKING",
        "artifact ha",
        "artifact +ha",
        "artifact +ha",
        "status TASK_STATE_COMPLETED",
    ]


async def test_a_stream_whose_task_ended_while_cut_is_finished_from_get_task(
    agent: tuple[ScriptedAgent, str], http: httpx.AsyncClient
) -> None:
    scripted, url = agent
    scripted.routes["SendStreamingMessage"] = sse([{"task": TASK}], then="close")
    refused = {"code": -32004, "message": "task is in a terminal state"}
    scripted.routes["SubscribeToTask"] = respond(
        200, json.dumps({"jsonrpc": "2.0", "id": 1, "error": refused}).encode()
    )
    scripted.routes["GetTask"] = rpc_result(DONE)
    assert await _streamed(url, http) == [
        "task TASK_STATE_WORKING",
        "status TASK_STATE_COMPLETED",
    ]


async def _streamed(url: str, http: httpx.AsyncClient) -> list[str]:
    """Every event one streamed call yields, each described in a line."""
    client = client_for(url, http)
    with anyio.fail_after(10):
        async with client.stream(user_message("hi")) as stream:
            return [_describe(event) async for event in stream]


def _describe(event: StreamResponse) -> str:
    if event.task is not None:
        return f"task {event.task.status.state.value}"
    if event.status_update is not None:
        return f"status {event.status_update.status.state.value}"
    assert event.artifact_update is not None
    chunk = event.artifact_update
    texts = "".join(part.text or "" for part in chunk.artifact.parts)
    return f"artifact {'+' if chunk.append else ''}{texts}"
