"""Shared parts of the process-skill tests: the stand-in agent, a task manager, process checks."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from hub.config import LimitSettings, ProcessSkillSettings
from hub.protocol import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from hub.skills import Skill
from hub.skills.echo import echo
from hub.skills.process import ProcessSkill, build_process_skill
from hub.store import MemoryTaskStore, TaskStore
from hub.tasks import TaskManager, TaskStream

AGENT = str(Path(__file__).with_name("agent.py"))


def process_settings(scenario: str, *args: str, **settings: Any) -> ProcessSkillSettings:
    """Settings for a process skill that runs the stand-in agent's `scenario`."""
    fields: dict[str, Any] = {
        "id": scenario,
        "description": f"the stand-in agent's {scenario} scenario",
        "command": [sys.executable, AGENT, scenario, *args],
        "grace": 2,
        **settings,
    }
    return ProcessSkillSettings.model_validate(fields)


def process_skill(scenario: str, *args: str, **settings: Any) -> ProcessSkill:
    return build_process_skill(process_settings(scenario, *args, **settings))


@asynccontextmanager
async def running_hub(*skills: Skill, store: TaskStore | None = None) -> AsyncIterator[TaskManager]:
    """A TaskManager serving `skills` (and echo, the default), with its store open."""
    store = store or MemoryTaskStore()
    executors = {item.skill_id: item for item in (echo, *skills)}
    await store.open()
    try:
        async with TaskManager(
            store=store, executors=executors, default_skill="echo", limits=LimitSettings()
        ) as manager:
            yield manager
    finally:
        await store.close()


def request(
    text: str = "go",
    *,
    skill: str | None = None,
    task_id: str | None = None,
    parts: list[Part] | None = None,
    immediately: bool = False,
) -> SendMessageRequest:
    message = Message(
        message_id=uuid.uuid4().hex,
        role=Role.USER,
        parts=parts or [Part(text=text)],
        task_id=task_id,
    )
    return SendMessageRequest(
        message=message,
        metadata={"skill": skill} if skill else None,
        configuration=SendMessageConfiguration(return_immediately=True) if immediately else None,
    )


async def send(manager: TaskManager, req: SendMessageRequest) -> Task:
    with anyio.fail_after(10):
        task = await manager.send(req)
    assert isinstance(task, Task)
    return task


async def send_once(scenario: str, *args: str, **settings: Any) -> Task:
    """The task one send to the process skill running `scenario` ends in, once the hub that
    served it has stopped."""
    async with running_hub(process_skill(scenario, *args, **settings)) as hub:
        return await send(hub, request(skill=scenario))


async def stream(manager: TaskManager, req: SendMessageRequest) -> list[StreamResponse]:
    """Every event of a streamed send, up to the task's final (or parked) state."""
    with anyio.fail_after(10):
        updates = await manager.stream(req)
        async with updates:
            return [update.event async for update in updates]


async def until_init(updates: TaskStream) -> dict[str, Any]:
    """Read a task's stream up to the agent's `init` event; returns that event's fields."""
    with anyio.fail_after(10):
        async for update in updates:
            status = update.event.status_update
            message = status.status.message if status else None
            if message is not None and (message.metadata or {}).get("processEvent") == "init":
                details: dict[str, Any] = message.metadata["details"]
                return details
    raise AssertionError("the stream ended before the init event")


async def until_state(updates: TaskStream, state: TaskState) -> None:
    """Read a task's stream up to a status update to `state`."""
    with anyio.fail_after(10):
        async for update in updates:
            status = update.event.status_update
            if status is not None and status.status.state is state:
                return
    raise AssertionError(f"the stream ended before {state.value}")


def states(events: list[StreamResponse]) -> list[TaskState]:
    found = [e.task.status.state for e in events if e.task]
    return found + [e.status_update.status.state for e in events if e.status_update]


def artifact_text(task: Task, name: str = "assistant-response") -> str:
    return "".join(
        part.text or "" for a in task.artifacts or [] if a.name == name for part in a.parts
    )


def init_details(task: Task) -> dict[str, Any]:
    """The fields of the agent's `init` event, from the task's status messages."""
    for message in task.history or []:
        metadata = message.metadata or {}
        if metadata.get("processEvent") == "init":
            details: dict[str, Any] = metadata["details"]
            return details
    raise AssertionError("the task has no init status message")


def is_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A killed orphan stays a zombie until its new parent (init) reaps it: it is dead.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def wait_gone(*pids: int) -> None:
    """Wait (bounded) until none of `pids` is a live process."""
    with anyio.fail_after(10):
        while True:
            if all(is_gone(pid) for pid in pids):
                return
            await anyio.sleep(0.01)
