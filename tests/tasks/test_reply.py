"""A skill that decides per message: a direct Message (no task) or a task."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from hub.config import LimitSettings
from hub.errors import LimitExceededError, UnsupportedOperationError
from hub.protocol import (
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from hub.skills import Skill, SkillContext, skill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore, SqliteTaskStore, TaskStore
from hub.tasks import TaskManager
from hub.tasks.ledger import note_child

pytestmark = pytest.mark.anyio

S = TaskState


def message(
    text: str,
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    immediately: bool = False,
) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(
            message_id=uuid.uuid4().hex,
            role=Role.USER,
            parts=[Part(text=text)],
            task_id=task_id,
            context_id=context_id,
        ),
        configuration=SendMessageConfiguration(return_immediately=True) if immediately else None,
    )


class Assistant:
    """The default skill: "ping" gets a Message, anything else a task. The test sees whether
    it could reply, and holds it undecided on "think"."""

    def __init__(self) -> None:
        self.could_reply: list[bool] = []
        self.thinking = anyio.Event()
        self.release = anyio.Event()
        self.canceled = anyio.Event()

        @skill(id="assistant", description="answers ping at once", reply="either")
        async def assistant(ctx: SkillContext) -> str | None:
            self.could_reply.append(ctx.can_reply)
            text = ctx.text
            if text == "ping":
                await ctx.reply("pong")
                return None
            if text == "think":
                self.thinking.set()
                try:
                    await self.release.wait()
                except anyio.get_cancelled_exc_class():
                    self.canceled.set()
                    raise
                await ctx.reply("thought")
                return None
            if text == "ask":
                answer = await ctx.ask("name?")
                await ctx.reply(f"hello {answer.text()}")
                return None
            if text == "crash":
                raise RuntimeError("/secret/path exploded")
            if text == "quiet":
                return None
            if text == "delegate":
                note_child("partner", "before-the-task", S.WORKING)
                await ctx.progress("working")
                note_child("partner", "of-the-task", S.WORKING)
                await ctx.ask("more?")
                return None
            await ctx.progress("working")
            return f"done: {text}"

        self.skill = assistant


@skill(id="replier", description="replies with what it returns", reply="message")
async def replier(ctx: SkillContext) -> str | None:
    if ctx.text == "progress":
        await ctx.progress("not allowed")
    return None if ctx.text == "nothing" else f"re: {ctx.text}"


@pytest.fixture
def assistant() -> Assistant:
    return Assistant()


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TaskStore:
    if request.param == "memory":
        return MemoryTaskStore()
    return SqliteTaskStore(tmp_path / "hub.db")


def skills(assistant: Assistant) -> dict[str, Skill]:
    return {s.skill_id: s for s in (assistant.skill, replier, echo)}


@pytest.fixture
async def manager(store: TaskStore, assistant: Assistant) -> AsyncIterator[TaskManager]:
    await store.open()
    try:
        async with TaskManager(
            store=store,
            executors=skills(assistant),
            default_skill="assistant",
            limits=LimitSettings(),
        ) as running:
            yield running
    finally:
        await store.close()


async def stored_tasks(manager: TaskManager) -> list[Task]:
    return (await manager.list(ListTasksRequest())).tasks


async def test_ping_is_answered_with_a_message_and_no_task_is_created(
    manager: TaskManager, assistant: Assistant
) -> None:
    with anyio.fail_after(5):
        reply = await manager.send(message("ping", context_id="ctx-1"))
    assert isinstance(reply, Message)
    assert reply == Message(
        message_id=reply.message_id, role=Role.AGENT, parts=[Part(text="pong")], context_id="ctx-1"
    )
    assert assistant.could_reply == [True]
    assert await stored_tasks(manager) == []


async def test_a_message_without_a_context_gets_a_new_one_in_the_reply(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        reply = await manager.send(message("ping"))
    assert isinstance(reply, Message)
    assert reply.context_id
    assert reply.task_id is None


async def test_anything_else_from_the_same_skill_is_answered_with_a_task(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        task = await manager.send(message("hello", context_id="ctx-1"))
    assert isinstance(task, Task)
    assert task.status.state is S.COMPLETED
    assert task.context_id == "ctx-1"
    assert [a.parts[0].text for a in task.artifacts or []] == ["done: hello"]
    assert [m.text() for m in task.history or []] == ["hello", "working"]
    assert [t.id for t in await stored_tasks(manager)] == [task.id]


async def test_a_streamed_ping_is_one_message_event_and_the_stream_ends(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        stream = await manager.stream(message("ping", context_id="ctx-1"))
        async with stream:
            events = [update.event async for update in stream]
    assert len(events) == 1
    reply = events[0].message
    assert reply is not None
    assert (reply.text(), reply.context_id, reply.task_id) == ("pong", "ctx-1", None)
    assert events[0] == StreamResponse(message=reply)
    assert await stored_tasks(manager) == []


async def test_a_streamed_task_starts_with_the_task_and_ends_completed(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        stream = await manager.stream(message("hello"))
        async with stream:
            events = [update.event async for update in stream]
    first = events[0].task
    assert first is not None
    last = events[-1].status_update
    assert last is not None
    assert last.status.state is S.COMPLETED
    assert last.task_id == first.id
    stored = await manager.get(first.id)
    assert [a.parts[0].text for a in stored.artifacts or []] == ["done: hello"]


async def test_return_immediately_creates_the_task_at_once_and_a_reply_completes_it(
    manager: TaskManager, assistant: Assistant
) -> None:
    with anyio.fail_after(5):
        task = await manager.send(message("ping", immediately=True))
        assert isinstance(task, Task)
        assert task.status.state in (S.SUBMITTED, S.WORKING)
        done = await wait_until_terminal(manager, task.id)
    assert assistant.could_reply == [False]
    assert done.status.state is S.COMPLETED
    assert done.status.message is not None
    assert done.status.message.text() == "pong"
    assert done.status.message.task_id == task.id


async def wait_until_terminal(manager: TaskManager, task_id: str) -> Task:
    """The task once it is terminal, following it with a subscription."""
    try:
        stream = await manager.subscribe(task_id)
    except UnsupportedOperationError:  # terminal already
        return await manager.get(task_id)
    async with stream:
        async for _ in stream:
            pass
    return await manager.get(task_id)


async def test_a_reply_to_a_follow_up_message_completes_the_existing_task(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        parked = await manager.send(message("ask"))
        assert isinstance(parked, Task)
        assert parked.status.state is S.INPUT_REQUIRED
        answered = await manager.send(message("Ada", task_id=parked.id))
    assert isinstance(answered, Task)
    assert answered.id == parked.id
    assert answered.status.state is S.COMPLETED
    assert answered.status.message is not None
    assert answered.status.message.text() == "hello Ada"


async def test_a_skill_that_fails_before_deciding_answers_with_a_failed_task(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        failed = await manager.send(message("crash"))
    assert isinstance(failed, Task)
    assert failed.status.state is S.FAILED
    assert failed.status.message is not None
    assert failed.status.message.text() == (
        "skill 'assistant' failed with an internal error; the hub log has the details"
    )
    assert [t.id for t in await stored_tasks(manager)] == [failed.id]


async def test_a_skill_that_returns_without_deciding_completes_a_task(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        task = await manager.send(message("quiet"))
    assert isinstance(task, Task)
    assert task.status.state is S.COMPLETED
    assert task.artifacts is None


async def test_the_request_waits_for_the_skill_to_decide(
    manager: TaskManager, assistant: Assistant
) -> None:
    answers: list[Task | Message] = []

    async def send() -> None:
        answers.append(await manager.send(message("think")))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(send)
            await assistant.thinking.wait()
            assert answers == []
            assistant.release.set()
    [reply] = answers
    assert isinstance(reply, Message)
    assert reply.text() == "thought"
    assert await stored_tasks(manager) == []


async def test_a_request_that_goes_away_before_the_decision_cancels_the_skill(
    manager: TaskManager, assistant: Assistant
) -> None:
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(manager.send, message("think"))
            await assistant.thinking.wait()
            group.cancel_scope.cancel()
        await assistant.canceled.wait()
    assert await stored_tasks(manager) == []


async def test_a_reply_needs_no_task_slot_but_a_task_does(assistant: Assistant) -> None:
    limits = LimitSettings(max_tasks=1)
    store = MemoryTaskStore()
    await store.open()
    async with TaskManager(
        store=store,
        executors=skills(assistant),
        default_skill="assistant",
        limits=limits,
    ) as manager:
        with anyio.fail_after(5):
            parked = await manager.send(message("ask"))
            assert isinstance(parked, Task)
            reply = await manager.send(message("ping"))
            assert isinstance(reply, Message)
            with pytest.raises(LimitExceededError):
                await manager.send(message("hello"))
            with pytest.raises(LimitExceededError):
                await manager.stream(message("hello"))
        assert [t.id for t in (await manager.list(ListTasksRequest())).tasks] == [parked.id]


async def test_the_task_hook_sees_only_the_messages_answered_with_a_task(
    manager: TaskManager,
) -> None:
    seen: list[str] = []
    with anyio.fail_after(5):
        reply = await manager.send(message("ping"), on_task=lambda task: seen.append(task.id))
        task = await manager.send(message("hello"), on_task=lambda task: seen.append(task.id))
    assert isinstance(reply, Message)
    assert isinstance(task, Task)
    assert seen == [task.id]


async def test_partner_tasks_count_as_children_from_the_moment_the_task_exists(
    manager: TaskManager,
) -> None:
    with anyio.fail_after(5):
        task = await manager.send(message("delegate"))
    assert isinstance(task, Task)
    assert task.status.state is S.INPUT_REQUIRED
    assert manager.ledger.live_children(task.id) == [("partner", "of-the-task")]


async def test_a_reply_only_skill_still_answers_with_what_it_returns(
    manager: TaskManager,
) -> None:
    request = message("hi").model_copy(update={"metadata": {"skill": "replier"}})
    with anyio.fail_after(5):
        reply = await manager.send(request)
        stream = await manager.stream(request)
        async with stream:
            events = [update.event async for update in stream]
    assert isinstance(reply, Message)
    assert reply.text() == "re: hi"
    assert [e.message.text() if e.message else None for e in events] == ["re: hi"]
    assert await stored_tasks(manager) == []


async def test_a_reply_only_skill_that_cannot_reply_fails_as_a_task(manager: TaskManager) -> None:
    expected = {
        "nothing": "skill 'replier' returned nothing to reply with",
        "progress": "skill 'replier' replies with a message and has no task to report progress on",
    }
    for text, reason in expected.items():
        request = message(text).model_copy(update={"metadata": {"skill": "replier"}})
        with anyio.fail_after(5):
            failed = await manager.send(request)
        assert isinstance(failed, Task)
        assert failed.status.state is S.FAILED
        assert failed.status.message is not None
        assert failed.status.message.text() == reason
