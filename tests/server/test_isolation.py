"""Tasks belong to the credential that created them: every operation on another caller's task,
through every door (JSON-RPC 1.0, JSON-RPC 0.3, HTTP+JSON), answers exactly what it answers
for a task that does not exist, and changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from tests.server.auth_hub import (
    ALICE,
    BOB,
    CAROL,
    DOORS,
    TASK_OPERATIONS,
    Credential,
    Door,
    Outcome,
    auth_settings,
    message,
    serve_in_process,
)

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}
INTRUDERS = (BOB, CAROL)  # a bearer token and an API key, one of them scoped
MISSING = "no-such-task"


@dataclass
class AliceHub:
    """A hub where Alice owns a completed task, a task parked on a question (with a push
    config) and a task still working."""

    http: httpx.AsyncClient
    tasks: dict[str, str]

    async def rpc(self, method: str, params: object, who: Credential = ALICE) -> object:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = await self.http.post("/", json=body, headers={**V1, **who.headers})
        document = response.json()
        assert "result" in document, document
        return document["result"]

    async def snapshot(self) -> dict[str, object]:
        """Alice's tasks and the parked task's push configs, as Alice sees them."""
        seen: dict[str, object] = {
            name: await self.rpc("GetTask", {"id": task_id}) for name, task_id in self.tasks.items()
        }
        seen["configs"] = await self.rpc(
            "ListTaskPushNotificationConfigs", {"taskId": self.tasks["parked"]}
        )
        return seen


@pytest.fixture
async def alice_hub() -> AsyncIterator[AliceHub]:
    async with serve_in_process(auth_settings()) as http:
        hub = AliceHub(http, {})
        done = await hub.rpc("SendMessage", {"message": message("mine")})
        parked = await hub.rpc(
            "SendMessage", {"message": message("start"), "metadata": {"skill": "interview"}}
        )
        working = await hub.rpc(
            "SendMessage",
            {
                "message": message("go"),
                "metadata": {"skill": "waits"},
                "configuration": {"returnImmediately": True},
            },
        )
        hub.tasks = {
            "completed": done["task"]["id"],  # type: ignore[index]
            "parked": parked["task"]["id"],  # type: ignore[index]
            "working": working["task"]["id"],  # type: ignore[index]
        }
        await hub.rpc(
            "CreateTaskPushNotificationConfig",
            {"taskId": hub.tasks["parked"], "id": "cfg", "url": "http://127.0.0.1:9/hook"},
        )
        yield hub


def looks_missing(foreign: Outcome, missing: Outcome, task_id: str) -> None:
    """`foreign` is TaskNotFound, word for word the answer for an unknown id."""
    assert foreign.code in (-32001, 404), foreign
    assert foreign.reason in (None, "TASK_NOT_FOUND"), foreign
    assert foreign.status == missing.status
    assert foreign.code == missing.code
    assert foreign.reason == missing.reason
    assert (foreign.message or "").replace(task_id, MISSING) == missing.message


@pytest.mark.parametrize("operation", TASK_OPERATIONS)
@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
async def test_another_callers_task_is_not_found_and_unchanged(
    alice_hub: AliceHub, door: Door, operation: str
) -> None:
    before = await alice_hub.snapshot()
    for intruder in INTRUDERS:
        missing = await door.call(alice_hub.http, intruder, operation, MISSING)
        for task_id in alice_hub.tasks.values():
            foreign = await door.call(alice_hub.http, intruder, operation, task_id)
            looks_missing(foreign, missing, task_id)
    assert await alice_hub.snapshot() == before


@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
async def test_the_owner_reaches_its_own_tasks_through_every_door(
    alice_hub: AliceHub, door: Door
) -> None:
    for task_id in alice_hub.tasks.values():
        got = await door.call(alice_hub.http, ALICE, "get", task_id)
        assert got.ok, got
        assert got.result["id"] == task_id
    listed = await door.call(alice_hub.http, ALICE, "push_list", alice_hub.tasks["parked"])
    assert listed.ok, listed


@pytest.mark.parametrize("door", [DOORS[0], DOORS[2]], ids=lambda door: door.name)
async def test_list_tasks_shows_only_the_callers_own_tasks(alice_hub: AliceHub, door: Door) -> None:
    mine = await door.call(alice_hub.http, ALICE, "list")
    assert {task["id"] for task in mine.result["tasks"]} == set(alice_hub.tasks.values())
    for intruder in INTRUDERS:
        theirs = await door.call(alice_hub.http, intruder, "list")
        assert theirs.result == {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}


async def test_list_tasks_filtered_by_another_callers_context_is_empty(
    alice_hub: AliceHub,
) -> None:
    completed = await alice_hub.rpc("GetTask", {"id": alice_hub.tasks["completed"]})
    context_id = completed["contextId"]  # type: ignore[index]
    for intruder in INTRUDERS:
        listed = await alice_hub.http.get(
            "/tasks", params={"contextId": context_id}, headers={**V1, **intruder.headers}
        )
        assert listed.json()["tasks"] == []


async def test_a_caller_sees_the_tasks_it_created_and_not_the_others(alice_hub: AliceHub) -> None:
    bobs = await alice_hub.rpc("SendMessage", {"message": message("bob's")}, who=BOB)
    bob_task = bobs["task"]["id"]  # type: ignore[index]
    assert (await alice_hub.rpc("GetTask", {"id": bob_task}, who=BOB))["id"] == bob_task  # type: ignore[index]
    for door in DOORS:
        missing = await door.call(alice_hub.http, ALICE, "get", MISSING)
        looks_missing(await door.call(alice_hub.http, ALICE, "get", bob_task), missing, bob_task)
    listed = await alice_hub.rpc("ListTasks", {}, who=BOB)
    assert [task["id"] for task in listed["tasks"]] == [bob_task]  # type: ignore[index]
