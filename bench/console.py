"""The console's two figures: the task list's server time with 100,000 stored tasks, and how
long a task change takes to reach an open task page.

1. **Task list.** A SQLite store is filled with `--tasks` tasks through the store API
   (`put_many`, batches of 10,000; each a task of the shape the hub writes: one user message,
   one agent message, one artifact), then the hub app serves it in this process. The server
   time of a request is measured around the ASGI call (first byte in to last byte out, no
   network), for the first page, a page filtered by state, one filtered by skill, the second
   page (through its page token) and a task's page. Medians over `--samples` requests, with
   the min and max, and this process's CPU per request.
2. **Live updates.** An `a2a-hub serve` process runs `bench/console.yaml`, whose skill
   (`bench/console_skill.py`) changes its task every 0.3 s and writes into each progress
   message the moment just before the change; the task's page is open in headless Chromium
   (Debian's package, through Playwright). For each change, the page's own clock
   (`Date.now()`, the same clock) says when the event was heard (`EventSource`), when the new
   state and status were shown (from the event), and when the task's part of the page had
   been fetched again and swapped in.

    python -m bench.console                          # 100,000 tasks, 30 samples, 30 changes
    python -m bench.console --tasks 10000 --changes 10
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import statistics
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
from asgi_lifespan import LifespanManager

from bench.target import REPO, Target, hub_command, start_server
from hub.app import create_app
from hub.config import Settings, StoreSettings
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

_STORE = REPO / "var" / "bench-console.db"
_BATCH = 10_000
_SKILLS = ("echo", "translate", "summarise", "review")

Figure = tuple[float, float, float]
_LIVE_STORE = REPO / "var" / "bench-console-live.db"
_SEEN = "benchSeen"
_STATE = "document.getElementById('task-state').textContent"
_STATUS_TEXT = "(document.getElementById('status-text') || {}).textContent"
_REFETCHED = (
    "Number(document.getElementById('live').dataset.updated || 0)"
    " >= Number(document.getElementById('live').dataset.heard)"
)
_TIMES = (
    "['heard', 'shown', 'updated'].map(key => Number(document.getElementById('live').dataset[key]))"
)


def _figure(values: list[float]) -> Figure:
    return statistics.median(values), min(values), max(values)


def _show(name: str, figure: Figure, unit: str = "ms") -> str:
    median, low, high = figure
    return f"{name}: {median:.2f} {unit} ({low:.2f} to {high:.2f})"


def _record(number: int, start: Any) -> TaskRecord:
    state = TaskState.COMPLETED if number % 10 else TaskState.FAILED
    task_id = new_id()
    context_id = f"ctx-{number // 10}"
    text = f"request number {number}"
    task = Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=start + timedelta(milliseconds=number)),
        history=[
            Message(message_id=new_id(), role=Role.USER, parts=[Part(text=text)]),
            Message(message_id=new_id(), role=Role.AGENT, parts=[Part(text="working on it")]),
        ],
        artifacts=[Artifact(artifact_id=new_id(), name="response", parts=[Part(text=text)])],
        metadata={"skill": _SKILLS[number % len(_SKILLS)]},
    )
    return TaskRecord(task=task, skill=_SKILLS[number % len(_SKILLS)], owner="")


def _clear() -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{_STORE}{suffix}").unlink(missing_ok=True)


async def _fill(count: int) -> None:
    _clear()
    store = SqliteTaskStore(_STORE)
    await store.open()
    start = utc_now() - timedelta(days=1)
    began = time.perf_counter()
    try:
        for first in range(0, count, _BATCH):
            await store.put_many(
                [_record(n, start) for n in range(first, min(count, first + _BATCH))]
            )
    finally:
        await store.close()
    print(f"filled {count:,} tasks in {time.perf_counter() - began:.1f} s")


class _Timed:
    """ASGI middleware: the server time of each HTTP request, first call to last body."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.last = 0.0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()

        async def timed_send(message: Any) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.last = time.perf_counter() - began

        await self.app(scope, receive, timed_send)


async def task_list(count: int, samples: int) -> dict[str, Figure]:
    await _fill(count)
    settings = Settings(store=StoreSettings(kind="sqlite", path=str(_STORE)))
    app = create_app(settings, store=SqliteTaskStore(_STORE), skills={"echo": echo})
    timed = _Timed(app)
    figures: dict[str, Figure] = {}
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(timed), base_url="http://hub") as http,
    ):
        first = await http.get("/ui/tasks")
        assert first.status_code == 200, first.text
        second = first.text.split('id="next-page" href="', 1)[1].split('"', 1)[0]
        task_id = first.text.split('<tr data-task="', 1)[1].split('"', 1)[0]
        pages = {
            "first page": "/ui/tasks",
            "state filter (failed)": "/ui/tasks?state=TASK_STATE_FAILED",
            "skill filter (review)": "/ui/tasks?skill=review",
            "second page (page token)": second.replace("&amp;", "&"),
            "a task's page": f"/ui/tasks/{task_id}",
        }
        for name, path in pages.items():
            times: list[float] = []
            cpu = time.process_time()
            for _ in range(samples):
                answer = await http.get(path)
                assert answer.status_code == 200, (path, answer.status_code)
                times.append(timed.last * 1000)
            figures[name] = _figure(times)
            per_call = (time.process_time() - cpu) / samples * 1000
            print(_show(f"{name}, server time", figures[name]), f"[CPU {per_call:.2f} ms/req]")
    return figures


async def _until(page: Any, expression: str, *, after: str | None = None) -> None:
    """Poll the page until `expression` is true (and, with `after`, the status text differs
    from `window[after]`), evaluated through the DevTools protocol: the page's CSP forbids
    the string evaluation Playwright's own waits use. The figures are read from the page's
    clock, not from this poll."""
    if after is not None:
        expression = f"({expression}) && {_STATUS_TEXT} !== window.{after}"
    with anyio.fail_after(10):
        for _ in itertools.count():
            if await page.evaluate(expression):
                return
            await anyio.sleep(0.01)


async def live_updates(changes: int) -> dict[str, Figure]:
    from playwright.async_api import async_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("needs Debian's chromium package (make chromium)")
    target = Target(
        name="hub",
        command=lambda port: hub_command(port, config="bench/console.yaml", store=_LIVE_STORE),
        store=_LIVE_STORE,
    )
    heard: list[float] = []
    shown: list[float] = []
    redrawn: list[float] = []
    log = REPO / "bench" / "results" / "console-hub.log"
    with start_server(target, core=None, log_path=log) as server:
        url = f"http://127.0.0.1:{server.port}"
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
            )
            async with httpx.AsyncClient(base_url=url, headers={"A2A-Version": "1.0"}) as http:
                body = {
                    "message": {
                        "messageId": new_id(),
                        "role": "ROLE_USER",
                        "parts": [{"text": str(changes)}],
                    },
                    "configuration": {"returnImmediately": True},
                }
                task_id = (await http.post("/message:send", json=body)).json()["task"]["id"]
            page = await browser.new_page()
            await page.goto(f"{url}/ui/tasks/{task_id}")
            await _until(page, "document.getElementById('live').dataset.following === 'yes'")
            state = await page.evaluate(_STATE)
            assert state == "submitted" or state == "working", f"the task is {state} already"
            for _ in range(changes):
                await _until(page, f"({_STATUS_TEXT} || '').startsWith('step ')", after=_SEEN)
                text = await page.evaluate(_STATUS_TEXT)
                await page.evaluate(f"() => {{ window.{_SEEN} = {json.dumps(text)}; }}")
                moment = float(text.rsplit("@ ", 1)[1])
                await _until(page, _REFETCHED)
                times = await page.evaluate(_TIMES)
                heard.append(times[0] - moment)
                shown.append(times[1] - moment)
                redrawn.append(times[2] - moment)
            await browser.close()
    figures = {
        "change to event heard by the page": _figure(heard),
        "change to new state shown": _figure(shown),
        "change to the task's part of the page fetched again": _figure(redrawn),
    }
    for name, figure in figures.items():
        print(_show(name, figure))
    for name, values in (("shown", shown), ("fetched again", redrawn)):
        print(f"p95 {name}: {statistics.quantiles(values, n=20)[-1]:.2f} ms over {changes} changes")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--changes", type=int, default=30)
    args = parser.parse_args(argv)
    print(f"python {os.sys.version.split()[0]}, {os.cpu_count()} cores (shared machine)")

    async def run() -> None:
        await task_list(args.tasks, args.samples)
        await live_updates(args.changes)

    asyncio.run(run())


if __name__ == "__main__":
    main()
