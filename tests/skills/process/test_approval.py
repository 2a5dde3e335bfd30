"""Approval prompts in all three modes, over JSON-RPC and through the official a2a-sdk client."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.types import TaskState as SdkTaskState
from asgi_lifespan import LifespanManager

from hub.app import create_app
from hub.config import Settings
from hub.skills import Skill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore, SqliteTaskStore
from hub.testing import serve_hub
from tests.interop.test_sdk_client import collect, final_task_state, sdk_client, user

from .harness import process_skill, wait_gone

pytestmark = pytest.mark.anyio

V1 = {"A2A-Version": "1.0"}
MODES = {"asks": "input-required", "approves": "auto-approve", "denies": "deny"}


def approval_skills() -> dict[str, Skill]:
    found: list[Skill] = [echo]
    for skill_id, mode in MODES.items():
        found.append(process_skill("approval", id=skill_id, approval=mode))
    return {item.skill_id: item for item in found}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(), store=MemoryTaskStore(), skills=approval_skills())
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
            yield http


async def send(
    client: httpx.AsyncClient, text: str, *, skill: str | None = None, task_id: str | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    params: dict[str, Any] = {"message": message}
    if task_id:
        message["taskId"] = task_id
    if skill:
        params["metadata"] = {"skill": skill}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    response = await client.post("/", json=body, headers=V1, timeout=10)
    document: dict[str, Any] = response.json()
    assert "result" in document, document
    task: dict[str, Any] = document["result"]["task"]
    return task


def response_text(task: dict[str, Any]) -> str:
    return "".join(
        part.get("text", "")
        for artifact in task.get("artifacts", [])
        if artifact["name"] == "assistant-response"
        for part in artifact["parts"]
    )


async def test_the_card_lists_the_process_skills(client: httpx.AsyncClient) -> None:
    card = (await client.get("/.well-known/agent-card.json")).json()
    assert {"asks", "approves", "denies"} <= {entry["id"] for entry in card["skills"]}


async def test_input_required_parks_the_task_and_the_answer_goes_to_stdin(
    client: httpx.AsyncClient,
) -> None:
    parked = await send(client, "clean up", skill="asks")
    assert parked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert parked["status"]["message"]["parts"] == [{"text": "Delete build/?"}]
    assert parked["status"]["message"]["metadata"] == {"processEvent": "approval_required"}
    done = await send(client, "yes", task_id=parked["id"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert response_text(done) == "answer='yes\\n'"


async def test_a_multi_line_answer_arrives_as_one_line(client: httpx.AsyncClient) -> None:
    parked = await send(client, "clean up", skill="asks")
    failed = await send(client, "not\nnow", task_id=parked["id"])
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert failed["status"]["message"]["parts"] == [{"text": "not approved: not now"}]


async def test_auto_approve_answers_yes_without_asking(client: httpx.AsyncClient) -> None:
    done = await send(client, "clean up", skill="approves")
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert response_text(done) == "answer='yes\\n'"
    notes = [m["parts"][0]["text"] for m in done["history"] if m["role"] == "ROLE_AGENT"]
    assert "auto-approved: Delete build/?" in notes


async def test_deny_answers_no_and_the_program_gives_up(client: httpx.AsyncClient) -> None:
    failed = await send(client, "clean up", skill="denies")
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert failed["status"]["message"]["parts"] == [{"text": "not approved: no"}]
    assert response_text(failed) == "answer='no\\n'"


async def test_cancel_of_a_parked_task_stops_its_program(client: httpx.AsyncClient) -> None:
    parked = await send(client, "clean up", skill="asks")
    init = next(
        m for m in parked["history"] if (m.get("metadata") or {}).get("processEvent") == "init"
    )
    body = {"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": parked["id"]}}
    canceled = (await client.post("/", json=body, headers=V1)).json()["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    await wait_gone(init["metadata"]["details"]["pid"])


@pytest.fixture
async def hub_url(tmp_path: Path) -> AsyncIterator[str]:
    store = SqliteTaskStore(tmp_path / "hub.db")
    async with serve_hub(skills=list(approval_skills().values()), store=store) as hub:
        yield hub.url


@pytest.mark.parametrize(
    ("skill_id", "answer", "final"),
    [
        ("asks", "yes", SdkTaskState.TASK_STATE_COMPLETED),
        ("asks", "no", SdkTaskState.TASK_STATE_FAILED),
        ("approves", None, SdkTaskState.TASK_STATE_COMPLETED),
        ("denies", None, SdkTaskState.TASK_STATE_FAILED),
    ],
)
async def test_approval_through_the_sdk_client(
    hub_url: str, skill_id: str, answer: str | None, final: int
) -> None:
    async with sdk_client(hub_url, "jsonrpc-1.0") as client:
        events = await collect(client.send_message(user("clean up", skill=skill_id)))
        task_id = events[0].task.id
        if answer is not None:
            assert final_task_state(events) == SdkTaskState.TASK_STATE_INPUT_REQUIRED
            parked = events[-1].status_update.status.message
            assert [part.text for part in parked.parts] == ["Delete build/?"]
            events = await collect(client.send_message(user(answer, task_id=task_id)))
    assert final_task_state(events) == final
    texts = [
        part.text
        for event in events
        if event.HasField("artifact_update")
        and event.artifact_update.artifact.name == "assistant-response"
        for part in event.artifact_update.artifact.parts
    ]
    assert texts[-1] == f"answer='{answer or ('yes' if skill_id == 'approves' else 'no')}\\n'"
