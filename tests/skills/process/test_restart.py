"""A real hub process with process skills, stopped with SIGTERM and started again."""

from __future__ import annotations

import json
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx

from hub.tasks import INTERRUPTED_BY_RESTART
from tests.e2e.hubproc import hub_process

from .harness import AGENT, is_gone

V1 = {"A2A-Version": "1.0"}


def send_body(method: str, text: str, skill: str) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "metadata": {"skill": skill}}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def init_of(task_or_event: dict[str, Any]) -> dict[str, Any] | None:
    for message in task_or_event.get("history", []):
        metadata = message.get("metadata") or {}
        if metadata.get("processEvent") == "init":
            details: dict[str, Any] = metadata["details"]
            return details
    return None


def stream_until_init(url: str, skill: str) -> dict[str, Any]:
    """Start a task with SendStreamingMessage and read its stream up to the init event."""
    body = send_body("SendStreamingMessage", "go", skill)
    with httpx.stream("POST", url, json=body, headers=V1, timeout=10) as response:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            update = json.loads(line[5:])["result"].get("statusUpdate", {})
            metadata = update.get("status", {}).get("message", {}).get("metadata") or {}
            if metadata.get("processEvent") == "init":
                details: dict[str, Any] = metadata["details"]
                return details
    raise AssertionError("the stream ended before the init event")


def get_task(url: str, task_id: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
    result: dict[str, Any] = httpx.post(url, json=body, headers=V1, timeout=10).json()["result"]
    return result


def test_sigterm_fails_running_and_parked_process_tasks_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    config = tmp_path / "hub.yaml"
    config.write_text(
        f"""
server: {{log_level: warning}}
store: {{kind: sqlite, path: {tmp_path / "hub.db"}}}
skills:
  - builtin: echo
  - process:
      id: busy
      description: starts a grandchild and works until stopped
      command: [{json.dumps(sys.executable)}, {json.dumps(AGENT)}, grandchild]
      grace: 2s
  - process:
      id: asks
      description: asks for approval
      command: [{json.dumps(sys.executable)}, {json.dumps(AGENT)}, approval]
"""
    )
    with hub_process(config) as (process, url):
        running = stream_until_init(url, "busy")
        body = send_body("SendMessage", "go", "asks")
        parked = httpx.post(url, json=body, headers=V1, timeout=10).json()["result"]["task"]
        assert parked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        asking = init_of(parked)
        assert asking is not None
        process.send_signal(signal.SIGTERM)
        # uvicorn shuts down cleanly, then ends with the signal it got.
        assert process.wait(timeout=60) in (0, -signal.SIGTERM)
        # The hub waits for each run's process group to die before it exits.
        for pid in (running["pid"], running["child"], asking["pid"]):
            assert is_gone(pid), pid

    with hub_process(config) as (_, url):
        for task_id in (running["task"], asking["task"]):
            task = get_task(url, task_id)
            assert task["status"]["state"] == "TASK_STATE_FAILED"
            assert task["status"]["message"]["parts"] == [{"text": INTERRUPTED_BY_RESTART}]
