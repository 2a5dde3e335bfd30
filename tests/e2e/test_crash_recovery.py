"""A real hub process killed with SIGKILL mid-task, then restarted on the same SQLite file."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from .hubproc import hub_process

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


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "hub.yaml"
    path.write_text(
        f"""
server: {{log_level: warning}}
store: {{kind: sqlite, path: {tmp_path / "hub.db"}}}
skills:
  - builtin: echo
  - module: tests.e2e.crash_skills:forever
  - module: tests.e2e.crash_skills:interview
"""
    )
    return path


def test_acknowledged_tasks_survive_kill_9_and_restart_rules_apply(config: Path) -> None:
    with hub_process(config) as (process, url):
        completed = [send(url, f"task {n}") for n in range(20)]
        running = send(url, "go", skill="forever", returnImmediately=True)
        parked = send(url, "hi", skill="interview")
        assert parked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    with hub_process(config) as (_, url):
        for task in completed:
            again = rpc(url, "GetTask", {"id": task["id"]})
            assert again["status"]["state"] == "TASK_STATE_COMPLETED"
            assert again["artifacts"] == task["artifacts"]
        interrupted = rpc(url, "GetTask", {"id": running["id"]})
        assert interrupted["status"]["state"] == "TASK_STATE_FAILED"
        assert interrupted["status"]["message"]["parts"] == [{"text": "interrupted by restart"}]
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
