"""Task observers and the `on_task` hook: what the push notifier builds on."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import anyio
import pytest

from hub.config import LimitSettings
from hub.errors import InvalidParamsError
from hub.protocol import Message, Part, Role, SendMessageRequest, Task, TaskState
from hub.skills import SkillContext, skill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.tasks import TaskManager

pytestmark = pytest.mark.anyio


@skill(id="interview", description="asks for a name, then greets")
async def interview(ctx: SkillContext) -> str:
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}!"


def request(
    text: str, *, task_id: str | None = None, skill_id: str | None = None
) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=uuid.uuid4().hex, role=Role.USER, parts=[Part(text=text)], task_id=task_id
        ),
        metadata={"skill": skill_id} if skill_id else None,
    )


@pytest.fixture
async def manager() -> AsyncIterator[TaskManager]:
    store = MemoryTaskStore()
    await store.open()
    skills = {s.skill_id: s for s in (echo, interview)}
    async with TaskManager(
        store=store, executors=skills, default_skill="echo", limits=LimitSettings()
    ) as running:
        yield running
    await store.close()


async def test_observers_hear_every_committed_change_in_order_and_a_failing_one_harms_none(
    manager: TaskManager,
) -> None:
    seen: list[tuple[str, TaskState]] = []

    def broken(task: Task) -> None:
        raise RuntimeError("an observer bug")

    manager.observe(broken)
    manager.observe(lambda task: seen.append((task.id, task.status.state)))
    with anyio.fail_after(5):
        parked = await manager.send(request("hi", skill_id="interview"))
        assert isinstance(parked, Task)
        done = await manager.send(request("Ada", task_id=parked.id))
    assert isinstance(done, Task)
    assert done.status.state is TaskState.COMPLETED
    states = [state for task_id, state in seen if task_id == parked.id]
    assert states[-1] is TaskState.COMPLETED
    assert TaskState.INPUT_REQUIRED in states
    assert states.index(TaskState.INPUT_REQUIRED) < len(states) - 1


async def test_on_task_sees_the_task_before_its_first_change_and_can_refuse_a_message(
    manager: TaskManager,
) -> None:
    given: list[tuple[str, TaskState]] = []

    def hook(task: Task) -> None:
        given.append((task.id, task.status.state))

    with anyio.fail_after(5):
        parked = await manager.send(request("hi", skill_id="interview"), on_task=hook)
    assert isinstance(parked, Task)
    assert given == [(parked.id, TaskState.SUBMITTED)]

    def refuse(task: Task) -> None:
        raise InvalidParamsError("refused by the hook")

    with pytest.raises(InvalidParamsError):
        await manager.send(request("Ada", task_id=parked.id), on_task=refuse)
    again = await manager.get(parked.id)
    assert again.status.state is TaskState.INPUT_REQUIRED
    assert len(again.history or []) == 2  # the refused answer left no trace
