"""A local skill calling a partner through `ctx.agents`, over real sockets: the answer comes
back, and the caller's trace and deadline travel with the call."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.protocol import Task, TaskState
from hub.protocol.trace import DEADLINE_HEADER
from hub.registry import Registry
from hub.skills import SkillContext, skill
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.partners import WAIT, sdk_jsonrpc
from tests.tools.agents import HeaderRecorder, registry_file

pytestmark = pytest.mark.anyio

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-01$")


@skill(id="relay", description="asks partner 'echoer' and returns its answer")
async def relay(ctx: SkillContext) -> str:
    result = await ctx.agents["echoer"].call(message=ctx.text)
    return f"echoer said: {result.text}"


def _hub(registry: Registry, url: str) -> Litestar:
    settings = Settings(
        server=ServerSettings(public_url=url),
        store=StoreSettings(kind="memory"),
        default_skill="relay",
    )
    return create_app(
        settings, store=MemoryTaskStore(), skills={"relay": relay}, partners=Partners(registry)
    )


@pytest.fixture
async def recorded_partner() -> AsyncIterator[tuple[str, HeaderRecorder]]:
    recorder: HeaderRecorder | None = None

    def build(url: str) -> HeaderRecorder:
        nonlocal recorder
        recorder = HeaderRecorder(sdk_jsonrpc(url))
        return recorder

    async with serve_on_loopback(build) as url:
        assert recorder is not None
        yield url, recorder


async def _ask_hub(
    registry: Registry,
    text: str,
    headers: dict[str, str],
    *,
    took: list[float] | None = None,
    then: Callable[[], Awaitable[object]] | None = None,
) -> Task:
    """The hub's answer to `text`; `took`, when given, gets the seconds the request took (the
    hub's start and stop, slow on a busy machine, left out); `then`, when given, is awaited
    before the hub stops."""
    async with (
        serve_on_loopback(lambda url: _hub(registry, url)) as hub_url,
        httpx.AsyncClient(headers=headers) as http,
    ):
        client = await A2AClient.from_url(hub_url, http=http)
        started = anyio.current_time()
        with anyio.fail_after(15):
            reply = await client.send(user_message(text))
        if took is not None:
            took.append(anyio.current_time() - started)
        if then is not None:
            with anyio.fail_after(15):
                await then()
    assert isinstance(reply, Task)
    return reply


async def test_a_skill_reaches_a_partner_with_the_callers_trace(
    recorded_partner: tuple[str, HeaderRecorder], tmp_path: Path
) -> None:
    url, recorder = recorded_partner
    registry = registry_file(tmp_path / "agents.yaml", {"echoer": url})
    inbound = f"00-{TRACE_ID}-00f067aa0ba902b7-01"

    task = await _ask_hub(registry, "hello", {"traceparent": inbound})

    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts
    assert task.artifacts[0].parts[0].text == "echoer said: hello"
    # The first request is the card read when the hub opened, before any caller: the
    # skill's calls come after it.
    sent = [h["traceparent"] for h in recorder.headers[1:] if "traceparent" in h]
    assert sent, "the partner received no traceparent"
    for value in sent:
        match = TRACEPARENT.match(value)
        assert match is not None, value
        assert match.group(1) == TRACE_ID
        assert match.group(2) != "00f067aa0ba902b7"


async def test_a_call_without_a_trace_starts_one_per_task(
    recorded_partner: tuple[str, HeaderRecorder], tmp_path: Path
) -> None:
    url, recorder = recorded_partner
    registry = registry_file(tmp_path / "agents.yaml", {"echoer": url})

    await _ask_hub(registry, "hello", {})

    traces = {TRACEPARENT.match(h["traceparent"]).group(1) for h in recorder.headers[1:]}  # type: ignore[union-attr]
    assert len(traces) == 1, "every call made for one task shares its trace id"


async def test_the_callers_deadline_bounds_the_partner_call(
    recorded_partner: tuple[str, HeaderRecorder], tmp_path: Path
) -> None:
    url, recorder = recorded_partner
    registry = registry_file(tmp_path / "agents.yaml", {"echoer": url})

    took: list[float] = []
    # The card read, the message, and the cancel of the partner task the hub gave up on.
    task = await _ask_hub(
        registry, WAIT, {DEADLINE_HEADER: "0.5"}, took=took, then=lambda: recorder.requests(3)
    )
    (elapsed,) = took

    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert "echoer" in task.status.message.text()
    assert "deadline" in task.status.message.text()
    assert elapsed < 5
    _, message, cancel = recorder.headers[:3]
    assert 0 < float(message[DEADLINE_HEADER.lower()]) <= 0.5
    # The cancel goes out after the caller's time ran out: it carries no expired deadline
    # (which would leave the partner no time to stop its task), and keeps the trace.
    assert DEADLINE_HEADER.lower() not in cancel
    assert TRACEPARENT.match(cancel["traceparent"]).group(1) == message["traceparent"][3:35]  # type: ignore[union-attr]
