"""Replicas whose PostgreSQL server restarts (`pg_ctl restart -m fast`) while they run tasks
that report progress: nothing acknowledged is stranded. Every task ends and every subscriber
sees its end; a replica stopped with SIGTERM fails what it still runs; the outage is logged
once when it starts and once when it ends."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hub.tasks.listing import INTERRUPTED_BY_RESTART
from tests.postgres import PostgresCluster, fresh_database_for_processes, running_cluster

from . import rpc
from .load import Load
from .partnerproc import Child, hub_child, stop_all
from .replica_skills import MARKS_ENV
from .test_replicas import Subscriber, states

TASKS = 16
NO_AUTH: dict[str, str] = {}
_OUTAGE = "is unreachable"
_RECOVERY = "answers again"


def blip_config(path: Path, dsn: str) -> Path:
    """A replica's hub.yaml: the shared database with a 5 s lease, auth off, the skills."""
    path.write_text(
        f"""server: {{log_level: warning}}
store: {{kind: postgres, dsn: '{dsn}', pool_size: 4, lease: 5s}}
skills:
  - builtin: echo
  - module: tests.e2e.blip_skills:steady
"""
    )
    return path


@contextmanager
def replicas_on(configs: list[Path]) -> Iterator[list[Child]]:
    """`a2a-hub serve` for each config, started in parallel; a minute each to start, since
    three replicas and PostgreSQL share two busy cores here."""
    children: list[Child] = []
    try:
        children = [hub_child(config) for config in configs]
        for child in children:
            child.wait_ready(timeout=60)
        yield children
    finally:
        stop_all(children)


@pytest.fixture
def own_cluster() -> Iterator[PostgresCluster]:
    """A cluster of this test's own, since the test restarts it."""
    with running_cluster() as cluster:
        yield cluster


def _answers(url: str) -> bool | None:
    return True if "result" in rpc.post(url, "ListTasks", {}).json() else None


def _outage_over(replica: Child) -> bool | None:
    """True once the replica's log says no outage, or says one ended after it began."""
    lines = [line for line in replica.lines if _OUTAGE in line or _RECOVERY in line]
    return True if not lines or _RECOVERY in lines[-1] else None


@pytest.mark.parametrize("replica_count", [1, 3])
def test_every_acknowledged_task_ends_and_every_subscriber_sees_it_after_a_postgres_restart(
    own_cluster: PostgresCluster, tmp_path: Path, replica_count: int
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    with (
        pytest.MonkeyPatch.context() as patch,
        fresh_database_for_processes(own_cluster) as dsn,
    ):
        patch.setenv(MARKS_ENV, str(marks))
        configs = [blip_config(tmp_path / f"hub{n}.yaml", dsn) for n in range(replica_count)]
        with replicas_on(configs) as replicas:
            urls = [replica.url for replica in replicas]
            # With three replicas the first one is stopped later on: its tasks are followed
            # on the others, and every subscription is made on a replica that stays up.
            watch = urls[1:] or urls
            started = [
                rpc.send(urls[n % len(urls)], "go", {"skill": "steady"}, return_immediately=True)
                for n in range(TASKS)
            ]
            subscribers = [
                Subscriber(watch[n % len(watch)], task["id"], headers=NO_AUTH).start()
                for n, task in enumerate(started)
            ]
            with Load(urls, refusal="STORE_UNAVAILABLE") as load:
                rpc.wait_for(lambda: load.acknowledged or None, what="a first echo task")
                own_cluster.restart()
                for url in urls:
                    rpc.wait_for(
                        lambda url=url: _answers(url),
                        what="the replica to reach the database again",
                        timeout=30,
                    )
                # The end of an outage is said once the server has answered for a while:
                # wait for it before a replica is stopped, or its last line is cut off.
                for replica in replicas:
                    rpc.wait_for(
                        lambda replica=replica: _outage_over(replica),
                        what="the replica to say the outage ended",
                        timeout=30,
                    )
            stopped: list[str] = []
            if replica_count > 1:
                # The first replica still runs its share of the tasks: SIGTERM fails them.
                stopped = [task["id"] for n, task in enumerate(started) if n % len(urls) == 0]
                replicas[0].process.send_signal(signal.SIGTERM)
                replicas[0].process.wait(timeout=30)
            (marks / "release").write_text("go")

            pairs = zip(started, subscribers, strict=True)
            ended = {task["id"]: subscriber.ended() for task, subscriber in pairs}
            survivor = urls[-1]
            for task_id in [*ended, *load.acknowledged]:
                assert rpc.settled(survivor, task_id, timeout=30)["id"] == task_id
            said = "\n".join(replica.output() for replica in replicas)

        for task_id, events in ended.items():
            last = [e for e in events if "statusUpdate" in e][-1]["statusUpdate"]
            if task_id in stopped:
                assert states(events)[-1] == "TASK_STATE_FAILED", said
                assert rpc.status_text(last) == INTERRUPTED_BY_RESTART, said
            else:
                assert states(events)[-1] == "TASK_STATE_COMPLETED", said
        # Each replica said the outage once when it began and once when it ended.
        assert "Traceback" not in said, said
        for replica in replicas:
            lines = [line for line in replica.lines if _OUTAGE in line or _RECOVERY in line]
            assert [_OUTAGE in line for line in lines] == [True, False], said
