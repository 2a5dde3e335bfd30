"""Federation directives (`metadata.swarmKind`) answered by a hub over A2A."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.errors import InvalidParamsError, RemoteRpcError
from hub.protocol import Task, TaskState
from hub.registry import load_registry
from hub.skills.echo import echo
from hub.skills.federation import federation
from hub.testing import serve_hub, serve_on_loopback
from tests.client.partners import sdk_jsonrpc

pytestmark = pytest.mark.anyio


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[A2AClient]:
    async with serve_on_loopback(sdk_jsonrpc) as partner_url:
        agents = tmp_path / "agents.yaml"
        agents.write_text(
            f"version: 1\nagents:\n  - name: echoer\n    url: {partner_url}\n    tags: [echo]\n"
        )

        served = serve_hub(skills=[echo, federation], partners=load_registry(agents))
        async with served as running, httpx.AsyncClient() as http:
            yield await A2AClient.from_url(running.url, http=http)


async def _directive(hub: A2AClient, kind: str, text: str = "hi", **extra: object) -> Task:
    with anyio.fail_after(15):
        reply = await hub.send(
            user_message(text), metadata={"skill": "federation", "swarmKind": kind, **extra}
        )
    assert isinstance(reply, Task)
    return reply


async def test_query_resources_lists_skills_and_partners_with_their_health(
    hub: A2AClient,
) -> None:
    task = await _directive(hub, "query_resources")

    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    report = task.artifacts[0].parts[0].data
    assert report["skills"] == ["echo", "federation"]
    assert report["partners"] == [
        {
            "name": "echoer",
            "tags": ["echo"],
            "breaker": "closed",
            "calls": 0,
            "errorRate": 0.0,
            "latency": None,
        }
    ]


async def test_execute_task_runs_a_named_local_skill(hub: A2AClient) -> None:
    task = await _directive(hub, "execute_task", "run me", target="echo")

    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    assert task.artifacts[0].parts[0].text == "run me"


async def test_execute_task_of_an_unknown_skill_names_the_served_ones(hub: A2AClient) -> None:
    task = await _directive(hub, "execute_task", target="paint")

    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert "no local skill 'paint' (served: echo)" in task.status.message.text()


async def test_forward_message_passes_it_to_the_named_partner(hub: A2AClient) -> None:
    task = await _directive(hub, "forward_message", "over there", agent="echoer")

    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    assert task.artifacts[0].parts[0].text == "over there"
    assert task.artifacts[0].metadata == {"agent": "echoer"}


async def test_sync_state_gives_the_partner_list(hub: A2AClient) -> None:
    task = await _directive(hub, "sync_state")

    assert task.artifacts is not None
    partners = task.artifacts[0].parts[0].data["partners"]
    assert [(p["name"], p["tags"]) for p in partners] == [("echoer", ["echo"])]
    assert partners[0]["url"].startswith("http://127.0.0.1:")


async def test_an_unknown_directive_is_refused_naming_the_served_ones(hub: A2AClient) -> None:
    task = await _directive(hub, "teleport")

    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert "query_resources, execute_task, forward_message, sync_state" in (
        task.status.message.text()
    )


async def test_a_directive_reaches_the_federation_skill_without_naming_it(
    hub: A2AClient,
) -> None:
    with anyio.fail_after(15):
        reply = await hub.send(user_message("hi"), metadata={"swarmKind": "sync_state"})

    assert isinstance(reply, Task)
    assert reply.status.state is TaskState.COMPLETED
    assert reply.artifacts is not None
    assert reply.artifacts[0].parts[0].data["partners"][0]["name"] == "echoer"


async def test_a_directive_to_a_hub_without_the_federation_skill_is_refused() -> None:
    async with serve_hub(skills=[echo]) as running, httpx.AsyncClient() as http:
        hub = await A2AClient.from_url(running.url, http=http)
        with anyio.fail_after(15), pytest.raises(RemoteRpcError) as refused:
            await hub.send(user_message("hi"), metadata={"swarmKind": "spawn_agent"})
        listed = await hub.list_tasks()

    assert refused.value.code == InvalidParamsError.code
    assert "federation" in str(refused.value)
    assert listed.tasks == []


@pytest.mark.parametrize("kind", ["query_resources", "execute_task"])
async def test_a_directive_in_the_messages_metadata_is_read_there(
    hub: A2AClient, kind: str
) -> None:
    message = user_message("run me")
    message.metadata = {"swarmKind": kind, "target": "echo"}
    with anyio.fail_after(15):
        reply = await hub.send(message)

    assert isinstance(reply, Task)
    assert reply.status.state is TaskState.COMPLETED, reply.status
    assert reply.artifacts is not None
    part = reply.artifacts[0].parts[0]
    if kind == "query_resources":
        assert part.data["skills"] == ["echo", "federation"]
    else:
        assert part.text == "run me"
