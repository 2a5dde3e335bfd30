"""With auth on, a partner task reached through the gateway belongs to the credential that
started it: another credential finds it nowhere (GetTask, CancelTask, SubscribeToTask, a
follow-up message, ListTasks), on either protocol version, and a partner task the gateway did
not see start belongs to nobody."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.client.partners import WAIT

from .conftest import OPS_KEY, SCOPED_KEY, V1, Partner

pytestmark = pytest.mark.anyio

OPS = {**V1, "X-API-Key": OPS_KEY}
SCOPED = {**V1, "X-API-Key": SCOPED_KEY}
TASK_NOT_FOUND = -32001


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _message(text: str, **fields: str) -> dict[str, Any]:
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        **fields,
    }


async def _call(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], method: str, params: dict[str, Any]
) -> dict[str, Any]:
    reply: dict[str, Any] = (
        await http.post(url, json=_rpc(method, params), headers=headers)
    ).json()
    return reply


async def _started(http: httpx.AsyncClient, url: str, headers: dict[str, str], text: str) -> str:
    reply = await _call(
        http,
        url,
        headers,
        "SendMessage",
        {"message": _message(text), "configuration": {"returnImmediately": True}},
    )
    task_id: str = reply["result"]["task"]["id"]
    return task_id


async def test_another_credential_finds_a_partner_task_nowhere(secure_hub_url: str) -> None:
    url = f"{secure_hub_url}/agents/old"
    async with httpx.AsyncClient(timeout=10) as http:
        mine = await _started(http, url, OPS, WAIT)
        theirs = await _started(http, url, SCOPED, "hello")
        refused = [
            await _call(http, url, SCOPED, "GetTask", {"id": mine}),
            await _call(http, url, SCOPED, "CancelTask", {"id": mine}),
            await _call(http, url, SCOPED, "SubscribeToTask", {"id": mine}),
            await _call(
                http,
                url,
                SCOPED,
                "SendMessage",
                {"message": _message("butting in", taskId=mine)},
            ),
        ]
        v03 = (
            await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": mine}},
                headers={"X-API-Key": SCOPED_KEY},
            )
        ).json()
        owner_sees = await _call(http, url, OPS, "GetTask", {"id": mine})
        their_list = await _call(http, f"{secure_hub_url}/agents/one", SCOPED, "ListTasks", {})
        ops_get_theirs = await _call(http, url, OPS, "GetTask", {"id": theirs})
        canceled = await _call(http, url, OPS, "CancelTask", {"id": mine})

    for reply in refused:
        assert reply["error"]["code"] == TASK_NOT_FOUND, reply
    assert v03["error"]["code"] == TASK_NOT_FOUND
    assert owner_sees["result"]["id"] == mine
    assert owner_sees["result"]["status"]["state"] == "TASK_STATE_WORKING"
    assert ops_get_theirs["error"]["code"] == TASK_NOT_FOUND
    assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert "error" in their_list  # "one" is outside the scoped credential's partners


async def test_list_tasks_shows_a_credential_its_own_partner_tasks_only(
    secure_hub_url: str, partners: dict[str, Partner]
) -> None:
    url = f"{secure_hub_url}/agents/one"
    async with httpx.AsyncClient(timeout=10) as http:
        mine = await _started(http, url, OPS, "mine")
        # A task sent to the partner directly, not through the gateway: nobody's.
        direct = (
            await http.post(
                partners["one"].url,
                json=_rpc("SendMessage", {"message": _message("direct")}),
                headers=V1,
            )
        ).json()["result"]["task"]["id"]
        listed = await _call(http, url, OPS, "ListTasks", {"pageSize": 100})
        hidden = await _call(http, url, OPS, "GetTask", {"id": direct})

    ids = [task["id"] for task in listed["result"]["tasks"]]
    assert mine in ids
    assert direct not in ids
    assert listed["result"]["totalSize"] == len(ids)
    assert hidden["error"]["code"] == TASK_NOT_FOUND
