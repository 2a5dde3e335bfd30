"""A resumable skill survives a crash of its hub: a real hub process on a SQLite file, killed
with SIGKILL while the skill waits on a partner task, is started again on the same file, and
the task runs again (not failed) in its caller's scope, its partner task left to it and
canceled only when it ends. A task of a skill that is not resumable fails as before.

The partners are `ScriptedAgent`s served on loopback by a thread of the test (the hub
process calls them while the test's own calls block)."""

from __future__ import annotations

import math
import signal
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal

from hub.tasks import INTERRUPTED_BY_RESTART
from hub.tasks.resumption import RESUMED_AFTER_RESTART, RESUMED_METADATA_KEY
from hub.testing import ScriptedAgent, answer

from . import rpc
from .partnerproc import AgentEntry, Child, hub_child, stop_all, write_agents
from .replica_skills import GATES_ENV, MARKS_ENV, Gates
from .resume_skills import starts
from .test_replicas import Subscriber, states

KEY = "key-of-alice-0123456789"
AS_ALICE = {"X-API-Key": KEY}
JOURNALED_CHILD = "child of {task_id}"


@pytest.fixture
def partners() -> Iterator[dict[str, str]]:
    """Two partners on loopback that work on every message until canceled: `helper`, which
    the test's credential may reach, and `other`, which it may not."""
    with start_blocking_portal() as portal, ExitStack() as stack:
        urls = {}
        for name in ("helper", "other"):
            agent = ScriptedAgent(name, reply=answer("late", delay=math.inf))
            urls[name] = stack.enter_context(portal.wrap_async_context_manager(agent.serve()))
        yield urls


def write_config(folder: Path, partners: dict[str, str]) -> Path:
    agents = write_agents(
        folder / "agents.yaml", [AgentEntry(name=name, url=url) for name, url in partners.items()]
    )
    config = folder / "hub.yaml"
    config.write_text(
        f"""server: {{log_level: warning}}
store: {{kind: sqlite, path: {folder / "hub.db"}}}
agents: {agents}
auth:
  enabled: true
  credentials:
    - name: alice
      api_key: "${{RESUME_TEST_KEY}}"
      agents: [helper]
skills:
  - builtin: echo
  - builtin: delegate
  - module: tests.e2e.resume_skills:journaled
  - module: tests.e2e.crash_skills:forever
"""
    )
    return config


def started_hub(config: Path) -> Child:
    hub = hub_child(config)
    hub.wait_ready()
    return hub


def partner_tasks(url: str, text: str) -> list[dict[str, Any]]:
    return [task for task in rpc.list_tasks(url) if rpc.history_text(task) == text]


def one_in(url: str, text: str, state: str) -> dict[str, Any] | None:
    found = partner_tasks(url, text)
    return found[0] if len(found) == 1 and rpc.state(found[0]) == state else None


def get(url: str, task_id: str) -> dict[str, Any]:
    return rpc.call(url, "GetTask", {"id": task_id}, headers=AS_ALICE)


def test_a_resumable_task_survives_kill_9_and_runs_again_in_its_callers_scope(
    partners: dict[str, str], tmp_path: Path
) -> None:
    helper = partners["helper"]
    with Gates() as gates, pytest.MonkeyPatch.context() as patch:
        for name, value in {
            "RESUME_TEST_KEY": KEY,
            MARKS_ENV: str(tmp_path),
            GATES_ENV: gates.url,
        }.items():
            patch.setenv(name, value)
        config = write_config(tmp_path, partners)

        hub = started_hub(config)
        try:
            task = rpc.send(
                hub.url,
                "go",
                {"skill": "journaled", "partner": "helper"},
                headers=AS_ALICE,
                return_immediately=True,
            )
            child_text = JOURNALED_CHILD.format(task_id=task["id"])
            running = rpc.send(
                hub.url, "go", {"skill": "forever"}, headers=AS_ALICE, return_immediately=True
            )
            delegated = rpc.send(
                hub.url,
                "delegated child",
                {"skill": "delegate", "agent": "helper"},
                headers=AS_ALICE,
                return_immediately=True,
            )
            child = rpc.wait_for(
                lambda: one_in(helper, child_text, "TASK_STATE_WORKING"),
                what="the partner to work on the resumable task's message",
            )
            rpc.wait_for(
                lambda: one_in(helper, "delegated child", "TASK_STATE_WORKING"),
                what="the partner to work on the delegated message",
            )
            hub.process.send_signal(signal.SIGKILL)
            hub.process.wait(timeout=60)
        finally:
            stop_all([hub])
        assert starts(tmp_path, task["id"]) == [{"resumed": False, "agents": ["helper"]}]

        restarted = started_hub(config)
        try:
            # The restart reconciles the partner tasks of the tasks it failed...
            rpc.wait_for(
                lambda: one_in(helper, "delegated child", "TASK_STATE_CANCELED"),
                what="the restarted hub to cancel the failed delegation's partner task",
            )
            rpc.wait_for(
                lambda: (
                    "a2a-hub/children" in (get(restarted.url, delegated["id"])["metadata"]) or None
                ),
                what="the failed delegation's record to list its partner task",
            )
            # ...and runs the resumable one again, with its caller's rights only.
            rpc.wait_for(
                lambda: len(starts(tmp_path, task["id"])) == 2 or None,
                what="the resumable skill to start again",
            )
            resumed = get(restarted.url, task["id"])
            assert rpc.state(resumed) == "TASK_STATE_WORKING"
            assert rpc.status_text(resumed) == RESUMED_AFTER_RESTART
            assert resumed["status"]["message"]["metadata"] == {RESUMED_METADATA_KEY: "restart"}
            # Its partner task is still its own, not canceled by the reconciliation.
            assert rpc.state(rpc.get_task(helper, child["id"])) == "TASK_STATE_WORKING"

            follower = Subscriber(restarted.url, task["id"], headers=AS_ALICE).start()
            gates.open(task["id"], "finish")
            events = follower.ended()
            done = get(restarted.url, task["id"])
            # It ended: the partner task it left live is canceled.
            canceled = rpc.wait_for(
                lambda: one_in(helper, child_text, "TASK_STATE_CANCELED"),
                what="the resumed task's partner task to be canceled once it ended",
            )
            failed = get(restarted.url, running["id"])
        finally:
            stop_all([restarted])

    assert starts(tmp_path, task["id"]) == [
        {"resumed": False, "agents": ["helper"]},
        {"resumed": True, "agents": ["helper"]},
    ]
    assert states(events)[-1] == "TASK_STATE_COMPLETED"
    assert rpc.state(done) == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "done after 2 start(s)"}]
    # The note that it resumed was its status for a while, never a message of its history.
    assert [m for m in done["history"] if m["role"] == "ROLE_AGENT"] == []
    assert canceled["id"] == child["id"]
    assert rpc.state(failed) == "TASK_STATE_FAILED"
    assert rpc.status_text(failed) == INTERRUPTED_BY_RESTART
