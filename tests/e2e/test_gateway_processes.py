"""The gateway end to end: a real hub process in front of real a2a-sdk partner processes, one
speaking A2A 1.0 and one 0.3, reached at `/agents/{name}` by the official SDK client in the
other version, and by hand-written 0.3 JSON-RPC."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from a2a.types import GetTaskRequest, TaskState

from tests.interop.test_sdk_client import collect, final_task_state, sdk_client, user

from .partnerproc import (
    Child,
    PartnerSpec,
    agents_for,
    hub_processes,
    partner_processes,
    write_hub_config,
)

PARTNERS = [
    PartnerSpec(name="modern", behaviour="echo"),
    PartnerSpec(name="legacy", behaviour="upper", protocol="0.3"),
]


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Child]:
    folder = tmp_path_factory.mktemp("gateway-hub")
    with partner_processes(PARTNERS) as partners:
        config = write_hub_config(folder, entries=agents_for(partners, PARTNERS))
        with hub_processes([config]) as [started]:
            yield started


@pytest.mark.anyio
async def test_a_0_3_sdk_client_talks_to_a_1_0_partner_through_the_hub(hub: Child) -> None:
    async with sdk_client(f"{hub.url}/agents/modern", "jsonrpc-0.3") as client:
        events = await collect(client.send_message(user("hello from 0.3")))
        task = await client.get_task(GetTaskRequest(id=events[0].task.id))

    assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [part.text for part in task.artifacts[0].parts] == ["hello from 0.3"]


@pytest.mark.anyio
async def test_a_1_0_sdk_client_talks_to_a_0_3_partner_through_the_hub(hub: Child) -> None:
    async with sdk_client(f"{hub.url}/agents/legacy", "jsonrpc-1.0") as client:
        events = await collect(client.send_message(user("hello from 1.0")))
        task = await client.get_task(GetTaskRequest(id=events[0].task.id))

    assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED
    assert [part.text for part in task.artifacts[0].parts] == ["HELLO FROM 1.0"]


def test_hand_written_0_3_json_rpc_gets_a_0_3_task_from_a_1_0_partner(hub: Child) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "messageId": uuid.uuid4().hex,
                "role": "user",
                "parts": [{"kind": "text", "text": "plain 0.3"}],
            }
        },
    }
    reply = httpx.post(f"{hub.url}/agents/modern", json=body, timeout=30).json()

    assert reply["id"] == 7
    task = reply["result"]
    assert task["kind"] == "task"
    assert task["status"]["state"] == "completed"
    assert [part for a in task["artifacts"] for part in a["parts"]] == [
        {"kind": "text", "text": "plain 0.3"}
    ]


def test_the_gateway_lists_both_partners_with_cards_pointing_at_the_hub(hub: Child) -> None:
    listing = httpx.get(f"{hub.url}/agents", timeout=30).json()

    assert [entry["name"] for entry in listing["agents"]] == ["modern", "legacy"]
    for entry in listing["agents"]:
        assert entry["url"] == f"{hub.url}/agents/{entry['name']}"
        urls = {i["url"] for i in entry["card"]["supportedInterfaces"]}
        assert urls == {entry["url"]}


def test_an_unknown_partner_is_not_found_behind_the_gateway(hub: Child) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    reply = httpx.post(
        f"{hub.url}/agents/nobody", json=body, headers={"A2A-Version": "1.0"}, timeout=30
    )

    assert reply.json()["error"]["code"] == -32601
    assert "modern" in reply.json()["error"]["message"]
