"""What a request and a start-up cost as the store grows: 1,000 against 1,000,000 tasks.

A hub process first makes a sample of real tasks (SendMessage to the echo skill); the store is
then filled **through the store API** (`SqliteTaskStore.put_many`, in batches), each record a
copy of a sampled task with its own id, context and time, so the rows have the shape the hub
writes (checked: every sampled row has the same columns and parses as a task). A few tasks are
left waiting for input and have a live partner task in the delegation ledger, as a running hub
would leave them.

At each size, in the same run:

- `ListTasks` first page (no filter, 50 tasks) and a contextId page, through the store and
  through a hub process serving the file (`GET /tasks`, over loopback);
- `GetTask` through the hub;
- the store work of a start-up: open the file, find the tasks a stopped hub left running, the
  live partner tasks and the push configs of live tasks;
- beside them, what the same look-ups cost the way they were done before the maintained counts
  and partial indexes: `count(*)` over the tasks, and a scan for the running states.

Figures are medians over `--samples` calls, with the min and max.

    python -m bench.store_scale                      # 1,000 then 1,000,000 tasks
    python -m bench.store_scale --sizes 1000,100000  # a quicker run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import httpx

from bench.target import REPO, Target, exit_on_sigterm, hub_command, start_server
from hub.protocol import ListTasksRequest, TaskState
from hub.push.notifier import LIVE_STATES
from hub.store import ChildRecord, SqliteTaskStore, TaskQuery, TaskRecord
from hub.tasks.listing import list_tasks, recover_interrupted

__all__ = ["main"]

_STORE = REPO / "var" / "bench-store-scale.db"
_V1 = {"A2A-Version": "1.0"}
_WAITING_EVERY = 100_000  # one task in this many is left waiting for input
_TASKS_PER_CONTEXT = 10

Figure = tuple[float, float, float]  # median, min, max in milliseconds


def _clear() -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{_STORE}{suffix}").unlink(missing_ok=True)


def _hub_target() -> Target:
    # store=None: the harness must not clear the file the run filled.
    return Target(name="hub", command=lambda port: hub_command(port, store=_STORE))


def _sample(count: int) -> TaskRecord:
    """Tasks made by a real hub: check they share one row shape, return one as the model."""
    log = REPO / "bench" / "results" / "store-scale-hub.log"
    with (
        start_server(_hub_target(), core=None, log_path=log) as hub,
        httpx.Client(base_url=f"http://127.0.0.1:{hub.port}", headers=_V1) as http,
    ):
        for n in range(count):
            body = {
                "jsonrpc": "2.0",
                "id": n,
                "method": "SendMessage",
                "params": {
                    "message": {
                        "messageId": f"sample-{n}",
                        "role": "ROLE_USER",
                        "parts": [{"text": f"sample task {n}"}],
                    }
                },
            }
            http.post("/", json=body).raise_for_status()
    with sqlite3.connect(_STORE) as db:
        rows = db.execute("SELECT skill, owner, state, body FROM tasks").fetchall()
    db.close()
    shapes = {(skill, owner, state) for skill, owner, state, _ in rows}
    if len(rows) != count or len(shapes) != 1:
        raise SystemExit(f"the hub wrote {len(rows)} rows of shapes {shapes}, expected {count}")
    record = asyncio.run(_first(_STORE))
    print(f"sampled {count} tasks made by the hub: one row shape {shapes.pop()}")
    return record


async def _first(path: Path) -> TaskRecord:
    store = SqliteTaskStore(path)
    await store.open()
    try:
        page = await store.list(TaskQuery(page_size=1))
    finally:
        await store.close()
    return page.records[0]


async def _fill(model: TaskRecord, start: int, stop: int, batch: int) -> None:
    store = SqliteTaskStore(_STORE)
    await store.open()
    task = model.task
    base = task.status.timestamp
    assert base is not None
    try:
        for first in range(start, stop, batch):
            records = []
            children = []
            for n in range(first, min(first + batch, stop)):
                waiting = n % _WAITING_EVERY == _WAITING_EVERY - 1
                state = TaskState.INPUT_REQUIRED if waiting else TaskState.COMPLETED
                status = task.status.model_copy(
                    update={"state": state, "timestamp": base + timedelta(milliseconds=n)}
                )
                copy = task.model_copy(
                    update={
                        "id": f"fill-{n:07d}",
                        "context_id": f"ctx-{n // _TASKS_PER_CONTEXT:06d}",
                        "status": status,
                    }
                )
                records.append(TaskRecord(task=copy, skill=model.skill, owner=model.owner))
                if waiting:
                    children.append(
                        ChildRecord(
                            parent_id=copy.id,
                            agent="partner",
                            child_id=f"child-{n}",
                            state=TaskState.WORKING,
                        )
                    )
            await store.put_many(records)
            if children:
                await store.put_children(children)
    finally:
        await store.close()


def _figure(samples: list[float]) -> Figure:
    ms = [s * 1000 for s in samples]
    return statistics.median(ms), min(ms), max(ms)


async def _time_async(call: Callable[[], Awaitable[object]], samples: int) -> Figure:
    taken = []
    for _ in range(samples):
        began = time.perf_counter()
        await call()
        taken.append(time.perf_counter() - began)
    return _figure(taken)


def _time_sql(query: str, samples: int) -> Figure:
    with sqlite3.connect(_STORE) as db:
        taken = []
        for _ in range(samples):
            began = time.perf_counter()
            db.execute(query).fetchall()
            taken.append(time.perf_counter() - began)
    db.close()
    return _figure(taken)


async def _start_up() -> None:
    store = SqliteTaskStore(_STORE)
    await store.open()
    try:
        await recover_interrupted(store, [])
        await store.find_live_children()
        await store.find_push_configs(LIVE_STATES)
    finally:
        await store.close()


async def _store_figures(samples: int) -> dict[str, Figure]:
    figures = {"start-up store work": await _time_async(_start_up, samples)}
    store = SqliteTaskStore(_STORE)
    await store.open()
    try:
        page = await list_tasks(store, ListTasksRequest())
        context = page.tasks[0].context_id
        figures["ListTasks first page, store"] = await _time_async(
            lambda: list_tasks(store, ListTasksRequest()), samples
        )
        figures["ListTasks contextId page, store"] = await _time_async(
            lambda: list_tasks(store, ListTasksRequest(context_id=context)), samples
        )
    finally:
        await store.close()
    figures["before: count(*) of all tasks"] = _time_sql("SELECT count(*) FROM tasks", samples)
    figures["before: scan for running tasks"] = _time_sql(
        "SELECT body FROM tasks NOT INDEXED WHERE state IN "
        "('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')",
        samples,
    )
    return figures


def _hub_figures(samples: int) -> dict[str, Figure]:
    log = REPO / "bench" / "results" / "store-scale-hub.log"
    figures: dict[str, Figure] = {}
    began = time.perf_counter()
    with start_server(_hub_target(), core=None, log_path=log) as hub:
        figures["hub start to first card (0.1 s polls)"] = _figure([time.perf_counter() - began])
        with httpx.Client(base_url=f"http://127.0.0.1:{hub.port}", headers=_V1) as http:
            first = http.get("/tasks").json()
            task_id = first["tasks"][0]["id"]

            def timed(path: str) -> Figure:
                taken = []
                for _ in range(samples):
                    began = time.perf_counter()
                    http.get(path).raise_for_status()
                    taken.append(time.perf_counter() - began)
                return _figure(taken)

            figures["ListTasks first page, via hub"] = timed("/tasks")
            figures["GetTask, via hub"] = timed(f"/tasks/{task_id}")
    print(f"the hub's first ListTasks page says totalSize {first['totalSize']:,}")
    return figures


def _render(results: dict[int, dict[str, Figure]]) -> str:
    sizes = sorted(results)
    names = list(results[sizes[0]])
    head = "| figure | " + " | ".join(f"{size:,} tasks" for size in sizes) + " |"
    lines = [head, "|---" * (len(sizes) + 1) + "|"]
    for name in names:
        cells = []
        for size in sizes:
            median, low, high = results[size][name]
            if name.startswith("hub start"):
                cells.append(f"{median / 1000:.2f} s")
            else:
                cells.append(f"{median:.2f} ms ({low:.2f} to {high:.2f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Fill the store to each size in turn and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,1000000", help="store sizes, ascending")
    parser.add_argument("--batch", type=int, default=10_000, help="records per put_many")
    parser.add_argument("--sample", type=int, default=20, help="tasks made through the hub")
    parser.add_argument("--samples", type=int, default=50, help="calls timed per figure")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(","))
    exit_on_sigterm()
    _clear()
    model = _sample(args.sample)
    filled = args.sample
    results: dict[int, dict[str, Figure]] = {}
    try:
        for size in sizes:
            began = time.perf_counter()
            asyncio.run(_fill(model, filled, size, args.batch))
            print(
                f"filled to {size:,} tasks through the store API (put_many, batches of "
                f"{args.batch:,}) in {time.perf_counter() - began:.1f} s"
            )
            filled = size
            results[size] = asyncio.run(_store_figures(args.samples))
            results[size].update(_hub_figures(args.samples))
    finally:
        _clear()
    if args.json:
        print(json.dumps({str(size): figures for size, figures in results.items()}, indent=2))
    else:
        print(_render(results))


if __name__ == "__main__":
    main()
