"""Replicas that lose one of their own, or their database: a replica killed with SIGKILL
under load has its running tasks taken over once its lease expires (failed, or a resumable
skill's adopted and finished by the survivor), and a PostgreSQL restart under running
replicas costs the requests made meanwhile a clear 503, not a hang."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.tasks.child_notes import AFTER_TAKEOVER
from hub.tasks.replication import INTERRUPTED_REPLICA_STOPPED
from hub.tasks.resumption import RESUMED_AFTER_TAKEOVER, RESUMED_METADATA_KEY
from tests.postgres import PostgresCluster, fresh_database_for_processes, running_cluster

from . import rpc
from .load import Load
from .partnerproc import PartnerSpec, agents_for, hub_processes, partner_processes
from .replica_skills import GATES_ENV, MARKS_ENV, Gates
from .resume_skills import starts
from .test_replicas import Subscriber, Webhook, replica_config, states, watch_with_push

SLOW = PartnerSpec(name="slow", behaviour="slow", delay=60)
NO_AUTH: dict[str, str] = {}


def _children_reconciled(url: str, task_id: str) -> dict[str, Any] | None:
    task = rpc.get_task(url, task_id)
    return task if "a2a-hub/children" in (task.get("metadata") or {}) else None


def test_a_replica_killed_under_load_has_its_tasks_taken_over_by_the_survivors(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    with (
        Webhook() as webhook,
        partner_processes([SLOW]) as partners,
        pytest.MonkeyPatch.context() as patch,
        fresh_database_for_processes(postgres_cluster) as dsn,
    ):
        patch.setenv(MARKS_ENV, str(tmp_path))
        from .partnerproc import write_agents

        agents = write_agents(tmp_path / "agents.yaml", agents_for(partners, [SLOW]))
        configs = [
            replica_config(tmp_path / f"hub{n}.yaml", dsn, auth=False, agents=agents)
            for n in range(3)
        ]
        with hub_processes(configs) as (victim, second, third):
            with Load([victim.url, second.url, third.url]) as load:
                running = [
                    rpc.send(victim.url, "go", {"skill": "until_canceled"}, return_immediately=True)
                    for _ in range(2)
                ]
                delegated = rpc.send(
                    victim.url,
                    "delegate then lose the replica",
                    {"skill": "delegate", "agent": "slow"},
                    return_immediately=True,
                )
                parked = rpc.send(victim.url, "hi", {"skill": "interview"})
                watch_with_push(second.url, running[0]["id"], webhook, NO_AUTH)
                followers = [
                    Subscriber(second.url, running[0]["id"], headers=NO_AUTH).start(),
                    Subscriber(third.url, running[1]["id"], headers=NO_AUTH).start(),
                    Subscriber(second.url, delegated["id"], headers=NO_AUTH).start(),
                ]
                [child] = rpc.wait_for(
                    lambda: (
                        [
                            task
                            for task in rpc.list_tasks(partners["slow"].url)
                            if rpc.state(task) == "TASK_STATE_WORKING"
                        ]
                        or None
                    ),
                    what="the partner to work on the delegated message",
                )
                victim.process.send_signal(signal.SIGKILL)
                victim.process.wait(timeout=60)
                ended = [follower.ended() for follower in followers]

            for events in ended:
                assert states(events)[-1] == "TASK_STATE_FAILED"
                last = [e for e in events if "statusUpdate" in e][-1]["statusUpdate"]
                assert rpc.status_text(last) == INTERRUPTED_REPLICA_STOPPED
            assert load.acknowledged
            # Made on a survivor for a task of the lost replica: the takeover reports it.
            assert webhook.wait_for_state(running[0]["id"], "TASK_STATE_FAILED")[-1] == (
                "TASK_STATE_FAILED"
            )
            for task_id, _ in load.acknowledged.items():
                assert rpc.state(rpc.settled(third.url, task_id)) == "TASK_STATE_COMPLETED"
            working = rpc.call(second.url, "ListTasks", {"status": "TASK_STATE_WORKING"})
            assert working["tasks"] == []

            parent = rpc.wait_for(
                lambda: _children_reconciled(third.url, delegated["id"]),
                what="the delegating task's partner child to be reconciled",
            )
            assert parent["metadata"]["a2a-hub/children"][0]["taskId"] == child["id"]
            assert parent["metadata"]["a2a-hub/children"][0]["state"] == "TASK_STATE_CANCELED"
            # Said as it happened: a takeover from a replica that stopped renewing its lease.
            assert parent["metadata"]["a2a-hub/children"][0]["note"] == AFTER_TAKEOVER.canceled
            assert "restart" not in AFTER_TAKEOVER.canceled
            on_partner = rpc.get_task(partners["slow"].url, child["id"])
            assert rpc.state(on_partner) == "TASK_STATE_CANCELED"

            answer = rpc.message("Ada") | {"taskId": parked["id"]}
            done = rpc.call(third.url, "SendMessage", {"message": answer})["task"]
            assert rpc.state(done) == "TASK_STATE_COMPLETED"


def test_a_replica_killed_while_running_a_resumable_task_has_it_adopted_and_finished(
    postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    with (
        Gates() as gates,
        pytest.MonkeyPatch.context() as patch,
        fresh_database_for_processes(postgres_cluster) as dsn,
    ):
        patch.setenv(MARKS_ENV, str(tmp_path))
        patch.setenv(GATES_ENV, gates.url)
        configs = [replica_config(tmp_path / f"hub{n}.yaml", dsn, auth=False) for n in range(2)]
        with hub_processes(configs) as (victim, survivor):
            task = rpc.send(victim.url, "go", {"skill": "journaled"}, return_immediately=True)
            rpc.wait_for(
                lambda: len(starts(tmp_path, task["id"])) == 1 or None,
                what="the resumable skill to start on the first replica",
            )
            follower = Subscriber(survivor.url, task["id"], headers=NO_AUTH).start()
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait(timeout=60)

            rpc.wait_for(
                lambda: len(starts(tmp_path, task["id"])) == 2 or None,
                what="the surviving replica to resume the task once the lease expired",
            )
            adopted = rpc.get_task(survivor.url, task["id"])
            gates.open(task["id"], "finish")
            events = follower.ended()
            done = rpc.settled(survivor.url, task["id"])

    assert rpc.state(adopted) == "TASK_STATE_WORKING"
    assert rpc.status_text(adopted) == RESUMED_AFTER_TAKEOVER
    assert adopted["status"]["message"]["metadata"] == {RESUMED_METADATA_KEY: "takeover"}
    assert starts(tmp_path, task["id"]) == [
        {"resumed": False, "agents": []},
        {"resumed": True, "agents": []},
    ]
    # The survivor's subscriber saw it adopted, then finished there.
    resumed = [
        e["statusUpdate"]
        for e in events
        if "statusUpdate" in e and rpc.status_text(e["statusUpdate"]) == RESUMED_AFTER_TAKEOVER
    ]
    assert [update["metadata"] for update in resumed] == [{RESUMED_METADATA_KEY: "takeover"}]
    assert states(events)[-1] == "TASK_STATE_COMPLETED"
    assert rpc.state(done) == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "done after 2 start(s)"}]


@pytest.fixture
def own_cluster() -> Iterator[PostgresCluster]:
    """A cluster of this test's own, since the test stops and starts it."""
    with running_cluster() as cluster:
        yield cluster


def test_replicas_answer_503_while_postgres_restarts_and_reconnect_after(
    own_cluster: PostgresCluster, tmp_path: Path
) -> None:
    with (
        Gates() as gates,
        pytest.MonkeyPatch.context() as patch,
        fresh_database_for_processes(own_cluster) as dsn,
    ):
        patch.setenv(GATES_ENV, gates.url)
        configs = [replica_config(tmp_path / f"hub{n}.yaml", dsn, auth=False) for n in range(2)]
        with hub_processes(configs) as replicas:
            for replica in replicas:
                assert rpc.state(rpc.send(replica.url, "before")) == "TASK_STATE_COMPLETED"

            own_cluster.stop()
            try:
                for replica in replicas:
                    for method, params in (
                        ("SendMessage", {"message": rpc.message("during")}),
                        ("ListTasks", {}),
                    ):
                        reply = rpc.post(replica.url, method, params)
                        assert reply.status_code == 200
                        error = reply.json()["error"]
                        assert error["code"] == -32603
                        assert error["data"][0]["reason"] == "STORE_UNAVAILABLE"
                    listed = httpx.get(f"{replica.url}/tasks", headers=rpc.VERSION, timeout=30)
                    assert listed.status_code == 503
                    assert listed.headers["Retry-After"] == "1"
                    assert listed.json()["error"]["status"] == "UNAVAILABLE"
            finally:
                own_cluster.start()

            for replica in replicas:
                rpc.wait_for(
                    lambda url=replica.url: (
                        "result" in rpc.post(url, "ListTasks", {}).json() or None
                    ),
                    what="the replica to reach the database again",
                )
            task = rpc.send(replicas[0].url, "go", {"skill": "ticker"}, return_immediately=True)
            follower = Subscriber(replicas[1].url, task["id"], headers=NO_AUTH).start()
            for gate in ("start", "finish"):
                gates.open(task["id"], gate)
            events = follower.ended()
            assert states(events)[-1] == "TASK_STATE_COMPLETED"
