"""A real hub process killed with SIGKILL mid-task, then restarted on the same store: the same
SQLite file, or the same PostgreSQL database of a real server.

On SQLite the restarted hub fails the interrupted task at start; on PostgreSQL, where other
replicas may be running tasks of their own, it takes the task over once the dead process's
lease on it has expired (a short one here)."""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.tasks.replication import INTERRUPTED_REPLICA_STOPPED as INTERRUPTED
from tests.postgres import PostgresCluster, fresh_database_for_processes

from .hubproc import hub_process
from .rpc import settled

V1 = {"A2A-Version": "1.0"}


def rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = httpx.post(url, json=body, headers=V1, timeout=10)
    document: dict[str, Any] = response.json()
    assert "result" in document, document
    result: dict[str, Any] = document["result"]
    return result


def send(url: str, text: str, *, skill: str | None = None, **config: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    }
    if skill:
        params["metadata"] = {"skill": skill}
    if config:
        params["configuration"] = config
    return rpc(url, "SendMessage", params)["task"]


@pytest.fixture(params=["sqlite", "postgres"])
def config(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "hub.yaml"
    skills = """
skills:
  - builtin: echo
  - module: tests.e2e.crash_skills:forever
  - module: tests.e2e.crash_skills:interview
"""
    if request.param == "sqlite":
        path.write_text(
            f"server: {{log_level: warning}}\n"
            f"store: {{kind: sqlite, path: {tmp_path / 'hub.db'}}}\n{skills}"
        )
        yield path
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    with fresh_database_for_processes(cluster) as dsn:
        path.write_text(
            f"server: {{log_level: warning}}\n"
            f"store: {{kind: postgres, dsn: '{dsn}', lease: 1s}}\n{skills}"
        )
        yield path


def test_acknowledged_tasks_survive_kill_9_and_restart_rules_apply(config: Path) -> None:
    with hub_process(config) as (process, url):
        completed = [send(url, f"task {n}") for n in range(20)]
        running = send(url, "go", skill="forever", returnImmediately=True)
        parked = send(url, "hi", skill="interview")
        assert parked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)

    with hub_process(config) as (_, url):
        for task in completed:
            again = rpc(url, "GetTask", {"id": task["id"]})
            assert again["status"]["state"] == "TASK_STATE_COMPLETED"
            assert again["artifacts"] == task["artifacts"]
        interrupted = settled(url, running["id"])
        assert interrupted["status"]["state"] == "TASK_STATE_FAILED"
        reason = "interrupted by restart" if "sqlite" in config.read_text() else INTERRUPTED
        assert interrupted["status"]["message"]["parts"] == [{"text": reason}]
        answer = {
            "message": {
                "messageId": uuid.uuid4().hex,
                "role": "ROLE_USER",
                "parts": [{"text": "Ada"}],
                "taskId": parked["id"],
            }
        }
        done = rpc(url, "SendMessage", answer)["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert done["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]
