"""`a2a-hub call NAME ANSWER --task-id T` (and with `--stream`) as real child processes,
answering the questions of partners that open a follow-up stream with a status update (0.3
and 1.0 wire) or with their stored task still waiting (the JS SDK 1.3.0 server's way)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.multiturn.conftest import ASKERS
from tests.multiturn.conftest import askers as askers
from tests.multiturn.partners import AGAIN, QUESTION, QUESTION_AGAIN, greet

from .test_cli_agents import ok, write_agents

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """One event loop for the module, so the partners start once."""
    return "asyncio"


@pytest.fixture(scope="module")
def folder(askers: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding an agents.yaml that lists every asker."""
    path = tmp_path_factory.mktemp("multiturn")
    listed = "".join(f"  - name: {name}\n    url: {url}\n" for name, url in askers.items())
    write_agents(path, f"version: 1\nagents:\n{listed}")
    return path


async def _call(folder: Path, *args: str, status: int = 0) -> dict[str, Any]:
    """`call --json`, exiting with `status` (3 while the task waits for input)."""
    agents = str(folder / "agents.yaml")
    out = await ok("call", *args, "--json", "--agents", agents, cwd=folder, status=status)
    result: dict[str, Any] = json.loads(out)
    return result


@pytest.mark.parametrize("agent", ASKERS)
async def test_call_with_task_id_answers_a_question_asked_again_and_then_completes(
    folder: Path, agent: str
) -> None:
    asked = await _call(folder, agent, "hi", status=3)
    assert (asked["state"], asked["message"]) == ("input-required", QUESTION)
    task_id = asked["taskId"]

    again = await _call(folder, agent, AGAIN, "--task-id", task_id, status=3)
    assert (again["state"], again["message"], again["taskId"]) == (
        "input-required",
        QUESTION_AGAIN,
        task_id,
    )
    answered = await _call(folder, agent, "Ada", "--task-id", task_id)

    assert (answered["state"], answered["needsInput"]) == ("completed", False)
    assert answered["text"] == greet("Ada")
    assert (answered["taskId"], answered["contextId"]) == (task_id, asked["contextId"])


@pytest.mark.parametrize("agent", ASKERS)
async def test_call_stream_with_task_id_prints_every_event_up_to_completed(
    folder: Path, agent: str
) -> None:
    asked = await _call(folder, agent, "hi", status=3)
    task_id = asked["taskId"]

    out = await ok(
        "call",
        agent,
        "Ada",
        "--task-id",
        task_id,
        "--stream",
        "--raw",
        "--agents",
        str(folder / "agents.yaml"),
        cwd=folder,
    )

    opening = [f"[task] {task_id} input-required"] if agent.startswith("snap") else []
    assert out.splitlines() == [
        *opening,
        "[status] working",
        f"[artifact] greeting: {greet('Ada')}",
        "[status] completed",
    ]
