"""The caps every swarm is held to (`swarm:` in hub.yaml): too many items, partners or
branches at once, or too long a deadline, are refused before any partner is called; a swarm
that names no deadline ends at `swarm.deadline`; and a swarm's task does not grow by one
history message per branch (every write of the task carries its history)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.config import Settings, SwarmSettings
from hub.errors import InvalidParamsError
from hub.partners import Partners
from hub.protocol import Task, TaskState
from hub.skills.swarm import swarm
from hub.swarm import SwarmSpec, run_swarm
from hub.testing import serve_hub
from tests.swarm.partners import partner_registry, scripted

pytestmark = pytest.mark.anyio

_CAPS = SwarmSettings(max_items=3, max_agents=2, max_concurrency=4, deadline=60)


@asynccontextmanager
async def _swarm_hub(
    tmp_path: Path, limits: SwarmSettings, *, delay: float = 0.0
) -> AsyncIterator[A2AClient]:
    script = {name: (scripted("{text}", delay=delay), ()) for name in ("a", "b", "c")}
    async with (
        partner_registry(tmp_path, script) as (registry, _),
        serve_hub(skills=[swarm], partners=registry, settings=Settings(swarm=limits)) as running,
        httpx.AsyncClient() as http,
    ):
        yield await A2AClient.from_url(running.url, http=http)


@pytest.mark.parametrize(
    ("metadata", "setting", "value"),
    [
        ({"strategy": "map", "agents": ["a"], "items": [1, 2, 3, 4]}, "swarm.max_items", "4"),
        ({"strategy": "broadcast", "agents": ["a", "b", "c"]}, "swarm.max_agents", "3"),
        ({"agents": ["a"], "concurrency": 5}, "swarm.max_concurrency", "5"),
        ({"agents": ["a"], "deadline": 61}, "swarm.deadline", "61"),
    ],
)
async def test_a_swarm_past_a_cap_is_rejected_with_an_invalid_params_error_naming_it(
    tmp_path: Path, metadata: dict[str, Any], setting: str, value: str
) -> None:
    async with _swarm_hub(tmp_path, _CAPS) as hub:
        with anyio.fail_after(30):
            task = await hub.send(user_message("hi"), metadata={"skill": "swarm", **metadata})

    assert isinstance(task, Task)
    assert task.status.state is TaskState.REJECTED
    assert task.status.message is not None
    text = task.status.message.text()
    assert setting in text
    assert value in text
    assert task.status.message.metadata is not None
    error = task.status.message.metadata["a2a-hub/error"]
    assert (error["code"], error["reason"]) == (-32602, "INVALID_PARAMS")
    assert not task.artifacts  # refused before any partner was called


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ({"strategy": "majority", "agents": ["a"]}, "metadata.strategy"),
        ({"strategy": "vote", "agents": ["a", "b"], "quorum": 0}, "metadata.quorum"),
        ({"agents": ["a"], "deadline": -1}, "metadata.deadline"),
    ],
)
async def test_a_swarm_whose_options_do_not_fit_is_rejected_with_an_invalid_params_error(
    tmp_path: Path, metadata: dict[str, Any], field: str
) -> None:
    async with _swarm_hub(tmp_path, SwarmSettings()) as hub:
        with anyio.fail_after(30):
            task = await hub.send(user_message("hi"), metadata={"skill": "swarm", **metadata})

    assert isinstance(task, Task)
    assert task.status.state is TaskState.REJECTED
    assert task.status.message is not None
    assert field in task.status.message.text()
    assert task.status.message.metadata is not None
    error = task.status.message.metadata["a2a-hub/error"]
    assert (error["code"], error["reason"]) == (-32602, "INVALID_PARAMS")
    assert [violation["field"] for violation in error["fieldViolations"]] == [field]
    assert not task.artifacts  # refused before any partner was called


async def test_run_swarm_refuses_more_items_than_the_default_cap(tmp_path: Path) -> None:
    script = {"a": (scripted("{text}"), ())}
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as partners:
        with pytest.raises(InvalidParamsError) as caught:
            await run_swarm(
                partners,
                "x",
                SwarmSpec(
                    strategy="map", agents=("a",), items=list(range(SwarmSettings().max_items + 1))
                ),
            )

    assert caught.value.code == -32602
    assert "swarm.max_items" in caught.value.message


async def test_a_swarm_naming_no_deadline_ends_at_the_configured_one(tmp_path: Path) -> None:
    limits = SwarmSettings(deadline=0.5)
    async with _swarm_hub(tmp_path, limits, delay=3600) as hub:
        with anyio.fail_after(60):
            task = await hub.send(
                user_message("never answered"), metadata={"skill": "swarm", "agents": ["a"]}
            )

    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED
    assert task.artifacts is not None
    report = task.artifacts[0].parts[1].data
    assert report["reason"] == "the swarm did not finish within 0.5 s"
    assert [(b["agent"], b["state"]) for b in report["branches"]] == [("a", "timeout")]


async def test_a_map_reports_each_branch_without_growing_the_task_history(
    tmp_path: Path,
) -> None:
    items = [f"item {i}" for i in range(12)]
    reports: list[str] = []
    metadata = {"skill": "swarm", "strategy": "map", "agents": ["a", "b"], "items": items}
    async with _swarm_hub(tmp_path, SwarmSettings()) as hub:
        with anyio.fail_after(60):
            async with hub.stream(user_message("echo"), metadata=metadata) as events:
                async for event in events:
                    update = event.status_update
                    if update and update.status.message and update.metadata:
                        reports.append(str(update.metadata["state"]))
                    if event.task:
                        task_id = event.task.id
            task = await hub.get_task(task_id)

    assert reports == ["completed"] * len(items)  # every branch is still reported
    assert task.status.state is TaskState.COMPLETED
    # Only the caller's message: a stored task is rewritten whole at each change, so a
    # history message per branch made a swarm's cost grow with the square of its size.
    assert [message.role.value for message in task.history or []] == ["ROLE_USER"]
