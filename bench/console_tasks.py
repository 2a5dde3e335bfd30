"""The console's task list at 100,000 tasks: the server time of `/ui/tasks` with each filter.

A store is filled with `--tasks` tasks **through the store API** (`put_many` and
`put_children`, batches of 5,000), shaped as a busy hub leaves them: a user message and an
agent answer each (realistic requests naming an invoice, an order or a ticket, each with its
own number), spread over six skills, four callers and every end state; one task in five is a
`delegate` to one of eight partners and one in ten a `swarm` over three, with their lines in
the delegation ledger. The hub app then serves that store in this process, and the server
time of each request is measured around the ASGI call (first byte in to last byte out, no
network): the console renders the page exactly as a browser gets it.

Filters: none, state, skill, partner, context, text (a word in a quarter of the tasks, and
one task's own order number), the next page of the unfiltered list (its page token) and of
a text search; then, with auth on and signed in as a credential that owns a quarter of the
tasks, its list and its `caller` filter with a text search. Medians over `--rounds` rounds
of `--samples` requests, with the min and max, and this process's CPU per request.

    python -m bench.console_tasks                          # SQLite, 100,000 tasks
    python -m bench.console_tasks --store postgres --dsn postgresql://...   # an empty database
    python -m bench.console_tasks --tasks 10000 --rounds 1 --samples 5      # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager

from bench.console import _Timed
from bench.target import REPO
from hub.app import create_app
from hub.config import AuthSettings, CredentialSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.protocol import Message, Part, Role, Task, TaskState, TaskStatus, utc_now
from hub.registry import AgentEntry, Registry
from hub.skills import LocalSkill, SkillContext, skill
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.swarm import swarm
from hub.store import (
    ChildRecord,
    PostgresTaskStore,
    SqliteTaskStore,
    TaskRecord,
    TaskStore,
)

__all__ = ["main"]

_STORE = REPO / "var" / "bench-console-tasks.db"
_BATCH = 5_000
_SKILLS = ("echo", "translate", "summarise", "review", "delegate", "swarm")
_PARTNERS = ("billing", "search", "shipping", "legal", "crm", "inventory", "weather", "mail")
_CALLERS = ("ops", "alice", "bob", "carol")
_STATES = (TaskState.COMPLETED,) * 7 + (TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED)
_ASKS = (
    "Please summarise invoice INV-{n:06d} for ACME and flag late payments",
    "Where is my order ORD-{n:06d}? It was due on Monday",
    "Translate ticket TCK-{n:06d} into German and keep the product names",
    "Review the contract draft {n:06d} for liability clauses",
)
_KEY = "bench-console-tasks-key-9f3b"
Figure = tuple[float, float, float]


def _record(n: int, start: Any) -> tuple[TaskRecord, list[ChildRecord]]:
    skill = _SKILLS[n % 10 % len(_SKILLS)] if n % 5 else "delegate"
    if n % 10 == 3:
        skill = "swarm"
    task_id = f"{n:08x}-5e1d-4c7a-9b0e-{n:012x}"
    state = _STATES[n % len(_STATES)]
    ask = _ASKS[n % len(_ASKS)].format(n=n)
    task = Task(
        id=task_id,
        context_id=f"ctx-{n // 3:07d}",
        status=TaskStatus(state=state, timestamp=start + timedelta(milliseconds=n)),
        history=[
            Message(message_id=f"u{n}", role=Role.USER, parts=[Part(text=ask)]),
            Message(
                message_id=f"a{n}", role=Role.AGENT, parts=[Part(text=f"done with request {n}")]
            ),
        ],
    )
    agents: list[str] = []
    if skill == "delegate":
        agents = [_PARTNERS[n % len(_PARTNERS)]]
    elif skill == "swarm":
        agents = [_PARTNERS[(n + step) % len(_PARTNERS)] for step in (0, 1, 3)]
    lines = [
        ChildRecord(parent_id=task_id, agent=agent, child_id=f"{agent}-{n}", state=state)
        for agent in agents
    ]
    return TaskRecord(task=task, skill=skill, owner=_CALLERS[n % len(_CALLERS)]), lines


def _skills() -> dict[str, LocalSkill]:
    """The skills the stored tasks name: the built-in ones, and answering ones for the rest
    (the list only needs them known, to offer them as filters)."""

    def answering(name: str) -> LocalSkill:
        @skill(id=name, description=f"answers {name} requests")
        async def run(ctx: SkillContext) -> str:
            return ctx.text

        return run

    named = {"echo": echo, "delegate": delegate, "swarm": swarm}
    return {name: named.get(name) or answering(name) for name in _SKILLS}


def _store(kind: str, dsn: str) -> TaskStore:
    return PostgresTaskStore(dsn) if kind == "postgres" else SqliteTaskStore(_STORE)


def _clear() -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{_STORE}{suffix}").unlink(missing_ok=True)


async def _fill(kind: str, dsn: str, count: int) -> None:
    store = _store(kind, dsn)
    await store.open()
    start = utc_now() - timedelta(days=2)
    began = time.perf_counter()
    try:
        for first in range(0, count, _BATCH):
            made = [_record(n, start) for n in range(first, min(count, first + _BATCH))]
            await store.put_many([record for record, _ in made])
            await store.put_children([line for _, lines in made for line in lines])
    finally:
        await store.close()
    if kind == "postgres":
        # What autovacuum does on a running database after that many writes: the planner's
        # statistics (without them the partner filter took 135 ms a page in a first run).
        import asyncpg

        db = await asyncpg.connect(dsn)
        try:
            await db.execute("ANALYZE")
        finally:
            await db.close()
    print(
        f"filled {count:,} tasks into {kind} through the store API (put_many, put_children) "
        f"in {time.perf_counter() - began:.1f} s"
    )


@asynccontextmanager
async def _console(
    kind: str, dsn: str, *, auth: bool
) -> AsyncIterator[tuple[httpx.AsyncClient, _Timed]]:
    """The hub app on the filled store, a client of it (signed in as `ops` when `auth`),
    and the middleware that times it."""
    settings = Settings(
        store=StoreSettings(kind="postgres", dsn=dsn)
        if kind == "postgres"
        else StoreSettings(kind="sqlite", path=str(_STORE)),
        auth=AuthSettings(enabled=True, credentials=(CredentialSettings(name="ops", api_key=_KEY),))
        if auth
        else AuthSettings(),
    )
    registry = Registry([AgentEntry(name=name, url="http://127.0.0.1:9/") for name in _PARTNERS])
    app = create_app(
        settings,
        store=_store(kind, dsn),
        skills=_skills(),
        partners=Partners(registry),
    )
    timed = _Timed(app)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(timed), base_url="http://hub") as http,
    ):
        if auth:
            login = await http.get("/ui/login")
            token = re.search(r'name="_csrf" value="([^"]+)"', login.text)
            assert token is not None
            signed = await http.post(
                "/ui/login", data={"_csrf": token.group(1), "kind": "api_key", "secret": _KEY}
            )
            assert signed.status_code == 303, signed.text
        yield http, timed


def _next(html: str) -> str:
    found = re.search(r'id="next-page" href="([^"]+)"', html)
    assert found is not None, "no next page"
    return found.group(1).replace("&amp;", "&")


async def _measure(
    http: httpx.AsyncClient, timed: _Timed, pages: dict[str, str], rounds: int, samples: int
) -> dict[str, Figure]:
    times: dict[str, list[float]] = {name: [] for name in pages}
    cpu = dict.fromkeys(pages, 0.0)
    for _ in range(rounds):
        for name, path in pages.items():
            began = time.process_time()
            for _ in range(samples):
                answer = await http.get(path)
                assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
                assert "<tr data-task=" in answer.text, (path, "no task listed")
                times[name].append(timed.last * 1000)
            cpu[name] += time.process_time() - began
    figures = {}
    for name, values in times.items():
        figures[name] = (statistics.median(values), min(values), max(values))
        median, low, high = figures[name]
        per_call = cpu[name] / (rounds * samples) * 1000
        print(f"{name}: {median:.1f} ms ({low:.1f} to {high:.1f}) [CPU {per_call:.1f} ms/req]")
    return figures


async def _run(kind: str, dsn: str, rounds: int, samples: int, count: int) -> dict[str, Figure]:
    figures: dict[str, Figure] = {}
    rare = f"ORD-{count // 2 + 1:06d}"
    async with _console(kind, dsn, auth=False) as (http, timed):
        first = (await http.get("/ui/tasks")).text
        context = re.search(r"/tasks\?context=([^\"]+)\"", first)
        assert context is not None
        searched = (await http.get("/ui/tasks?q=invoice")).text
        pages = {
            "no filter": "/ui/tasks",
            "state (failed)": "/ui/tasks?state=TASK_STATE_FAILED",
            "skill (review)": "/ui/tasks?skill=review",
            "partner (billing)": "/ui/tasks?partner=billing",
            "context": f"/ui/tasks?context={context.group(1)}",
            "text, common word (invoice)": "/ui/tasks?q=invoice",
            f"text, one task ({rare})": f"/ui/tasks?q={rare}",
            "next page": _next(first),
            "next page of a text search": _next(searched),
        }
        figures.update(await _measure(http, timed, pages, rounds, samples))
    async with _console(kind, dsn, auth=True) as (http, timed):
        pages = {
            "signed in (auth on): own tasks": "/ui/tasks",
            "signed in: caller (ops)": "/ui/tasks?caller=ops",
            "signed in: caller and text": "/ui/tasks?caller=ops&q=invoice",
        }
        figures.update(await _measure(http, timed, pages, rounds, samples))
    return figures


def _render(figures: dict[str, Figure]) -> str:
    lines = ["| filter | server time, median (min to max) |", "|---|---|"]
    for name, (median, low, high) in figures.items():
        lines.append(f"| {name} | {median:.1f} ms ({low:.1f} to {high:.1f}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=10, help="requests per filter per round")
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--dsn", default="", help="an empty PostgreSQL database (--store postgres)")
    args = parser.parse_args(argv)
    if args.store == "postgres" and not args.dsn:
        raise SystemExit("--store postgres needs --dsn of an empty database")
    _clear()
    try:
        asyncio.run(_fill(args.store, args.dsn, args.tasks))
        figures = asyncio.run(_run(args.store, args.dsn, args.rounds, args.samples, args.tasks))
    finally:
        _clear()
    print(_render(figures))


if __name__ == "__main__":
    main()
