"""Three real `a2a-hub serve` replicas on one PostgreSQL database, used as one hub: a task
sent to one is followed on another and canceled on the third; a follow-up reaches a task
wherever it is parked; every replica lists every task, each caller only its own."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from tests.postgres import PostgresCluster, fresh_database_for_processes

from . import rpc
from .partnerproc import Child, PartnerSpec, hub_processes, partner_process
from .replica_skills import GATES_ENV, MARKS_ENV, Gates

KEYS = {"REPLICA_TEST_KEY_A": "key-of-a-0123456789", "REPLICA_TEST_KEY_B": "key-of-b-0123456789"}
AS_A = {"X-API-Key": KEYS["REPLICA_TEST_KEY_A"]}
AS_B = {"X-API-Key": KEYS["REPLICA_TEST_KEY_B"]}


AUTH = """auth:
  enabled: true
  credentials:
    - name: a
      api_key: "${REPLICA_TEST_KEY_A}"
      federation: [spawn_agent]
    - name: b
      api_key: "${REPLICA_TEST_KEY_B}"
"""


LEASE = 5.0
"""The replicas' lease: short, so a takeover comes soon after a replica is killed, yet long
enough that a replica kept waiting by two busy cores still renews in time (with a lease of
one second, renewals late by a second made live replicas' tasks be taken over)."""


def replica_config(path: Path, dsn: str, *, auth: bool = True, agents: Path | None = None) -> Path:
    """A replica's hub.yaml: the shared database with a short lease (`LEASE`), the test
    skills, and two credentials (or auth off), and an agents.yaml if one is named."""
    path.write_text(
        f"""server: {{log_level: warning}}
store: {{kind: postgres, dsn: '{dsn}', pool_size: 4, lease: {LEASE}s}}
{AUTH if auth else ""}{f"agents: {agents}" if agents else ""}
federation: {{allow_cidrs: [127.0.0.0/8]}}
push: {{allow_cidrs: [127.0.0.0/8]}}
skills:
  - builtin: echo
  - builtin: delegate
  - builtin: federation
  - module: tests.e2e.crash_skills:interview
  - module: tests.e2e.replica_skills:ticker
  - module: tests.e2e.replica_skills:until_canceled
  - module: tests.e2e.resume_skills:journaled
"""
    )
    return path


@pytest.fixture(scope="module")
def gates() -> Iterator[Gates]:
    """Where the replicas' `ticker` tasks wait for the test."""
    with Gates() as opened:
        yield opened


@pytest.fixture(scope="module")
def replicas(
    postgres_cluster: PostgresCluster, tmp_path_factory: pytest.TempPathFactory, gates: Gates
) -> Iterator[tuple[list[Child], Path]]:
    """Three replicas on one fresh database, and the folder where skills leave marks."""
    folder = tmp_path_factory.mktemp("replicas")
    marks = folder / "marks"
    marks.mkdir()
    with (
        pytest.MonkeyPatch.context() as patch,
        fresh_database_for_processes(postgres_cluster) as dsn,
    ):
        for name, value in {**KEYS, MARKS_ENV: str(marks), GATES_ENV: gates.url}.items():
            patch.setenv(name, value)
        configs = [replica_config(folder / f"hub{n}.yaml", dsn) for n in range(3)]
        with hub_processes(configs) as children:
            yield children, marks


class Webhook:
    """A push notification receiver on loopback, run on a thread: the states it was sent,
    by task id."""

    def __init__(self) -> None:
        self.states: dict[str, list[str]] = {}
        self._arrived = threading.Condition()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                task = json.loads(body)["task"]
                with hook._arrived:
                    hook.states.setdefault(task["id"], []).append(task["status"]["state"])
                    hook._arrived.notify_all()
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Webhook:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait_for_state(self, task_id: str, state: str, timeout: float = 60.0) -> list[str]:
        """The states sent for `task_id`, once `state` is among them."""
        with self._arrived:
            arrived = self._arrived.wait_for(
                lambda: state in self.states.get(task_id, []), timeout=timeout
            )
            assert arrived, f"no {state} notification of task {task_id}: {self.states}"
            return list(self.states[task_id])


def watch_with_push(url: str, task_id: str, webhook: Webhook, headers: dict[str, str]) -> None:
    """Create a push config of `task_id` at the replica `url`, delivering to `webhook`."""
    params = {"taskId": task_id, "url": webhook.url}
    rpc.call(url, "CreateTaskPushNotificationConfig", params, headers=headers)


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as opened:
        yield opened


@dataclass
class Subscriber:
    """A SubscribeToTask stream (or the stream of another method) read on a thread: every
    event's result, until it ends."""

    url: str
    task_id: str
    headers: dict[str, str] = field(default_factory=lambda: dict(AS_A))
    method: str = "SubscribeToTask"
    params: dict[str, Any] | None = None
    stop_after: int | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    first: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    refused: str | None = None
    """The body of an answer that was not an event stream."""
    failure: str | None = None
    """What stopped the reading thread, if it raised."""

    def start(self) -> Subscriber:
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        assert self.first.wait(60), "the subscription did not start"
        if self.failure is not None and not self.events:
            raise AssertionError(f"the subscription failed: {self.failure}")
        if self.refused is not None:
            seen = rpc.post(self.url, "GetTask", {"id": self.task_id}, headers=self.headers)
            raise AssertionError(
                f"the subscription was refused: {self.refused}\nthe task there: {seen.text}"
            )
        return self

    def _read(self) -> None:
        try:
            self._read_events()
        except BaseException as exc:
            self.failure = repr(exc)
            raise
        finally:
            self.first.set()

    def _read_events(self) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": self.method,
            "params": self.params or {"id": self.task_id},
        }
        with (
            httpx.Client(timeout=60) as client,
            connect_sse(
                client, "POST", self.url, json=body, headers={**rpc.VERSION, **self.headers}
            ) as source,
        ):
            if not source.response.headers["content-type"].startswith("text/event-stream"):
                self.refused = source.response.read().decode(errors="replace")
                return
            for sse in source.iter_sse():
                document = sse.json()
                assert "result" in document, document
                self.events.append(document["result"])
                self.first.set()
                if self.stop_after is not None and len(self.events) >= self.stop_after:
                    return  # the client cuts its connection

    def ended(self) -> list[dict[str, Any]]:
        assert self.thread is not None
        self.thread.join(60)
        assert not self.thread.is_alive(), "the stream did not end"
        return self.events


def states(events: list[dict[str, Any]]) -> list[str]:
    return [e["statusUpdate"]["status"]["state"] for e in events if "statusUpdate" in e]


def ticks(events: list[dict[str, Any]]) -> list[int]:
    """The tick numbers of the status updates (and of the snapshot) of a ticker task."""
    found = []
    for event in events:
        holder = event.get("statusUpdate") or event.get("task")
        if holder is None:
            continue  # the artifact
        text = rpc.status_text(holder)
        if text.startswith("tick "):
            found.append(int(text.split()[1]))
    return found


def send(url: str, skill: str, *, headers: dict[str, str] = AS_A, **config: Any) -> dict[str, Any]:
    return rpc.send(url, "go", {"skill": skill}, headers=headers, **config)


def test_a_task_sent_to_one_replica_is_followed_on_a_second_and_canceled_on_the_third(
    replicas: tuple[list[Child], Path], stack: ExitStack
) -> None:
    (first, second, third), marks = replicas
    task = send(first.url, "until_canceled", return_immediately=True)
    follower = Subscriber(second.url, task["id"]).start()
    webhook = stack.enter_context(Webhook())
    watch_with_push(second.url, task["id"], webhook, AS_A)

    canceled = rpc.call(third.url, "CancelTask", {"id": task["id"]}, headers=AS_A)

    assert rpc.state(canceled) == "TASK_STATE_CANCELED"
    events = follower.ended()
    assert events[0]["task"]["id"] == task["id"]
    assert states(events)[-1] == "TASK_STATE_CANCELED"
    rpc.wait_for(
        lambda: True if (marks / f"{task['id']}.stopped").exists() else None,
        what="the skill on the first replica to stop",
    )
    for replica in (first, second, third):
        seen = rpc.call(replica.url, "GetTask", {"id": task["id"]}, headers=AS_A)
        assert rpc.state(seen) == "TASK_STATE_CANCELED"
    # The config was made on the second replica; the third, which wrote the cancel, sent it.
    assert webhook.wait_for_state(task["id"], "TASK_STATE_CANCELED") == ["TASK_STATE_CANCELED"]


def test_a_subscriber_on_another_replica_sees_every_update_in_order(
    replicas: tuple[list[Child], Path], gates: Gates
) -> None:
    (first, second, _), _ = replicas
    task = send(first.url, "ticker", return_immediately=True)

    follower = Subscriber(second.url, task["id"]).start()
    for gate in ("start", "finish"):
        gates.open(task["id"], gate)
    events = follower.ended()

    assert "task" in events[0]
    seen = ticks(events)
    assert seen == list(range(seen[0], 11))
    assert states(events)[-1] == "TASK_STATE_COMPLETED"


def test_a_cut_stream_resumed_on_another_replica_starts_with_the_task_then_only_newer_events(
    replicas: tuple[list[Child], Path], gates: Gates
) -> None:
    (first, second, third), _ = replicas
    task = send(first.url, "ticker", return_immediately=True)

    cut = Subscriber(second.url, task["id"], stop_after=3).start()
    gates.open(task["id"], "start")
    before = cut.ended()
    # The ticker waits before its last tick: the task is still running when it is resumed.
    resuming = Subscriber(third.url, task["id"]).start()
    gates.open(task["id"], "finish")
    after = resuming.ended()

    assert "task" in after[0]
    assert ticks(before) == list(range(ticks(before)[0], ticks(before)[-1] + 1))
    resumed = ticks(after)
    assert resumed[0] >= ticks(before)[-1]
    assert resumed == list(range(resumed[0], 11))
    assert states(after)[-1] == "TASK_STATE_COMPLETED"


def test_a_follow_up_on_another_replica_continues_the_parked_task(
    replicas: tuple[list[Child], Path],
) -> None:
    (first, second, third), _ = replicas
    parked = send(first.url, "interview")
    assert rpc.state(parked) == "TASK_STATE_INPUT_REQUIRED"

    answer = rpc.message("Ada") | {"taskId": parked["id"]}
    done = rpc.call(second.url, "SendMessage", {"message": answer}, headers=AS_A)["task"]

    assert rpc.state(done) == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]
    seen = rpc.call(third.url, "GetTask", {"id": parked["id"]}, headers=AS_A)
    assert rpc.state(seen) == "TASK_STATE_COMPLETED"


def test_every_replica_lists_every_task_and_each_caller_only_its_own(
    replicas: tuple[list[Child], Path],
) -> None:
    children, _ = replicas
    mine = {send(child.url, "echo", headers=AS_A)["id"] for child in children}
    theirs = {send(child.url, "echo", headers=AS_B)["id"] for child in children}

    for child in children:
        listed_a = rpc.call(child.url, "ListTasks", {"pageSize": 100}, headers=AS_A)["tasks"]
        listed_b = rpc.call(child.url, "ListTasks", {"pageSize": 100}, headers=AS_B)["tasks"]
        assert mine <= {task["id"] for task in listed_a}
        assert not theirs & {task["id"] for task in listed_a}
        assert theirs == {task["id"] for task in listed_b}
        hidden = rpc.post(child.url, "GetTask", {"id": next(iter(theirs))}, headers=AS_A).json()
        assert hidden["error"]["code"] == -32001


def test_of_three_replicas_canceling_one_task_at_once_exactly_one_wins(
    replicas: tuple[list[Child], Path],
) -> None:
    children, _ = replicas
    task = send(children[0].url, "until_canceled", return_immediately=True)
    answers: list[dict[str, Any]] = []

    def cancel(url: str) -> None:
        answers.append(rpc.post(url, "CancelTask", {"id": task["id"]}, headers=AS_A).json())

    threads = [threading.Thread(target=cancel, args=(child.url,)) for child in children]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    won = [answer["result"] for answer in answers if "result" in answer]
    refused = [answer["error"]["code"] for answer in answers if "error" in answer]
    assert [rpc.state(task) for task in won] == ["TASK_STATE_CANCELED"]
    assert refused == [-32002, -32002]


def test_a_partner_spawned_on_one_replica_is_served_by_every_replica_and_a_new_one(
    replicas: tuple[list[Child], Path],
) -> None:
    children, marks = replicas
    with partner_process(PartnerSpec(name="echo", behaviour="echo")) as (_, partner):
        agent = {"name": "spawned-echo", "url": partner}
        spawned = rpc.send(
            children[0].url, "spawn", {"swarmKind": "spawn_agent", "agent": agent}, headers=AS_A
        )
        assert rpc.state(spawned) == "TASK_STATE_COMPLETED"

        def delegated(url: str) -> dict[str, Any] | None:
            reply = rpc.post(
                url,
                "SendMessage",
                {
                    "message": rpc.message("hello"),
                    "metadata": {"skill": "delegate", "agent": "spawned-echo"},
                },
                headers=AS_A,
            ).json()
            task = reply.get("result", {}).get("task")
            return task if task and rpc.state(task) == "TASK_STATE_COMPLETED" else None

        for child in children[1:]:
            rpc.wait_for(lambda url=child.url: delegated(url), what="the partner on a replica")
        config = marks.parent / "hub0.yaml"
        with hub_processes([config]) as [started_later]:
            assert delegated(started_later.url) is not None


def test_a_replica_that_missed_the_notice_of_a_foreign_write_stops_its_skill_at_its_next_lease(
    replicas: tuple[list[Child], Path],
) -> None:
    (first, _, _), marks = replicas
    task = send(first.url, "until_canceled", return_immediately=True)
    dsn = re.search(r"dsn: '([^']+)'", (marks.parent / "hub0.yaml").read_text())
    assert dsn is not None

    async def write_behind_its_back() -> None:
        import asyncpg

        db = await asyncpg.connect(dsn.group(1))
        try:
            # Triggers off: no NOTIFY, as if the notice were lost on the way.
            await db.execute("SET session_replication_role = replica")
            body = json.loads(
                await db.fetchval("SELECT body FROM tasks WHERE task_id = $1", task["id"])
            )
            body["status"] = {"state": "TASK_STATE_CANCELED"}
            await db.execute(
                "UPDATE tasks SET body = $2, state = 'TASK_STATE_CANCELED', "
                "version = version + 1, replica = 'elsewhere' WHERE task_id = $1",
                task["id"],
                json.dumps(body).encode(),
            )
        finally:
            await db.close()

    asyncio.run(write_behind_its_back())

    rpc.wait_for(
        lambda: True if (marks / f"{task['id']}.stopped").exists() else None,
        what="the first replica to let go of the task and stop its skill",
    )
    seen = rpc.call(first.url, "GetTask", {"id": task["id"]}, headers=AS_A)
    assert rpc.state(seen) == "TASK_STATE_CANCELED"


def test_a_stream_and_a_blocking_send_on_the_running_replica_end_with_a_cancel_made_elsewhere(
    replicas: tuple[list[Child], Path],
) -> None:
    (first, second, _), _ = replicas
    params = {"message": rpc.message("go"), "metadata": {"skill": "until_canceled"}}
    streamed = Subscriber(first.url, "", method="SendStreamingMessage", params=params).start()
    blocking: list[dict[str, Any]] = []
    waiter = threading.Thread(
        target=lambda: blocking.append(rpc.call(first.url, "SendMessage", params, headers=AS_A))
    )
    waiter.start()
    [waiting] = rpc.wait_for(
        lambda: (
            [
                task
                for task in rpc.call(
                    first.url, "ListTasks", {"status": "TASK_STATE_WORKING"}, headers=AS_A
                )["tasks"]
                if task["id"] != streamed.events[0]["task"]["id"]
            ]
            or None
        ),
        what="the blocking send's task to work",
    )

    for task_id in (streamed.events[0]["task"]["id"], waiting["id"]):
        canceled = rpc.call(second.url, "CancelTask", {"id": task_id}, headers=AS_A)
        assert rpc.state(canceled) == "TASK_STATE_CANCELED"

    assert states(streamed.ended())[-1] == "TASK_STATE_CANCELED"
    waiter.join(30)
    assert [rpc.state(reply["task"]) for reply in blocking] == ["TASK_STATE_CANCELED"]
