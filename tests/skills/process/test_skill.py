"""Process skills with real child processes, through the TaskManager."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import anyio
import pytest

from hub.config import SkillRef
from hub.errors import ConfigError, UnsupportedOperationError
from hub.protocol import Part, StreamResponse, Task, TaskState, TaskStatus, agent_message
from hub.skills import load_skills
from hub.skills.process import build_process_skill
from hub.store import MemoryTaskStore, SqliteTaskStore, TaskRecord
from hub.tasks import INTERRUPTED_BY_RESTART

from .harness import (
    artifact_text,
    init_details,
    process_settings,
    process_skill,
    request,
    running_hub,
    send,
    send_once,
    states,
    stream,
    until_init,
    until_state,
    wait_gone,
)

pytestmark = pytest.mark.anyio

S = TaskState
MYSTERY = '{"type": "mystery", "text": "unknown type"}'


def status_texts(events: list[StreamResponse]) -> list[tuple[str | None, str]]:
    found = []
    for event in events:
        update = event.status_update
        if update is not None and update.status.message is not None:
            metadata = update.status.message.metadata or {}
            found.append((metadata.get("processEvent"), update.status.message.text()))
    return found


async def test_every_jsonl_event_reaches_the_task_in_order() -> None:
    async with running_hub(process_skill("events")) as hub:
        events = await stream(hub, request(skill="events"))
    assert states(events)[:2] == [S.SUBMITTED, S.WORKING]
    assert states(events)[-1] is S.COMPLETED
    assert status_texts(events) == [
        ("init", "started"),
        ("thinking", "Let me look. "),
        ("tool_use", 'Bash {"command":"ls"}'),
        ("tool_result", "x" * 199 + "…"),
    ]
    init = events[2].status_update
    assert init is not None
    assert init.status.message is not None
    assert init.status.message.metadata == {
        "processEvent": "init",
        "details": {"session": "s-1", "model": "stand-in"},
    }
    chunks = [e.artifact_update for e in events if e.artifact_update]
    response = [c for c in chunks if c.artifact.name == "assistant-response"]
    # Streamed as chunks, then sent whole as the last chunk.
    assert [(c.append, c.last_chunk) for c in response][-1] == (False, True)
    assert all(not c.last_chunk for c in response[:-1])
    assert response[0].append is False
    assert all(c.append for c in response[1:-1])
    whole = response[-1].artifact.parts
    # The answer only: the thinking went out as a status update.
    assert [(p.text, p.metadata) for p in whole] == [
        ("Hello, worldthis line is not JSON {\n" + MYSTERY + "\n", None),
    ]
    summary = [c.artifact for c in chunks if c.artifact.name == "summary"]
    assert [a.parts[0].data for a in summary] == [{"summary": "said hello", "stats": {"turns": 1}}]


async def test_stored_task_holds_the_merged_response_and_the_summary() -> None:
    task = await send_once("events")
    assert task.status.state is S.COMPLETED
    assert artifact_text(task) == (
        'Hello, worldthis line is not JSON {\n{"type": "mystery", "text": "unknown type"}\n'
    )
    assert [a.name for a in task.artifacts or []] == ["assistant-response", "summary"]


async def test_text_output_appends_each_line() -> None:
    task = await send_once("plain", output="text")
    assert task.status.state is S.COMPLETED
    assert artifact_text(task) == "first line\nsecond line\n"


async def test_jsonl_run_that_exits_without_done_fails() -> None:
    task = await send_once("no-done")
    assert task.status.state is S.FAILED
    assert artifact_text(task) == "forgot to say done"


async def test_non_zero_exit_fails_with_the_tail_of_stderr() -> None:
    task = await send_once("fail")
    assert task.status.state is S.FAILED
    assert task.status.message is not None
    reason = task.status.message.text()
    assert "exited with code 1" in reason
    assert reason.endswith("the real reason: disk full")
    assert "stderr line 0\n" not in reason  # only the tail
    assert artifact_text(task) == "trying"


async def test_done_followed_by_a_non_zero_exit_fails() -> None:
    task = await send_once("done-then-fail")
    assert task.status.state is S.FAILED
    assert task.status.message is not None
    assert "code 3" in task.status.message.text()


async def test_error_event_fails_the_task_and_stops_the_program() -> None:
    task = await send_once("error")
    assert task.status.state is S.FAILED
    assert task.status.message is not None
    assert task.status.message.text() == "the model refused"


async def test_message_text_is_one_argument_and_nothing_is_executed(tmp_path: Path) -> None:
    evil = '--evil; rm -rf / $(touch x) `touch y` && touch z | cat > w "{task_id}"'
    skill = process_skill("argv", "{text}", "--task={task_id}", "{data}", cwd=str(tmp_path))
    async with running_hub(skill) as hub:
        task = await send(
            hub, request(skill="argv", parts=[Part(text=evil), Part(data={"k": "$(touch d)"})])
        )
    assert task.status.state is S.COMPLETED
    assert json.loads(artifact_text(task)) == [
        evil,
        f"--task={task.id}",
        '[{"k": "$(touch d)"}]',
    ]
    assert [path async for path in anyio.Path(tmp_path).iterdir()] == []


async def test_cwd_and_env_come_from_the_settings(tmp_path: Path) -> None:
    skill = process_skill(
        "env", "{context_id}", cwd=str(tmp_path), env={"STAND_IN_TOKEN": "s3cret"}
    )
    async with running_hub(skill) as hub:
        task = await send(hub, request(skill="env"))
    assert task.status.state is S.COMPLETED
    assert json.loads(artifact_text(task)) == [str(tmp_path), "s3cret", task.id, [task.context_id]]


async def test_flooded_stdout_and_stderr_arrive_whole() -> None:
    lines = 3000
    task = await send_once("flood", str(lines))
    assert task.status.state is S.COMPLETED
    text = artifact_text(task)
    expected = "".join(f"line {n}\n" for n in range(lines))
    assert text.startswith(expected)
    # The 3 MB line is cut into pieces of at most 1 MiB, each kept as text.
    assert text[len(expected) :] == "x" * (1024 * 1024) + "\n" + "x" * (1024 * 1024) + "\n" + (
        "x" * (3_000_000 - 2 * 1024 * 1024) + "\n"
    )
    summary = [a for a in task.artifacts or [] if a.name == "summary"]
    assert summary[0].parts[0].data == {"stats": {"lines": lines}}


async def test_cancel_kills_the_program_and_its_grandchild() -> None:
    async with running_hub(process_skill("grandchild")) as hub:
        updates = await hub.stream(request(skill="grandchild"))
        async with updates:
            pids = await until_init(updates)
            canceled = await hub.cancel(pids["task"])
            assert canceled.status.state is S.CANCELED
            await until_state(updates, S.CANCELED)
        await wait_gone(pids["pid"], pids["child"])


async def test_a_program_that_ignores_sigterm_is_killed_after_the_grace_period() -> None:
    async with running_hub(process_skill("stubborn", grace=0.2)) as hub:
        updates = await hub.stream(request(skill="stubborn"))
        async with updates:
            pids = await until_init(updates)
            await hub.cancel(pids["task"])
        await wait_gone(pids["pid"], pids["child"])


async def test_a_child_left_behind_after_exit_is_killed_and_the_task_completes() -> None:
    task = await send_once("leaves-child", grace=0.2)
    assert task.status.state is S.COMPLETED
    await wait_gone(init_details(task)["child"])


async def test_timeout_stops_the_run_and_fails_the_task() -> None:
    task = await send_once("hang", timeout=0.5)
    assert task.status.state is S.FAILED
    assert task.status.message is not None
    assert "(timeout)" in task.status.message.text()
    await wait_gone(init_details(task)["pid"])


async def test_idle_timeout_stops_a_silent_program() -> None:
    task = await send_once("idle", idle_timeout=0.3, timeout=60)
    assert task.status.state is S.FAILED
    assert task.status.message is not None
    assert "(idle_timeout)" in task.status.message.text()
    assert artifact_text(task) == "working..."
    await wait_gone(init_details(task)["pid"])


async def test_a_second_task_waits_in_submitted_until_the_first_ends() -> None:
    async with running_hub(process_skill("hang", max_concurrent=1)) as hub:
        first = await hub.stream(request(skill="hang"))
        async with first:
            running = await until_init(first)
            second = await hub.stream(request(skill="hang"))
            async with second:
                with anyio.fail_after(10):
                    snapshot = (await anext(second)).event.task
                assert snapshot is not None
                assert snapshot.status.state is S.SUBMITTED
                assert (await hub.get(snapshot.id)).status.state is S.SUBMITTED
                await hub.cancel(running["task"])
                await until_state(second, S.WORKING)
                waited = await until_init(second)
                await hub.cancel(waited["task"])
        await wait_gone(running["pid"], waited["pid"])


async def test_a_full_queue_rejects_the_task() -> None:
    async with running_hub(process_skill("hang", max_concurrent=1, max_queue=1)) as hub:
        first = await hub.stream(request(skill="hang"))
        async with first:
            running = await until_init(first)
            waiting = await send(hub, request(skill="hang", immediately=True))
            rejected = await send(hub, request(skill="hang"))
            assert rejected.status.state is S.REJECTED
            assert rejected.status.message is not None
            assert "busy" in rejected.status.message.text()
            assert (await hub.get(waiting.id)).status.state is S.SUBMITTED
            await hub.cancel(waiting.id)
            await hub.cancel(running["task"])


async def test_approval_answer_is_written_to_stdin() -> None:
    async with running_hub(process_skill("approval")) as hub:
        parked = await send(hub, request(skill="approval"))
        assert parked.status.state is S.INPUT_REQUIRED
        assert parked.status.message is not None
        assert parked.status.message.text() == "Delete build/?"
        done = await send(hub, request("yes", task_id=parked.id))
    assert done.status.state is S.COMPLETED
    assert artifact_text(done) == "answer='yes\\n'"


async def test_a_program_that_exits_while_parked_fails_the_task() -> None:
    async with running_hub(process_skill("ask-and-quit")) as hub:
        task = await send(hub, request(skill="ask-and-quit"))
        with contextlib.suppress(UnsupportedOperationError):  # it may have failed already
            updates = await hub.subscribe(task.id)
            async with updates:
                await until_state(updates, S.FAILED)
        ended = await hub.get(task.id)
    assert ended.status.state is S.FAILED


async def test_a_task_parked_when_the_hub_stopped_fails_instead_of_rerunning(
    tmp_path: Path,
) -> None:
    store_path = tmp_path / "hub.db"
    async with running_hub(process_skill("approval"), store=SqliteTaskStore(store_path)) as hub:
        parked = await send(hub, request(skill="approval"))
        pid = init_details(parked)["pid"]
    await wait_gone(pid)
    async with running_hub(process_skill("approval"), store=SqliteTaskStore(store_path)) as hub:
        stored = await hub.get(parked.id)
        assert stored.status.state is S.FAILED
        assert stored.status.message is not None
        assert stored.status.message.text() == INTERRUPTED_BY_RESTART


async def test_an_answer_after_a_crash_fails_the_task_instead_of_running_the_program_again(
    tmp_path: Path,
) -> None:
    # What a hub killed with SIGKILL leaves: a process task parked, with no process.
    marker = tmp_path / "ran"
    store = MemoryTaskStore()
    await store.open()
    first = request(skill="mark").message.model_copy(update={"task_id": "t-1", "context_id": "c-1"})
    parked = Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(state=S.INPUT_REQUIRED),
        history=[first, agent_message("Delete build/?")],
    )
    await store.put(TaskRecord(task=parked, skill="mark"))
    await store.close()
    skill = process_skill("mark", str(marker))
    async with running_hub(skill, store=store) as hub:
        failed = await send(hub, request("yes", task_id="t-1"))
        assert failed.status.state is S.FAILED
        assert failed.status.message is not None
        assert failed.status.message.text().startswith(INTERRUPTED_BY_RESTART)
        assert not await anyio.Path(marker).exists()
        again = await send(hub, request(skill="mark"))  # a new message runs it
    assert again.status.state is S.COMPLETED
    assert await anyio.Path(marker).exists()


async def test_a_program_that_cannot_start_fails_its_task() -> None:
    settings = process_settings("events").model_copy(update={"command": ("/no/such/agent",)})
    async with running_hub(build_process_skill(settings, check=False)) as hub:
        task = await send(hub, request(skill="events"))
    assert task.status.state is S.FAILED
    assert task.status.message is not None
    assert "cannot start 'agent'" in task.status.message.text()


def test_loader_builds_process_skills_and_refuses_a_missing_program(tmp_path: Path) -> None:
    settings = process_settings("events", tags=["demo"], examples=["hi"])
    skills = load_skills([SkillRef(process=settings)])
    assert skills["events"].card.tags == ["demo"]
    missing = settings.model_copy(update={"command": ("no-such-program-here",)})
    with pytest.raises(ConfigError, match="not found"):
        load_skills([SkillRef(process=missing)])
    nowhere = settings.model_copy(update={"cwd": str(tmp_path / "absent")})
    with pytest.raises(ConfigError, match="cwd"):
        load_skills([SkillRef(process=nowhere)])
    relative = settings.model_copy(update={"command": ("./agent.py",), "cwd": str(tmp_path)})
    with pytest.raises(ConfigError, match="executable"):
        load_skills([SkillRef(process=relative)])
