"""The delegation ledger with a real hub and real a2a-sdk partners over loopback: every partner
task a skill starts is recorded under its hub task, a hub task that ends or is canceled leaves
no live partner task behind, and a restart reconciles what the last run left live."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.protocol import Task, TaskState, TaskStatus, agent_message
from hub.registry import load_registry
from hub.skills import SkillContext, skill
from hub.skills.delegate import delegate
from hub.store import ChildRecord, SqliteTaskStore, TaskRecord, TaskStore
from hub.tasks import INTERRUPTED_BY_RESTART
from hub.tasks.ledger import (
    CANCELED_AFTER_RESTART,
    CHILDREN_METADATA_KEY,
    ENDED_BEFORE_RESTART,
    LEFT_AFTER_RESTART,
)
from hub.testing import serve_on_loopback
from tests.client.partners import WAIT, delegated_wait, sdk_jsonrpc

pytestmark = pytest.mark.anyio


@skill(id="stray", description="starts a partner task and leaves without waiting for it")
async def stray(ctx: SkillContext) -> str:
    async with ctx.agents["echoer"].stream(message=WAIT) as events:
        async for event in events:
            if event.status_update is not None:
                break  # the partner works on it now
    return "left it running"


@pytest.fixture
async def partner_url() -> AsyncIterator[str]:
    async with serve_on_loopback(sdk_jsonrpc) as url:
        yield url


@pytest.fixture
def agents_yaml(partner_url: str, tmp_path: Path) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(f"version: 1\nagents:\n  - name: echoer\n    url: {partner_url}\n")
    return path


def _hub(store: TaskStore, agents_yaml: Path) -> Callable[[str], Litestar]:
    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            default_skill="delegate",
        )
        skills = {"delegate": delegate, "stray": stray}
        return create_app(
            settings, store=store, skills=skills, partners=Partners(load_registry(agents_yaml))
        )

    return build


@asynccontextmanager
async def _hub_client(store: TaskStore, agents_yaml: Path) -> AsyncIterator[A2AClient]:
    """A client of a hub served on loopback over `store`, for as long as the block runs."""
    async with serve_on_loopback(_hub(store, agents_yaml)) as url, httpx.AsyncClient() as http:
        yield await A2AClient.from_url(url, http=http)


async def _partner_task(partner_url: str, task_id: str, state: TaskState) -> Task:
    """The partner's task `task_id` once it reaches `state` (bounded wait)."""
    async with httpx.AsyncClient() as http:
        partner = await A2AClient.from_url(partner_url, http=http)
        with anyio.fail_after(10):
            while True:
                task = await partner.get_task(task_id)
                if task.status.state is state:
                    return task
                await anyio.sleep(0.02)


LIVE = (TaskState.SUBMITTED, TaskState.WORKING)


async def _lines(store: TaskStore, parent_id: str, *states: TaskState) -> list[ChildRecord]:
    """The parent's ledger lines once every one is in one of `states` (writes are batched;
    a line changes when its child is first seen, stops on a question or ends)."""
    with anyio.fail_after(10):
        while True:
            lines = await store.list_children(parent_id)
            if lines and all(line.state in states for line in lines):
                return lines
            await anyio.sleep(0.02)


async def test_a_delegated_task_is_recorded_under_its_hub_task(
    agents_yaml: Path, tmp_path: Path
) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db")
    async with _hub_client(store, agents_yaml) as hub:
        with anyio.fail_after(15):
            task = await hub.send(user_message("hello"), metadata={"agent": "echoer"})
        assert isinstance(task, Task)
        assert task.status.state is TaskState.COMPLETED
        lines = await _lines(store, task.id, TaskState.COMPLETED)

    assert [(line.agent, line.state, line.note) for line in lines] == [
        ("echoer", TaskState.COMPLETED, "")
    ]


async def test_canceling_a_hub_task_cancels_its_child_and_the_ledger_says_so(
    agents_yaml: Path, partner_url: str, tmp_path: Path
) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db")
    async with _hub_client(store, agents_yaml) as hub:
        with anyio.fail_after(15):
            task_id = await delegated_wait(hub)
            working = await _lines(store, task_id, *LIVE)
            await hub.cancel(task_id)
            canceled = await _lines(store, task_id, TaskState.CANCELED)

        partner_task = await _partner_task(partner_url, working[0].child_id, TaskState.CANCELED)

    assert [line.child_id for line in canceled] == [partner_task.id]


async def test_a_task_that_ends_with_a_child_still_working_has_the_child_canceled(
    agents_yaml: Path, partner_url: str, tmp_path: Path
) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db")
    async with _hub_client(store, agents_yaml) as hub:
        with anyio.fail_after(15):
            task = await hub.send(user_message("go"), metadata={"skill": "stray"})
        assert isinstance(task, Task)
        assert task.status.state is TaskState.COMPLETED
        lines = await _lines(store, task.id, TaskState.CANCELED)

        await _partner_task(partner_url, lines[0].child_id, TaskState.CANCELED)
    assert [line.agent for line in lines] == ["echoer"]


async def _start_on_partner(partner_url: str, text: str) -> Task:
    async with httpx.AsyncClient() as http:
        partner = await A2AClient.from_url(partner_url, http=http)
        if text != WAIT:
            reply = await partner.send(user_message(text))
            assert isinstance(reply, Task)
            return reply
        async with partner.stream(user_message(text)) as events:
            async for event in events:
                if event.status_update is not None:
                    assert event.status_update.status.state is TaskState.WORKING
                    return await partner.get_task(event.status_update.task_id)
    raise AssertionError("the partner named no task")


def _parent(task_id: str, state: TaskState) -> TaskRecord:
    status = TaskStatus(state=state, message=agent_message("working on it"))
    task = Task(id=task_id, context_id=f"ctx-{task_id}", status=status, history=[])
    return TaskRecord(task=task, skill="delegate")


async def test_after_a_restart_live_children_are_reconciled_and_the_parent_says_what_happened(
    agents_yaml: Path, partner_url: str, tmp_path: Path
) -> None:
    # What a hub killed in the middle of its work leaves in its file: a working parent with a
    # child still working on the partner and one that finished meanwhile, and a parent
    # waiting for its caller's answer with a child of its own.
    running = await _start_on_partner(partner_url, WAIT)
    finished = await _start_on_partner(partner_url, "done already")
    waiting = await _start_on_partner(partner_url, WAIT)
    store = SqliteTaskStore(tmp_path / "tasks.db")
    await store.open()
    await store.put(_parent("p-working", TaskState.WORKING))
    await store.put(_parent("p-asking", TaskState.INPUT_REQUIRED))
    await store.put_children(
        [
            ChildRecord(
                parent_id="p-working",
                agent="echoer",
                child_id=running.id,
                state=TaskState.WORKING,
            ),
            ChildRecord(
                parent_id="p-working",
                agent="echoer",
                child_id=finished.id,
                state=TaskState.WORKING,
            ),
            ChildRecord(
                parent_id="p-asking",
                agent="echoer",
                child_id=waiting.id,
                state=TaskState.WORKING,
            ),
        ]
    )
    await store.close()

    restarted = SqliteTaskStore(tmp_path / "tasks.db")
    async with serve_on_loopback(_hub(restarted, agents_yaml)):
        with anyio.fail_after(10):
            while True:  # each parent's record is written after its children's lines
                parent = await restarted.get("p-working")
                left = await restarted.list_children("p-asking")
                if parent is not None and parent.task.metadata and left[0].note:
                    break
                await anyio.sleep(0.02)
        lines = await restarted.list_children("p-working")
        asking = await restarted.get("p-asking")

    await _partner_task(partner_url, running.id, TaskState.CANCELED)
    await _partner_task(partner_url, waiting.id, TaskState.WORKING)
    assert asking is not None
    assert parent.task.status.state is TaskState.FAILED
    assert parent.task.status.message is not None
    assert parent.task.status.message.text() == INTERRUPTED_BY_RESTART
    assert [(line.child_id, line.state, line.note) for line in lines] == [
        (running.id, TaskState.CANCELED, CANCELED_AFTER_RESTART),
        (finished.id, TaskState.COMPLETED, ENDED_BEFORE_RESTART),
    ]
    assert parent.task.metadata == {
        CHILDREN_METADATA_KEY: [
            {
                "agent": "echoer",
                "taskId": running.id,
                "state": "TASK_STATE_CANCELED",
                "note": CANCELED_AFTER_RESTART,
            },
            {
                "agent": "echoer",
                "taskId": finished.id,
                "state": "TASK_STATE_COMPLETED",
                "note": ENDED_BEFORE_RESTART,
            },
        ]
    }
    assert [(line.child_id, line.state, line.note) for line in left] == [
        (waiting.id, TaskState.WORKING, LEFT_AFTER_RESTART)
    ]
    assert asking.task.status.state is TaskState.INPUT_REQUIRED
    assert asking.task.metadata is None
