"""`delegate` goes to the partner the caller names, whether `metadata.agent` is in the
request's metadata or in the message's, over blocking and streaming calls; a named partner
that cannot take the task fails it, naming that partner, and no other partner is asked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.protocol import JsonObject, Message, Task, TaskState
from hub.registry import load_registry
from hub.skills import SkillContext, skill
from hub.skills.delegate import delegate
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc

pytestmark = pytest.mark.anyio


@skill(id="interview", description="asks for a name")
async def interview(ctx: SkillContext) -> str:
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}!"


def _settings(url: str, default: str) -> Settings:
    return Settings(
        server=ServerSettings(public_url=url),
        store=StoreSettings(kind="memory"),
        default_skill=default,
    )


@skill(id="refuse", description="rejects every task")
async def refuse(ctx: SkillContext) -> None:
    await ctx.finish(TaskState.REJECTED, "not today")


def _greeter(url: str) -> Litestar:
    return create_app(
        _settings(url, "interview"), store=MemoryTaskStore(), skills={"interview": interview}
    )


def _refuser(url: str) -> Litestar:
    return create_app(_settings(url, "refuse"), store=MemoryTaskStore(), skills={"refuse": refuse})


@dataclass
class Setup:
    hub: A2AClient
    echoer: A2AClient
    """The partner the router would choose when no partner is named (first by name)."""


@pytest.fixture
async def setup(tmp_path: Path, refusing_port: int) -> AsyncIterator[Setup]:
    async with (
        serve_on_loopback(sdk_jsonrpc) as echo_url,
        serve_on_loopback(_greeter) as greeter_url,
        serve_on_loopback(_refuser) as refuser_url,
    ):
        path = tmp_path / "agents.yaml"
        path.write_text(
            "version: 1\nagents:\n"
            f"  - name: echoer\n    url: {echo_url}\n"
            f"  - name: greeter\n    url: {greeter_url}\n"
            f"  - name: gone\n    url: http://127.0.0.1:{refusing_port}\n"
            f"  - name: refuser\n    url: {refuser_url}\n",
            encoding="utf-8",
        )

        def build(url: str) -> Litestar:
            return create_app(
                _settings(url, "delegate"),
                store=MemoryTaskStore(),
                skills={"delegate": delegate},
                partners=Partners(load_registry(path)),
            )

        async with serve_on_loopback(build) as url, httpx.AsyncClient() as http:
            yield Setup(
                hub=await A2AClient.from_url(url, http=http),
                echoer=await A2AClient.from_url(echo_url, http=http),
            )


def _request(text: str, where: str, metadata: JsonObject) -> tuple[Message, JsonObject | None]:
    """The message and the request metadata, with `metadata` in the place `where` says."""
    message = user_message(text)
    if where == "message":
        return message.model_copy(update={"metadata": metadata}), None
    return message, metadata


async def _blocking(hub: A2AClient, text: str, where: str, metadata: JsonObject) -> Task:
    message, request_metadata = _request(text, where, metadata)
    with anyio.fail_after(15):
        reply = await hub.send(message, metadata=request_metadata)
    assert isinstance(reply, Task)
    return reply


async def _streamed(hub: A2AClient, text: str, where: str, metadata: JsonObject) -> Task:
    """The task as its stream left it, read back once the stream has ended."""
    message, request_metadata = _request(text, where, metadata)
    with anyio.fail_after(15):
        async with hub.stream(message, metadata=request_metadata) as events:
            async for event in events:
                if event.task is not None:
                    task_id = event.task.id
        return await hub.get_task(task_id)


SEND = {"blocking": _blocking, "streaming": _streamed}


@pytest.mark.parametrize("where", ["request", "message"])
@pytest.mark.parametrize("call", list(SEND))
async def test_the_named_partner_takes_the_task(setup: Setup, where: str, call: str) -> None:
    task = await SEND[call](setup.hub, "hi", where, {"agent": "greeter"})

    assert task.status.state is TaskState.INPUT_REQUIRED
    assert task.status.message is not None
    assert task.status.message.text() == "What is your name?"
    assert (await setup.echoer.list_tasks()).tasks == []


@pytest.mark.parametrize("where", ["request", "message"])
@pytest.mark.parametrize("call", list(SEND))
@pytest.mark.parametrize("agent", ["gone", "refuser"])
async def test_a_named_partner_that_is_down_or_refuses_fails_the_task_and_no_other_is_asked(
    setup: Setup, where: str, call: str, agent: str
) -> None:
    task = await SEND[call](setup.hub, "hi", where, {"agent": agent})

    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert f"'{agent}'" in task.status.message.text()
    assert (await setup.echoer.list_tasks()).tasks == []


@pytest.mark.parametrize("where", ["request", "message"])
async def test_a_named_partner_that_is_unknown_fails_the_task(setup: Setup, where: str) -> None:
    task = await _blocking(setup.hub, "hi", where, {"agent": "nobody"})

    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert "'nobody'" in task.status.message.text()
    assert (await setup.echoer.list_tasks()).tasks == []
