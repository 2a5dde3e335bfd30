"""The delegation ledger end to end: a real hub process in front of real a2a-sdk partner
processes. Canceling a hub task cancels every partner task it had in flight, even those the
partners had not named yet, and a hub killed with partner tasks in flight cancels them when
it starts again, its task's record saying so."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import rpc
from .partnerproc import (
    Child,
    PartnerSpec,
    agents_for,
    hub_child,
    partner_processes,
    stop_all,
    write_hub_config,
)

SLOW = [
    PartnerSpec(name=f"slow-{n}", behaviour="slow", delay=60, tags=("slow",)) for n in (1, 2, 3)
]


@pytest.fixture(scope="module")
def partners() -> Iterator[dict[str, Child]]:
    with partner_processes(SLOW) as started:
        yield started


def _start_hub(config: Path) -> Child:
    hub = hub_child(config)
    hub.wait_ready()
    return hub


def _tasks_of(partners: dict[str, Child], context: str) -> dict[str, list[dict[str, Any]]]:
    """Each partner's tasks whose first message came from the hub task with `context` text."""
    return {
        name: [task for task in rpc.list_tasks(child.url) if rpc.history_text(task) == context]
        for name, child in partners.items()
    }


def _all_in(
    partners: dict[str, Child], text: str, wanted: str, *, at_least: int
) -> dict[str, list[dict[str, Any]]] | None:
    tasks = _tasks_of(partners, text)
    found = [task for each in tasks.values() for task in each]
    if len(found) >= at_least and all(rpc.state(task) == wanted for task in found):
        return tasks
    return None


def _with_children(task: dict[str, Any]) -> dict[str, Any] | None:
    return task if "a2a-hub/children" in (task.get("metadata") or {}) else None


def test_canceling_a_swarm_cancels_every_partner_task_in_flight(
    partners: dict[str, Child], tmp_path: Path
) -> None:
    config = write_hub_config(tmp_path / "hub", entries=agents_for(partners, SLOW))
    hub = _start_hub(config)
    try:
        text = "swarm then cancel"
        task = rpc.send(
            hub.url, text, {"skill": "swarm", "tags": ["slow"]}, return_immediately=True
        )
        rpc.wait_for(
            lambda: _all_in(partners, text, "TASK_STATE_WORKING", at_least=3),
            what="every slow partner to work on the swarm's message",
        )
        canceled = rpc.call(hub.url, "CancelTask", {"id": task["id"]})
        on_partners = rpc.wait_for(
            lambda: _all_in(partners, text, "TASK_STATE_CANCELED", at_least=3),
            what="every partner task to be canceled",
        )
    finally:
        stop_all([hub])

    assert rpc.state(canceled) == "TASK_STATE_CANCELED"
    assert {name: len(tasks) for name, tasks in on_partners.items()} == {
        "slow-1": 1,
        "slow-2": 1,
        "slow-3": 1,
    }


def test_a_cancel_that_arrives_before_the_partners_name_their_tasks_leaves_none_running(
    partners: dict[str, Child], tmp_path: Path
) -> None:
    config = write_hub_config(tmp_path / "hub", entries=agents_for(partners, SLOW))
    hub = _start_hub(config)
    try:
        text = "cancel at once"
        task = rpc.send(
            hub.url, text, {"skill": "swarm", "tags": ["slow"]}, return_immediately=True
        )
        rpc.call(hub.url, "CancelTask", {"id": task["id"]})
        # Whatever reached a partner is canceled there; nothing is left working.
        settled = rpc.wait_for(
            lambda: _all_in(partners, text, "TASK_STATE_CANCELED", at_least=0),
            what="no partner task of the canceled swarm left working",
        )
        again = rpc.get_task(hub.url, task["id"])
    finally:
        stop_all([hub])

    assert rpc.state(again) == "TASK_STATE_CANCELED"
    assert all(rpc.state(t) == "TASK_STATE_CANCELED" for ts in settled.values() for t in ts)


def test_a_hub_killed_with_a_delegation_in_flight_cancels_it_when_it_starts_again(
    partners: dict[str, Child], tmp_path: Path
) -> None:
    config = write_hub_config(tmp_path / "hub", entries=agents_for(partners, SLOW))
    text = "delegate then crash"
    hub = _start_hub(config)
    try:
        task = rpc.send(
            hub.url, text, {"skill": "delegate", "agent": "slow-2"}, return_immediately=True
        )
        working = rpc.wait_for(
            lambda: _all_in(partners, text, "TASK_STATE_WORKING", at_least=1),
            what="the partner to work on the delegated message",
        )
        hub.process.send_signal(signal.SIGKILL)
        hub.process.wait(timeout=60)
    finally:
        stop_all([hub])
    [child] = working["slow-2"]
    assert rpc.state(rpc.get_task(partners["slow-2"].url, child["id"])) == "TASK_STATE_WORKING"

    restarted = _start_hub(config)
    try:
        rpc.wait_for(
            lambda: _all_in(partners, text, "TASK_STATE_CANCELED", at_least=1),
            what="the restarted hub to cancel the partner task",
        )
        parent = rpc.wait_for(
            lambda: _with_children(rpc.get_task(restarted.url, task["id"])),
            what="the parent's record to list its partner task",
        )
    finally:
        stop_all([restarted])

    assert rpc.state(parent) == "TASK_STATE_FAILED"
    assert rpc.status_text(parent) == "interrupted by restart"
    assert parent["metadata"] == {
        "skill": "delegate",
        "agent": "slow-2",
        "a2a-hub/children": [
            {
                "agent": "slow-2",
                "taskId": child["id"],
                "state": "TASK_STATE_CANCELED",
                "note": "canceled after a hub restart: its parent task had ended",
            }
        ],
    }
