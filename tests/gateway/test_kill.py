"""The kill switch reaches the partner tasks a caller started through the gateway, over real
HTTP: an operator's kill of a caller (`POST /admin/kill`, `a2a-hub kill`, the console) has
each partner cancel that caller's tasks, asked of the partners themselves; another caller's
task goes on, a task that had completed counts as neither canceled nor failed, a partner that
cannot be reached counts as failed, and a kill of a context does not reach them."""

from __future__ import annotations

import argparse
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from hub import testing
from hub.cli.kill import kill
from hub.cli.outcome import Running
from hub.client import A2AClient
from hub.config import (
    AuthSettings,
    CredentialSettings,
    LimitSettings,
    Settings,
    StoreSettings,
)
from hub.protocol import TaskState, utc_now
from tests.client.partners import WAIT
from tests.console.test_pages import token

from .conftest import V1, Partner, entries

pytestmark = pytest.mark.anyio

OPS_KEY = "ops-kill-key-5a7c1e9b3d"
ALICE_KEY = "alice-kill-key-2f8d4b6a0c"
BOB_KEY = "bob-kill-key-9e1a3c5b7d"
OPS = {**V1, "X-API-Key": OPS_KEY}
ALICE = {**V1, "X-API-Key": ALICE_KEY}
BOB = {**V1, "X-API-Key": BOB_KEY}


@pytest.fixture
async def hub(partners: dict[str, Partner], dead_url: str) -> AsyncIterator[testing.LoopbackHub]:
    """A hub with auth on (ops is an operator; alice and bob are not) in front of every
    partner and of "down", where nothing answers."""
    settings = Settings(
        store=StoreSettings(kind="memory"),
        auth=AuthSettings(
            enabled=True,
            credentials=(
                CredentialSettings(name="ops", api_key=OPS_KEY, operator=True),
                CredentialSettings(name="alice", api_key=ALICE_KEY),
                CredentialSettings(name="bob", api_key=BOB_KEY),
            ),
        ),
        limits=LimitSettings(requests_per_second=0),
    )
    async with testing.serve_hub(
        partners=entries(partners, dead_url=dead_url), settings=settings
    ) as running:
        yield running


async def _started(
    http: httpx.AsyncClient, hub_url: str, agent: str, headers: dict[str, str], text: str
) -> str:
    """The id of the partner task `text` starts at `agent`, sent through the gateway."""
    params: dict[str, Any] = {
        "message": {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        },
        "configuration": {"returnImmediately": True},
    }
    reply = await http.post(
        f"{hub_url}/agents/{agent}",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params},
        headers=headers,
    )
    task_id: str = reply.json()["result"]["task"]["id"]
    return task_id


async def _at_partner(
    http: httpx.AsyncClient, partner: Partner, task_id: str, state: TaskState
) -> TaskState:
    """The state of the partner's own task once it is `state`, asked of the partner
    directly (bounded wait)."""
    client = await A2AClient.from_url(partner.url, http=http)
    with anyio.fail_after(30):
        while True:
            found = (await client.get_task(task_id)).status.state
            if found is state:
                return found
            await anyio.sleep(0.02)


async def _killed(http: httpx.AsyncClient, hub_url: str, body: dict[str, str]) -> dict[str, Any]:
    answer = await http.post(f"{hub_url}/admin/kill", json=body, headers=OPS)
    assert answer.status_code == 200, answer.text
    report: dict[str, Any] = answer.json()
    return report


async def test_a_caller_kill_cancels_its_gateway_tasks_at_the_partners_and_no_one_elses(
    hub: testing.LoopbackHub, partners: dict[str, Partner], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="hub.audit")
    async with httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(60):
            waiting = {
                "one": await _started(http, hub.url, "one", ALICE, WAIT),
                "rest": await _started(http, hub.url, "rest", ALICE, WAIT),
            }
            done = await _started(http, hub.url, "old", ALICE, "hello")
            bobs = await _started(http, hub.url, "one", BOB, WAIT)
            for agent, task_id in [*waiting.items(), ("one", bobs)]:
                await _at_partner(http, partners[agent], task_id, TaskState.WORKING)
            await _at_partner(http, partners["old"], done, TaskState.COMPLETED)

            report = await _killed(http, hub.url, {"caller": "alice"})

            ended = {
                agent: await _at_partner(http, partners[agent], task_id, TaskState.CANCELED)
                for agent, task_id in waiting.items()
            }
            partner_one = await A2AClient.from_url(partners["one"].url, http=http)
            bob_task = await partner_one.get_task(bobs)
            partner_old = await A2AClient.from_url(partners["old"].url, http=http)
            done_task = await partner_old.get_task(done)
            bob_cancel = await http.post(
                f"{hub.url}/agents/one",
                json={"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": bobs}},
                headers=BOB,
            )

    assert report == {
        "target": "caller 'alice'",
        "canceled": [],
        "partnerTasks": 0,
        "gatewayTasks": 2,
        "gatewayFailed": 0,
    }
    assert ended == {"one": TaskState.CANCELED, "rest": TaskState.CANCELED}
    assert bob_task.status.state is TaskState.WORKING
    assert done_task.status.state is TaskState.COMPLETED
    assert bob_cancel.json()["result"]["status"]["state"] == "TASK_STATE_CANCELED"
    audit = [record.getMessage() for record in caplog.records if record.name == "hub.audit"]
    assert audit == [
        "kill of caller 'alice' by credential 'ops': canceled 0 tasks and 0 partner tasks "
        "they started, and 2 partner tasks it started through the gateway"
    ]


async def test_the_cli_counts_a_partner_that_cannot_be_reached_as_failed(
    hub: testing.LoopbackHub, partners: dict[str, Partner], capsys: pytest.CaptureFixture[str]
) -> None:
    # A claim at "down", as the gateway would have recorded it before the partner went away.
    await hub.store.claim_partner_task("down", "gone", "alice", at=utc_now())
    async with httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(60):
            task_id = await _started(http, hub.url, "one", ALICE, WAIT)
            await _at_partner(http, partners["one"], task_id, TaskState.WORKING)
            args = argparse.Namespace(
                url=hub.url, api_key=OPS_KEY, token=None, json=False, context=None, caller="alice"
            )
            status = await kill(args, Running())
            state = await _at_partner(http, partners["one"], task_id, TaskState.CANCELED)

    assert status == 0
    assert state is TaskState.CANCELED
    assert capsys.readouterr().out.splitlines() == [
        f"killed caller 'alice' at {hub.url}: canceled 0 tasks and 0 partner tasks they "
        "started, and 1 partner task it started through the gateway (1 could not be canceled)"
    ]


async def test_the_console_kill_says_how_many_gateway_tasks_it_canceled(
    hub: testing.LoopbackHub, partners: dict[str, Partner]
) -> None:
    async with httpx.AsyncClient(timeout=30) as http, httpx.AsyncClient(timeout=30) as browser:
        with anyio.fail_after(60):
            task_id = await _started(http, hub.url, "rest", ALICE, WAIT)
            await _at_partner(http, partners["rest"], task_id, TaskState.WORKING)
            login = await browser.get(f"{hub.url}/ui/login")
            signed = await browser.post(
                f"{hub.url}/ui/login",
                data={"_csrf": token(login.text), "kind": "api_key", "secret": OPS_KEY},
            )
            assert signed.status_code == 303
            spend = await browser.get(f"{hub.url}/ui/spend")
            killed = await browser.post(
                f"{hub.url}/ui/kill", data={"_csrf": token(spend.text), "caller": "alice"}
            )
            state = await _at_partner(http, partners["rest"], task_id, TaskState.CANCELED)

    assert killed.status_code == 200
    assert (
        "killed caller &#39;alice&#39;: canceled 0 tasks and 0 partner tasks they started, "
        "and 1 partner tasks it started through the gateway"
    ) in killed.text
    assert state is TaskState.CANCELED


async def test_a_context_kill_does_not_reach_gateway_tasks(
    hub: testing.LoopbackHub, partners: dict[str, Partner]
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(60):
            task_id = await _started(http, hub.url, "one", ALICE, WAIT)
            await _at_partner(http, partners["one"], task_id, TaskState.WORKING)
            partner = await A2AClient.from_url(partners["one"].url, http=http)
            context_id = (await partner.get_task(task_id)).context_id or ""
            report = await _killed(http, hub.url, {"contextId": context_id})
            after = await partner.get_task(task_id)
            await partner.cancel(task_id)

    assert report["gatewayTasks"] == report["gatewayFailed"] == 0
    assert after.status.state is TaskState.WORKING
