"""The task page's server time: a plain task, a swarm's, and plans of growing length.

The tasks are written through the store API into a SQLite file, each plan's record through
the plan's own `Journal.end` (what a finished plan keeps: its transcript, a step record per
model step and tool call, what it spent); the hub app then serves the file in this process.
Each figure is the time of one request through the ASGI transport (no network, the client's
share included), as the console's live reload makes it: the page, then its fragment; medians
over `--rounds` requests with the min and max, and this process's CPU per request.

    python -m bench.console_task                  # 30 samples a figure
    python -m bench.console_task --rounds 10
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from datetime import timedelta
from pathlib import Path

import httpx
from asgi_lifespan import LifespanManager

from bench.target import REPO
from hub.app import create_app
from hub.config import ServerSettings, Settings, StoreSettings
from hub.llm import Entry, ToolCall
from hub.orchestrator import Journal, StepRecord
from hub.orchestrator.journal import Spent
from hub.protocol import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    new_id,
    utc_now,
)
from hub.skills.echo import echo
from hub.store import SqliteTaskStore, TaskRecord

__all__ = ["main"]

_STORE = REPO / "var" / "bench-console-task.db"
_RESULT = "Sunny, 21 C, light wind from the west. " * 8


def _task(skill: str, artifacts: list[Artifact]) -> Task:
    return Task(
        id=new_id(),
        context_id=new_id(),
        status=TaskStatus(state=TaskState.COMPLETED, timestamp=utc_now()),
        history=[Message(message_id=new_id(), role=Role.USER, parts=[Part(text="go")])],
        artifacts=artifacts,
        metadata={"skill": skill},
    )


def _plain() -> Task:
    chunks = [Part(text=f"token {n} ") for n in range(200)]
    return _task("echo", [Artifact(artifact_id=new_id(), name="response", parts=chunks)])


def _swarm(branches: int) -> Task:
    result = {
        "strategy": "broadcast",
        "reason": "all answered",
        "answer": "done",
        "branches": [
            {"agent": f"p{n}", "task_id": new_id(), "state": "completed", "seconds": 0.1 * n}
            for n in range(branches)
        ],
    }
    parts = [Part(text="done"), Part(data=result, media_type="application/json")]
    metadata = {"strategy": "broadcast", "reason": "all answered"}
    return _task(
        "swarm", [Artifact(artifact_id=new_id(), name="swarm", parts=parts, metadata=metadata)]
    )


def _plan(steps: int) -> Journal:
    """A finished plan of `steps` model steps, each but the last with two tool calls."""
    start = utc_now() - timedelta(minutes=5)
    at = start
    transcript = [Entry(role="user", text="plan it")]
    records: list[StepRecord] = []
    for step in range(steps):
        last = step == steps - 1
        calls = (
            ()
            if last
            else tuple(
                ToolCall(id=f"c{step}-{n}", tool=f"a2a_p{n}", arguments={"message": f"step {step}"})
                for n in range(2)
            )
        )
        transcript.append(Entry(role="assistant", text=f"thinking about step {step}", calls=calls))
        records.append(
            StepRecord(
                kind="model_step",
                started=at,
                seconds=0.8,
                model="m",
                input_tokens=900 + step,
                output_tokens=40,
                cost=0.001,
            )
        )
        at += timedelta(seconds=0.8)
        for call in calls:
            transcript.append(Entry(role="tool", call_id=call.id, tool=call.tool, text=_RESULT))
            records.append(
                StepRecord(
                    kind="tool_call",
                    started=at,
                    seconds=1.5,
                    call_id=call.id,
                    tool=call.tool,
                    partner=call.tool[4:],
                    partner_task=new_id(),
                    state="completed",
                )
            )
        at += timedelta(seconds=1.5)
    spent = Spent(
        steps=steps,
        tool_calls=2 * (steps - 1),
        input_tokens=900 * steps,
        output_tokens=40 * steps,
        cost=0.001 * steps,
        seconds=2.3 * steps,
    )
    return Journal(transcript=transcript, started=start, steps=records, spent=spent)


def _clear() -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{_STORE}{suffix}").unlink(missing_ok=True)


async def _fill() -> dict[str, str]:
    _clear()
    store = SqliteTaskStore(_STORE)
    await store.open()
    pages: dict[str, str] = {}
    try:
        for name, task in (
            ("a streamed answer (200 chunks)", _plain()),
            ("a swarm of 5 branches", _swarm(5)),
        ):
            await store.put(TaskRecord(task=task, skill=str((task.metadata or {})["skill"])))
            pages[name] = task.id
        for steps in (5, 25):
            task = _task(
                "planner",
                [Artifact(artifact_id=new_id(), name="response", parts=[Part(text="the answer")])],
            )
            await store.put(TaskRecord(task=task, skill="planner"))
            await _plan(steps).end(store, task.id, ttl=3600)
            pages[f"a plan of {steps} steps, {2 * (steps - 1)} tool calls"] = task.id
    finally:
        await store.close()
    return pages


async def run(rounds: int) -> None:
    pages = await _fill()
    # Warnings only: an access log line per request is not part of what is measured.
    settings = Settings(
        store=StoreSettings(kind="sqlite", path=str(_STORE)),
        server=ServerSettings(log_level="warning"),
    )
    app = create_app(settings, store=SqliteTaskStore(_STORE), skills={"echo": echo})
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://hub") as http,
    ):
        for name, task_id in pages.items():
            for suffix in ("", "/fragment"):
                path = f"/ui/tasks/{task_id}{suffix}"
                times = []
                cpu = time.process_time()
                for _ in range(rounds):
                    began = time.perf_counter()
                    answer = await http.get(path)
                    times.append((time.perf_counter() - began) * 1000)
                    assert answer.status_code == 200, (path, answer.status_code)
                per_request = (time.process_time() - cpu) / rounds * 1000
                kind = "fragment" if suffix else "page"
                print(
                    f"{name}, {kind} ({len(answer.content) // 1024} KiB): "
                    f"{statistics.median(times):.2f} ms ({min(times):.2f} to {max(times):.2f})"
                    f" [CPU {per_request:.2f} ms/req]"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="requests a figure")
    args = parser.parse_args()
    asyncio.run(run(args.rounds))


if __name__ == "__main__":
    main()
