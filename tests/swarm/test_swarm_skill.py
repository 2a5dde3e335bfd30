"""The `swarm` skill and `ctx.swarm` inside a hub, over A2A: branch progress streams as the
hub task's updates, the result artifact shows every branch."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.protocol import Task, TaskState
from hub.skills import SkillContext, skill
from hub.skills.swarm import swarm
from hub.testing import serve_hub
from tests.swarm.partners import partner_registry, scripted

pytestmark = pytest.mark.anyio


@skill(id="review", description="asks reviewers and keeps the majority verdict")
async def review(ctx: SkillContext) -> str:
    result = await ctx.swarm(ctx.text, strategy="vote", tag="review", quorum=2)
    if not result.ok:
        raise ctx.fail(result.reason)
    return f"verdict: {result.answer}"


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[A2AClient]:
    script = {
        "r1": (scripted("approve"), ("review",)),
        "r2": (scripted("Approve."), ("review",)),
        "r3": (scripted("reject"), ("review",)),
        "fr": (scripted("bonjour", delay=0.05), ("translate",)),
        "de": (scripted("guten tag", delay=3), ("translate",)),
    }
    async with (
        partner_registry(tmp_path, script) as (registry, _),
        serve_hub(skills=[swarm, review], partners=registry) as running,
        httpx.AsyncClient() as http,
    ):
        yield await A2AClient.from_url(running.url, http=http)


async def test_a_skill_votes_through_ctx_swarm(hub: A2AClient) -> None:
    with anyio.fail_after(15):
        task = await hub.send(user_message("ship it?"), metadata={"skill": "review"})

    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    assert task.artifacts[0].parts[0].text == "verdict: approve"


async def test_the_swarm_skill_races_by_tag_and_streams_each_branch(hub: A2AClient) -> None:
    progress: list[str] = []
    with anyio.fail_after(15):
        async with hub.stream(
            user_message("good morning"),
            metadata={"skill": "swarm", "strategy": "race", "tags": ["translate"]},
        ) as events:
            async for event in events:
                if event.status_update and event.status_update.status.message:
                    progress.append(event.status_update.status.message.text())
                if event.artifact_update:
                    artifact = event.artifact_update.artifact

    assert artifact.parts[0].text == "bonjour"
    report = artifact.parts[1].data
    assert report["strategy"] == "race"
    assert {b["agent"]: b["state"] for b in report["branches"]} == {
        "fr": "completed",
        "de": "canceled",
    }
    assert "fr: completed (bonjour)" in progress


async def test_a_swarm_without_an_answer_fails_and_still_shows_its_branches(
    hub: A2AClient,
) -> None:
    with anyio.fail_after(15):
        task = await hub.send(
            user_message("?"),
            metadata={"skill": "swarm", "strategy": "vote", "agents": ["r1", "r3"], "quorum": 2},
        )

    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert "no quorum" in task.status.message.text()
    assert task.artifacts is not None
    assert len(task.artifacts[0].parts[1].data["branches"]) == 2


@pytest.mark.parametrize("where", ["request", "message"])
async def test_the_swarm_takes_the_agents_named_in_the_request_or_the_message(
    hub: A2AClient, where: str
) -> None:
    metadata = {"skill": "swarm", "strategy": "broadcast", "agents": ["fr", "r1"]}
    message = user_message("hello")
    if where == "message":
        message = message.model_copy(update={"metadata": metadata})
    with anyio.fail_after(15):
        task = await hub.send(message, metadata=None if where == "message" else metadata)

    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    report = task.artifacts[0].parts[1].data
    assert report["answers"] == ["bonjour", "approve"]
    assert [(b["agent"], b["state"]) for b in report["branches"]] == [
        ("fr", "completed"),
        ("r1", "completed"),
    ]
