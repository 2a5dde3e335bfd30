"""Push configs in a real SQLite file: they survive a restart of a real hub process, a task
a crash interrupted is reported, and configs go when their task's record expires."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from hub.protocol import utc_now
from hub.store import SqliteTaskStore
from tests.e2e.hubproc import hub_process

from .conftest import V1, running_hub, user_message
from .receiver import WebhookReceiver

pytestmark = pytest.mark.anyio

Receiver = tuple[WebhookReceiver, str]


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
push:
  allow_hosts: [127.0.0.1]
  throttle: 0.2s
  retry_delays: [0.05s, 0.1s]
"""
    )
    return path


@asynccontextmanager
async def hub(config: Path) -> AsyncIterator[tuple[subprocess.Popen[bytes], str]]:
    """A real `a2a-hub serve` process, started off the event loop (the receiver in this
    loop keeps answering meanwhile)."""
    with ExitStack() as stack:
        started = await anyio.to_thread.run_sync(stack.enter_context, hub_process(config))
        try:
            yield started
        finally:
            await anyio.to_thread.run_sync(stack.close)


async def rpc(url: str, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with httpx.AsyncClient(timeout=10) as http:
        document = (await http.post(url, json=body, headers=V1)).json()
    assert "result" in document, document
    return document["result"]


async def test_configs_survive_a_restart_and_deliver_afterwards(
    config: Path, receiver: Receiver
) -> None:
    webhook, url = receiver
    created = {
        "id": "c1",
        "url": f"{url}/hook",
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "secret"},
    }
    async with hub(config) as (_, first):
        params = {"message": user_message("hi"), "metadata": {"skill": "interview"}}
        task = (await rpc(first, "SendMessage", params))["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        stored = await rpc(
            first, "CreateTaskPushNotificationConfig", {"taskId": task["id"], **created}
        )
    async with hub(config) as (_, second):
        listed = await rpc(second, "ListTaskPushNotificationConfigs", {"taskId": task["id"]})
        assert listed == {"configs": [stored], "nextPageToken": ""}
        answer = {"message": user_message("Ada", taskId=task["id"])}
        done = (await rpc(second, "SendMessage", answer))["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        last = await webhook.wait_for_state("/hook", "TASK_STATE_COMPLETED")
    assert last.task["artifacts"][0]["parts"] == [{"text": "Hello, Ada!"}]
    assert last.headers["authorization"] == "Bearer secret"
    assert last.headers["x-a2a-notification-token"] == "tok"


async def test_a_task_a_crash_interrupted_is_reported_failed_after_the_restart(
    config: Path, receiver: Receiver
) -> None:
    webhook, url = receiver
    async with hub(config) as (process, first):
        params = {
            "message": user_message("go"),
            "metadata": {"skill": "forever"},
            "configuration": {
                "returnImmediately": True,
                "taskPushNotificationConfig": {"url": f"{url}/hook"},
            },
        }
        task = (await rpc(first, "SendMessage", params))["task"]
        [working] = await webhook.wait_for(1, "/hook")
        assert working.state == "TASK_STATE_WORKING"
        process.send_signal(signal.SIGKILL)
        await anyio.to_thread.run_sync(process.wait)
    async with hub(config):
        [_, failed] = await webhook.wait_for(2, "/hook")
    assert failed.task["id"] == task["id"]
    assert failed.state == "TASK_STATE_FAILED"
    assert failed.task["status"]["message"]["parts"] == [{"text": "interrupted by restart"}]


async def test_configs_go_with_their_task_when_its_record_expires(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "hub.db")
    async with running_hub(store=store) as served:
        task_id = await served.parked_task()
        await served.add_config(task_id, "http://127.0.0.1:9/hook", id="c1")
        await served.result("CancelTask", {"id": task_id})
        manager = served.service.manager
        assert await manager.evict_expired(now=utc_now() + timedelta(days=1)) >= 1
        assert await store.get_push_config(task_id, "c1") is None
        gone = await served.call("ListTaskPushNotificationConfigs", {"taskId": task_id})
        assert gone["error"]["code"] == -32001
