"""Resumable skills with real SQLite files: a task left running when its hub stopped is run
again at the next start, in its owner's scope, instead of failed; other tasks fail as before."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

import anyio
import pytest

from hub.config import LimitSettings
from hub.protocol import Message, Part, Role, SendMessageConfiguration, SendMessageRequest, Task
from hub.protocol import TaskState as S
from hub.protocol.trace import Allowed, CallScope, current_scope
from hub.skills import Skill, SkillContext, skill
from hub.skills.echo import echo
from hub.store import SqliteTaskStore, TaskRecord
from hub.tasks import INTERRUPTED_BY_RESTART, TaskManager
from hub.tasks.resumption import RESUMED_AFTER_RESTART, RESUMED_METADATA_KEY

pytestmark = pytest.mark.anyio

HELPERS = Allowed(frozenset({"helper"}))


@dataclass
class Journal:
    """What the resumable skill saw at each start, and the gate it waits at."""

    starts: list[tuple[bool, tuple[str, Allowed] | None]] = field(default_factory=list)
    started: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)


def skills(journal: Journal) -> dict[str, Skill]:
    @skill(id="journaled", description="records each start, waits", resumable=True)
    async def journaled(ctx: SkillContext) -> str:
        scope = current_scope()  # none for the first start: the test sends without one
        reach = (scope.caller, scope.agents) if scope is not None else None
        journal.starts.append((ctx.resumed, reach))
        journal.started.set()
        await journal.release.wait()
        return f"done after {len(journal.starts)} start(s)"

    @skill(id="plain", description="waits forever")
    async def plain(ctx: SkillContext) -> str:
        await anyio.sleep_forever()
        return "never"

    return {found.skill_id: found for found in (echo, journaled, plain)}


def owners_scope(record: TaskRecord) -> CallScope | None:
    """Credential 'alice' reaches the partner 'helper'; no other owner has a credential."""
    if record.owner != "alice":
        return None
    return replace(CallScope.new(agents=HELPERS), caller="alice")


def request(skill_id: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id=uuid.uuid4().hex, role=Role.USER, parts=[Part(text="go")]),
        metadata={"skill": skill_id},
        configuration=SendMessageConfiguration(return_immediately=True),
    )


def manager(store: SqliteTaskStore, journal: Journal) -> TaskManager:
    return TaskManager(
        store=store,
        executors=skills(journal),
        default_skill="echo",
        limits=LimitSettings(),
        resume_scope=owners_scope,
    )


async def journaled_task(first: TaskManager, journal: Journal) -> Task:
    """The resumable skill's task, sent as 'alice', once its first run has started."""
    task = await first.send(request("journaled"), owner="alice")
    assert isinstance(task, Task)
    with anyio.fail_after(10):
        await journal.started.wait()
    return task


async def left_running(store: SqliteTaskStore, model: Task, task_id: str, **record: str) -> None:
    """A WORKING task of the previous run, as a kill -9 leaves it."""
    status = model.status.model_copy(update={"state": S.WORKING, "message": None})
    task = model.model_copy(update={"id": task_id, "status": status})
    await store.put(TaskRecord(task=task, skill=record["skill"], owner=record.get("owner", "")))


async def test_a_resumable_task_left_by_a_stopped_hub_runs_again_in_its_owners_scope(
    tmp_path: Path,
) -> None:
    path = tmp_path / "hub.db"
    journal = Journal()
    store = SqliteTaskStore(path)
    await store.open()
    async with manager(store, journal) as first:
        task = await journaled_task(first, journal)
        # The other kinds of task the stopped hub leaves running.
        await left_running(store, task, "plain-task", skill="plain", owner="alice")
        await left_running(store, task, "orphan", skill="journaled", owner="mallory")
        await left_running(store, task, "unserved", skill="gone", owner="alice")
    # A stopped hub leaves a resumable skill's task running, for the next start.
    record = await store.get(task.id)
    assert record is not None
    assert record.task.status.state is S.WORKING
    await store.close()

    journal.started = anyio.Event()
    store = SqliteTaskStore(path)
    await store.open()
    async with manager(store, journal) as second:
        with anyio.fail_after(10):
            await journal.started.wait()
        resumed = await second.get(task.id)
        assert resumed.status.state is S.WORKING
        assert resumed.status.message is not None
        assert resumed.status.message.text() == RESUMED_AFTER_RESTART
        assert resumed.status.message.metadata == {RESUMED_METADATA_KEY: "restart"}
        # The resumed note is the status alone, not a message of the task's history.
        assert [m.text() for m in resumed.history or []] == ["go"]

        with anyio.fail_after(10):
            stream = await second.subscribe(task.id)
            journal.release.set()
            async with stream:
                events = [update.event async for update in stream]
        assert events[-1].status_update is not None
        assert events[-1].status_update.status.state is S.COMPLETED

        done = await second.get(task.id)
        assert done.status.state is S.COMPLETED
        assert done.artifacts is not None
        assert done.artifacts[0].parts[0].text == "done after 2 start(s)"
        assert journal.starts == [(False, None), (True, ("alice", HELPERS))]

        plain = await second.get("plain-task")
        assert plain.status.state is S.FAILED
        assert plain.status.message is not None
        assert plain.status.message.text() == INTERRUPTED_BY_RESTART
        unserved = await second.get("unserved")
        assert unserved.status.state is S.FAILED
        assert unserved.status.message is not None
        assert unserved.status.message.text() == INTERRUPTED_BY_RESTART
        orphan = await second.get("orphan")
        assert orphan.status.state is S.FAILED
        assert orphan.status.message is not None
        assert orphan.status.message.text() == (
            f"{INTERRUPTED_BY_RESTART}; its caller's credential 'mallory' is no longer "
            "configured, so it cannot resume"
        )
    await store.close()


async def test_a_resumed_task_canceled_before_it_ends_stays_canceled(tmp_path: Path) -> None:
    path = tmp_path / "hub.db"
    journal = Journal()
    store = SqliteTaskStore(path)
    await store.open()
    async with manager(store, journal) as first:
        task = await journaled_task(first, journal)
    await store.close()

    journal.started = anyio.Event()
    store = SqliteTaskStore(path)
    await store.open()
    async with manager(store, journal) as second:
        with anyio.fail_after(10):
            await journal.started.wait()
        canceled = await second.cancel(task.id, owner="alice")
        assert canceled.status.state is S.CANCELED
    record = await store.get(task.id)
    assert record is not None
    assert record.task.status.state is S.CANCELED
    await store.close()
