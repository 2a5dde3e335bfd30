"""A2A 1.0 JSON-RPC over plain httpx, for talking to hub and partner processes from tests,
and a bounded poll (no sleep without a deadline)."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

T = TypeVar("T")
TIMEOUT = 30.0
VERSION = {"A2A-Version": "1.0"}
TERMINAL = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
}
_ids = itertools.count(1)


def post(
    url: str, method: str, params: dict[str, Any], *, headers: dict[str, str] | None = None
) -> httpx.Response:
    """POST one JSON-RPC request (A2A-Version 1.0) to `url`."""
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
    return httpx.post(url, json=body, headers={**VERSION, **(headers or {})}, timeout=TIMEOUT)


def call(
    url: str, method: str, params: dict[str, Any], *, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """The result of one JSON-RPC call; fails the test on an error response."""
    reply = post(url, method, params, headers=headers).json()
    assert "error" not in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def message(text: str) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}


def send(
    url: str,
    text: str,
    metadata: dict[str, Any] | None = None,
    *,
    headers: dict[str, str] | None = None,
    return_immediately: bool = False,
) -> dict[str, Any]:
    """SendMessage; the task it answers with (blocking: the settled task)."""
    params: dict[str, Any] = {"message": message(text)}
    if metadata:
        params["metadata"] = metadata
    if return_immediately:
        params["configuration"] = {"returnImmediately": True}
    result = call(url, "SendMessage", params, headers=headers)
    assert "task" in result, result
    task: dict[str, Any] = result["task"]
    return task


def get_task(url: str, task_id: str) -> dict[str, Any]:
    return call(url, "GetTask", {"id": task_id})


def list_tasks(url: str) -> list[dict[str, Any]]:
    """Every task of the agent at `url` (one page of up to 100)."""
    tasks: list[dict[str, Any]] = call(url, "ListTasks", {"pageSize": 100})["tasks"]
    return tasks


def state(task: dict[str, Any]) -> str:
    value: str = task["status"]["state"]
    return value


def status_text(task: dict[str, Any]) -> str:
    """The text of a task's status message ("" when it has none)."""
    parts = (task["status"].get("message") or {}).get("parts", [])
    return "\n".join(part.get("text", "") for part in parts)


def history_text(task: dict[str, Any]) -> str:
    """The text of the first message of a task's history."""
    return "\n".join(part.get("text", "") for part in task["history"][0]["parts"])


def wait_for(check: Callable[[], T | None], *, what: str, timeout: float = 60.0) -> T:
    """Poll `check` until it returns something other than None, at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        found = check()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout}s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def settled(url: str, task_id: str, *, timeout: float = 60.0) -> dict[str, Any]:
    """The task once it has reached a terminal state (bounded wait)."""

    def check() -> dict[str, Any] | None:
        task = get_task(url, task_id)
        return task if state(task) in TERMINAL else None

    return wait_for(check, what=f"task {task_id} at {url} to settle", timeout=timeout)
