"""The TaskManager with real stores: creating, continuing, canceling and watching tasks."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from hub.config import LimitSettings
from hub.errors import (
    InvalidParamsError,
    LimitExceededError,
    SkillError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from hub.protocol import (
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
    utc_now,
)
from hub.skills import Skill, SkillContext, skill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore, SqliteTaskStore, TaskRecord, TaskStore
from hub.tasks import INTERRUPTED_BY_RESTART, TaskManager

pytestmark = pytest.mark.anyio

S = TaskState


def message(
    text: str = "hello",
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    skill_id: str | None = None,
    parts: list[Part] | None = None,
) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=uuid.uuid4().hex,
            role=Role.USER,
            parts=parts or [Part(text=text)],
            task_id=task_id,
            context_id=context_id,
        ),
        metadata={"skill": skill_id} if skill_id else None,
    )


def immediately(request: SendMessageRequest) -> SendMessageRequest:
    return request.model_copy(
        update={"configuration": SendMessageConfiguration(return_immediately=True)}
    )


class Gate:
    """Lets a test decide when a skill may go on, and see what the skill did."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.canceled = anyio.Event()


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def skills(gate: Gate) -> dict[str, Skill]:
    @skill(id="interview", description="asks twice")
    async def interview(ctx: SkillContext) -> str:
        await ctx.progress("starting")
        name = await ctx.ask("name?")
        colour = await ctx.ask("colour?")
        return f"{name.text()} likes {colour.text()}"

    @skill(id="blocked", description="waits for the test")
    async def blocked(ctx: SkillContext) -> str:
        gate.started.set()
        try:
            await gate.release.wait()
        except anyio.get_cancelled_exc_class():
            gate.canceled.set()
            raise
        return "released"

    @skill(id="broken", description="raises")
    async def broken(ctx: SkillContext) -> str:
        raise RuntimeError("/secret/path exploded")

    @skill(id="refuses", description="fails on purpose")
    async def refuses(ctx: SkillContext) -> str:
        raise SkillError("cannot do that: the input is empty")

    @skill(id="chunks", description="streams three chunks")
    async def chunks(ctx: SkillContext) -> AsyncIterator[str]:
        for word in ("one ", "two ", "three"):
            yield word

    @skill(id="reply", description="answers with a message", reply="message")
    async def reply(ctx: SkillContext) -> str:
        return f"re: {ctx.text}"

    found = [echo, interview, blocked, broken, refuses, chunks, reply]
    return {item.skill_id: item for item in found}


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TaskStore:
    if request.param == "memory":
        return MemoryTaskStore()
    return SqliteTaskStore(tmp_path / "hub.db")


@pytest.fixture
async def manager(store: TaskStore, skills: dict[str, Skill]) -> AsyncIterator[TaskManager]:
    await store.open()
    try:
        async with TaskManager(
            store=store, executors=skills, default_skill="echo", limits=LimitSettings()
        ) as running:
            yield running
    finally:
        await store.close()


def artifact_text(task: Task) -> str:
    return "".join(part.text or "" for a in task.artifacts or [] for part in a.parts)


async def test_blocking_send_returns_the_completed_task_with_its_artifact(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        task = await manager.send(message("ping"))
    assert isinstance(task, Task)
    assert task.status.state is S.COMPLETED
    assert artifact_text(task) == "ping"
    assert task.history is not None
    assert task.history[0].task_id == task.id
    assert task.history[0].context_id == task.context_id


async def test_return_immediately_answers_while_the_skill_is_still_running(
    manager: TaskManager, gate: Gate
) -> None:
    task = await manager.send(immediately(message(skill_id="blocked")))
    assert isinstance(task, Task)
    assert task.status.state in (S.SUBMITTED, S.WORKING)
    assert not gate.release.is_set()
    gate.release.set()
    with anyio.fail_after(5):
        stream = await manager.subscribe(task.id)
        async with stream:
            states = [
                u.event.status_update.status.state async for u in stream if u.event.status_update
            ]
    assert states[-1] is S.COMPLETED


async def test_stream_starts_with_the_task_and_ends_at_completion(manager: TaskManager) -> None:
    with anyio.fail_after(5):
        stream = await manager.stream(message("hi", skill_id="chunks"))
        async with stream:
            events = [update.event async for update in stream]
    assert events[0].task is not None
    assert events[0].task.status.state is S.SUBMITTED
    chunks = [e.artifact_update for e in events if e.artifact_update]
    assert [c.artifact.parts[0].text for c in chunks] == ["one ", "two ", "three"]
    assert [(c.append, c.last_chunk) for c in chunks] == [
        (False, False),
        (True, False),
        (True, True),
    ]
    assert events[-1].status_update is not None
    assert events[-1].status_update.status.state is S.COMPLETED
    stored = await manager.get(events[0].task.id)
    assert artifact_text(stored) == "one two three"
    assert len(stored.artifacts or []) == 1


async def test_multi_turn_task_parks_twice_and_finishes(manager: TaskManager) -> None:
    with anyio.fail_after(5):
        first = await manager.send(message("start", skill_id="interview"))
        assert isinstance(first, Task)
        assert first.status.state is S.INPUT_REQUIRED
        assert first.status.message is not None
        assert first.status.message.text() == "name?"
        second = await manager.send(message("Ada", task_id=first.id))
        assert isinstance(second, Task)
        assert second.status.state is S.INPUT_REQUIRED
        third = await manager.send(message("green", task_id=first.id, context_id=first.context_id))
    assert isinstance(third, Task)
    assert third.status.state is S.COMPLETED
    assert artifact_text(third) == "Ada likes green"


async def test_message_with_a_mismatched_context_is_rejected(manager: TaskManager) -> None:
    task = await manager.send(message(skill_id="interview"))
    assert isinstance(task, Task)
    with pytest.raises(InvalidParamsError):
        await manager.send(message("x", task_id=task.id, context_id="another-context"))
    assert (await manager.get(task.id)).status.state is S.INPUT_REQUIRED


async def test_message_to_an_unknown_task_is_task_not_found(manager: TaskManager) -> None:
    with pytest.raises(TaskNotFoundError):
        await manager.send(message("x", task_id="no-such-task"))


async def test_message_to_a_terminal_task_is_unsupported(manager: TaskManager) -> None:
    task = await manager.send(message())
    assert isinstance(task, Task)
    with pytest.raises(UnsupportedOperationError):
        await manager.send(message("again", task_id=task.id))
    assert (await manager.get(task.id)).status.state is S.COMPLETED


async def test_cancel_stops_the_running_skill_and_is_not_repeatable(
    manager: TaskManager, gate: Gate
) -> None:
    task = await manager.send(immediately(message(skill_id="blocked")))
    assert isinstance(task, Task)
    with anyio.fail_after(5):
        await gate.started.wait()
        canceled = await manager.cancel(task.id)
        await gate.canceled.wait()
    assert canceled.status.state is S.CANCELED
    with pytest.raises(TaskNotCancelableError):
        await manager.cancel(task.id)
    assert (await manager.get(task.id)).status.state is S.CANCELED


async def test_cancel_of_a_parked_task_ends_it(manager: TaskManager) -> None:
    task = await manager.send(message(skill_id="interview"))
    assert isinstance(task, Task)
    canceled = await manager.cancel(task.id)
    assert canceled.status.state is S.CANCELED


async def test_an_exception_in_a_skill_fails_only_that_task(manager: TaskManager) -> None:
    with anyio.fail_after(5):
        failed = await manager.send(message(skill_id="broken"))
        fine = await manager.send(message("still here"))
    assert isinstance(failed, Task)
    assert isinstance(fine, Task)
    assert failed.status.state is S.FAILED
    assert failed.status.message is not None
    assert "secret" not in failed.status.message.text()
    assert fine.status.state is S.COMPLETED


async def test_skill_error_fails_the_task_with_its_message(manager: TaskManager) -> None:
    task = await manager.send(message(skill_id="refuses"))
    assert isinstance(task, Task)
    assert task.status.state is S.FAILED
    assert task.status.message is not None
    assert task.status.message.text() == "cannot do that: the input is empty"


async def test_reply_skill_answers_with_a_message_and_creates_no_task(
    manager: TaskManager,
) -> None:
    reply = await manager.send(message("hi", skill_id="reply"))
    assert isinstance(reply, Message)
    assert reply.text() == "re: hi"
    assert reply.role is Role.AGENT
    listed = await manager.list(ListTasksRequest())
    assert listed.total_size == 0


async def test_unknown_skill_is_invalid_params(manager: TaskManager) -> None:
    with pytest.raises(InvalidParamsError):
        await manager.send(message(skill_id="nope"))


async def test_history_length_limits_the_returned_history(manager: TaskManager) -> None:
    first = await manager.send(message(skill_id="interview"))
    assert isinstance(first, Task)
    await manager.send(message("Ada", task_id=first.id))
    full = await manager.get(first.id)
    assert full.history is not None
    assert len(full.history) == 5  # start, "starting", "name?", "Ada", "colour?"
    last = await manager.get(first.id, history_length=1)
    assert last.history == full.history[-1:]
    none = await manager.get(first.id, history_length=0)
    assert none.history is None


async def test_every_subscriber_sees_the_same_events_and_one_leaving_harms_none(
    manager: TaskManager, gate: Gate
) -> None:
    task = await manager.send(immediately(message(skill_id="blocked")))
    assert isinstance(task, Task)
    first = await manager.subscribe(task.id)
    second = await manager.subscribe(task.id)
    leaver = await manager.subscribe(task.id)
    await leaver.aclose()
    gate.release.set()
    with anyio.fail_after(5):
        async with first, second:
            seen_first = [u.json() async for u in first]
            seen_second = [u.json() async for u in second]
    assert seen_first == seen_second
    assert (await manager.get(task.id)).status.state is S.COMPLETED


async def test_subscribe_to_a_terminal_task_is_unsupported(manager: TaskManager) -> None:
    task = await manager.send(message())
    assert isinstance(task, Task)
    with pytest.raises(UnsupportedOperationError):
        await manager.subscribe(task.id)


async def test_list_filters_by_context_and_state_and_pages(manager: TaskManager) -> None:
    for _ in range(5):
        await manager.send(message(context_id="ctx-a"))
    parked = await manager.send(message(context_id="ctx-b", skill_id="interview"))
    assert isinstance(parked, Task)
    in_a = await manager.list(ListTasksRequest(context_id="ctx-a", page_size=2))
    assert in_a.total_size == 5
    assert len(in_a.tasks) == 2
    assert in_a.next_page_token
    assert all(task.artifacts is None for task in in_a.tasks)
    seen = [task.id for task in in_a.tasks]
    token = in_a.next_page_token
    while token:
        page = await manager.list(
            ListTasksRequest(context_id="ctx-a", page_size=2, page_token=token)
        )
        seen += [task.id for task in page.tasks]
        token = page.next_page_token
    assert len(set(seen)) == 5
    waiting = await manager.list(ListTasksRequest(status=S.INPUT_REQUIRED))
    assert [task.id for task in waiting.tasks] == [parked.id]
    with_artifacts = await manager.list(
        ListTasksRequest(context_id="ctx-a", include_artifacts=True)
    )
    assert all(artifact_text(task) == "hello" for task in with_artifacts.tasks)


async def test_too_many_parts_is_refused(store: TaskStore, skills: dict[str, Skill]) -> None:
    await store.open()
    limits = LimitSettings(max_parts=2)
    async with TaskManager(store=store, executors=skills, default_skill="echo", limits=limits) as m:
        with pytest.raises(LimitExceededError):
            await m.send(message(parts=[Part(text="a"), Part(text="b"), Part(text="c")]))
    await store.close()


async def test_live_task_and_context_limits_are_enforced(
    store: TaskStore, skills: dict[str, Skill]
) -> None:
    await store.open()
    limits = LimitSettings(max_tasks=2, max_contexts=1)
    async with TaskManager(store=store, executors=skills, default_skill="echo", limits=limits) as m:
        first = await m.send(message(skill_id="interview", context_id="c1"))
        with pytest.raises(LimitExceededError):
            await m.send(message(skill_id="interview", context_id="c2"))
        await m.send(message(skill_id="interview", context_id="c1"))
        with pytest.raises(LimitExceededError):
            await m.send(message(skill_id="interview", context_id="c1"))
        assert isinstance(first, Task)
        await m.cancel(first.id)
        done = await m.send(message(context_id="c1"))
        assert isinstance(done, Task)
        assert done.status.state is S.COMPLETED
    await store.close()


async def test_restart_fails_working_tasks_and_resumes_parked_ones(
    tmp_path: Path, skills: dict[str, Skill]
) -> None:
    path = tmp_path / "hub.db"
    limits = LimitSettings()
    store = SqliteTaskStore(path)
    await store.open()
    async with TaskManager(store=store, executors=skills, default_skill="echo", limits=limits) as m:
        parked = await m.send(message(skill_id="interview"))
        assert isinstance(parked, Task)
        half = await m.send(message("Ada", task_id=parked.id))
        assert isinstance(half, Task)
        assert half.status.state is S.INPUT_REQUIRED
    # A task the previous process left running, as a kill -9 would leave it.
    record = await store.get(parked.id)
    assert record is not None
    working = record.task.model_copy(
        update={
            "id": "left-running",
            "status": record.task.status.model_copy(update={"state": S.WORKING}),
        }
    )
    await store.put(TaskRecord(task=working, skill="blocked"))
    await store.close()

    store = SqliteTaskStore(path)
    await store.open()
    async with TaskManager(store=store, executors=skills, default_skill="echo", limits=limits) as m:
        interrupted = await m.get("left-running")
        assert interrupted.status.state is S.FAILED
        assert interrupted.status.message is not None
        assert interrupted.status.message.text() == INTERRUPTED_BY_RESTART
        with anyio.fail_after(5):
            done = await m.send(message("green", task_id=parked.id))
        assert isinstance(done, Task)
        assert done.status.state is S.COMPLETED
        assert artifact_text(done) == "Ada likes green"
        # The replayed progress update was not recorded twice.
        agent_texts: list[Any] = [
            msg.text() for msg in done.history or [] if msg.role is Role.AGENT
        ]
        assert agent_texts == ["starting", "name?", "colour?"]
    await store.close()


async def test_expired_terminal_tasks_are_evicted_and_live_ones_kept(
    manager: TaskManager,
) -> None:
    done = await manager.send(message())
    parked = await manager.send(message(skill_id="interview"))
    assert isinstance(done, Task)
    assert isinstance(parked, Task)
    assert await manager.evict_expired() == 0
    later = utc_now() + timedelta(hours=2)  # past the default 1h TTL
    assert await manager.evict_expired(now=later) == 1
    with pytest.raises(TaskNotFoundError):
        await manager.get(done.id)
    assert (await manager.get(parked.id)).status.state is S.INPUT_REQUIRED


async def test_list_filters_by_status_timestamp(manager: TaskManager) -> None:
    tasks = []
    for _ in range(3):
        task = await manager.send(message(context_id="ctx-t"))
        assert isinstance(task, Task)
        assert task.status.timestamp is not None
        tasks.append(task)
    after = tasks[1].status.timestamp
    assert after is not None
    listed = await manager.list(ListTasksRequest(context_id="ctx-t", status_timestamp_after=after))
    expected = {
        t.id for t in tasks if t.status.timestamp is not None and t.status.timestamp >= after
    }
    assert {task.id for task in listed.tasks} == expected
    assert {tasks[1].id, tasks[2].id} <= expected
