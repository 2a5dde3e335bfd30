"""The kill switch over real HTTP: a swarm of five partners killed mid-flight by an operator
through `POST /admin/kill` ends its hub task and all five partner tasks canceled, with an
audit line naming who did it; a caller that is not an operator is refused (403, counted in
`/metrics` by reason), and a body that names no target is told what to send."""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest

from hub.cli.kill import kill
from hub.cli.outcome import Running
from hub.client import A2AClient, user_message
from hub.config import Settings
from hub.errors import RemoteRpcError
from hub.protocol import TaskState
from hub.skills.swarm import swarm
from hub.store import ChildRecord, TaskStore
from hub.testing import serve_hub
from tests.console.test_pages import token
from tests.identity.callers import credential, with_credentials
from tests.ledger.test_ledger import _partner_task
from tests.swarm.partners import partner_registry, scripted

pytestmark = pytest.mark.anyio

OPS_KEY = "ops-key-0123456789abcdef"
ALICE_KEY = "alice-key-0123456789abcdef"
PARTNERS = ("p1", "p2", "p3", "p4", "p5")


@dataclass
class KillHub:
    url: str
    store: TaskStore
    partner_urls: dict[str, str]


def settings() -> Settings:
    return with_credentials(
        credential("ops", OPS_KEY, operator=True), credential("alice", ALICE_KEY)
    )


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[KillHub]:
    # Each partner works for a minute: the swarm is mid-flight until it is killed.
    script = {name: (scripted("done", delay=60), ("slow",)) for name in PARTNERS}
    async with (
        partner_registry(tmp_path, script) as (registry, urls),
        serve_hub(skills=[swarm], partners=registry, settings=settings()) as running,
    ):
        yield KillHub(running.url, running.store, urls)


async def _lines_in(
    store: TaskStore, parent_id: str, count: int, *states: TaskState
) -> list[ChildRecord]:
    """The parent's `count` ledger lines once each is in one of `states` (bounded wait)."""
    with anyio.fail_after(20):
        while True:
            lines = await store.list_children(parent_id)
            if len(lines) == count and all(line.state in states for line in lines):
                return lines
            await anyio.sleep(0.02)


async def test_a_swarm_of_five_killed_mid_flight_ends_all_five_partner_tasks_canceled(
    hub: KillHub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="hub.audit")
    async with httpx.AsyncClient(timeout=30) as http:
        alice = await A2AClient.from_url(hub.url, http=http, headers={"X-API-Key": ALICE_KEY})
        with anyio.fail_after(30):
            async with alice.stream(
                user_message("review this"),
                metadata={"skill": "swarm", "strategy": "broadcast", "tags": ["slow"]},
            ) as events:
                async for event in events:
                    if event.status_update is not None:
                        break  # the hub names its task; the branches start
            task = (await alice.list_tasks()).tasks[0]
            working = await _lines_in(
                hub.store, task.id, len(PARTNERS), TaskState.SUBMITTED, TaskState.WORKING
            )

            answer = await http.post(
                f"{hub.url}/admin/kill",
                json={"caller": "alice"},
                headers={"X-API-Key": OPS_KEY},
            )
            assert answer.status_code == 200, answer.text
            report = answer.json()

            partner_tasks = [
                await _partner_task(hub.partner_urls[line.agent], line.child_id, TaskState.CANCELED)
                for line in working
            ]
            ended = await alice.get_task(task.id)

    assert report == {
        "target": "caller 'alice'",
        "canceled": [task.id],
        "partnerTasks": len(PARTNERS),
        "gatewayTasks": 0,
        "gatewayFailed": 0,
    }
    assert sorted(line.agent for line in working) == list(PARTNERS)
    assert [found.status.state for found in partner_tasks] == [TaskState.CANCELED] * 5
    assert ended.status.state is TaskState.CANCELED
    audit = [record.getMessage() for record in caplog.records if record.name == "hub.audit"]
    assert audit == [
        f"kill of caller 'alice' by credential 'ops': canceled 1 tasks and 5 partner tasks "
        f"they started, and 0 partner tasks it started through the gateway ({task.id})"
    ]


async def test_a_kill_by_context_ends_only_that_context(hub: KillHub) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        alice = await A2AClient.from_url(hub.url, http=http, headers={"X-API-Key": ALICE_KEY})
        with anyio.fail_after(30):
            ids = [await _swarm_started(alice), await _swarm_started(alice)]
            first = await alice.get_task(ids[0])
            answer = await http.post(
                f"{hub.url}/admin/kill",
                json={"contextId": first.context_id},
                headers={"X-API-Key": OPS_KEY},
            )
            assert answer.status_code == 200, answer.text
            other = await alice.get_task(ids[1])
            await alice.cancel(ids[1])

    assert answer.json()["canceled"] == [ids[0]]
    assert other.status.state is TaskState.WORKING


async def test_a_caller_that_is_not_an_operator_is_refused_and_counted(hub: KillHub) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        refused = await http.post(
            f"{hub.url}/admin/kill", json={"caller": "ops"}, headers={"X-API-Key": ALICE_KEY}
        )
        unnamed = await http.post(
            f"{hub.url}/admin/kill", json={"who": "alice"}, headers={"X-API-Key": OPS_KEY}
        )
        anonymous = await http.post(f"{hub.url}/admin/kill", json={"caller": "alice"})
        metrics = await http.get(f"{hub.url}/metrics", headers={"X-API-Key": OPS_KEY})

    assert refused.status_code == 403
    assert refused.json()["error"]["details"][0]["reason"] == "OPERATOR_ONLY"
    assert "operator: true" in refused.json()["error"]["message"]
    assert unnamed.status_code == 400
    assert '"contextId"' in unnamed.json()["error"]["message"]
    assert anonymous.status_code == 401
    assert 'a2a_hub_refusals_total{reason="OPERATOR_ONLY"} 1.0' in metrics.text
    for answer in (refused, unnamed, anonymous, metrics):
        assert OPS_KEY not in answer.text
        assert ALICE_KEY not in answer.text


def _cli_args(url: str, key: str, *, caller: str) -> argparse.Namespace:
    return argparse.Namespace(
        url=url, api_key=key, token=None, json=False, context=None, caller=caller
    )


async def test_the_cli_kills_a_callers_tasks_and_says_what_it_ended(
    hub: KillHub, capsys: pytest.CaptureFixture[str]
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        alice = await A2AClient.from_url(hub.url, http=http, headers={"X-API-Key": ALICE_KEY})
        with anyio.fail_after(30):
            task_id = await _swarm_started(alice, "p1", "p2")
            await _lines_in(hub.store, task_id, 2, TaskState.SUBMITTED, TaskState.WORKING)
            with pytest.raises(RemoteRpcError) as refused:
                await kill(_cli_args(hub.url, ALICE_KEY, caller="alice"), Running())
            status = await kill(_cli_args(hub.url, OPS_KEY, caller="alice"), Running())
            ended = await alice.get_task(task_id)

    assert "credential 'alice' may not use the kill switch" in str(refused.value)
    assert "OPERATOR_ONLY" in str(refused.value)
    assert status == 0
    assert ended.status.state is TaskState.CANCELED
    assert capsys.readouterr().out.splitlines() == [
        f"killed caller 'alice' at {hub.url}: canceled 1 task and 2 partner tasks they started, "
        "and 0 partner tasks it started through the gateway",
        f"  {task_id}",
    ]


async def _swarm_started(client: A2AClient, *agents: str) -> str:
    """Start a swarm over `agents` (p1 by default) as `client`'s credential; its task id
    once it runs."""
    async with client.stream(
        user_message("go"),
        metadata={"skill": "swarm", "strategy": "broadcast", "agents": list(agents or ["p1"])},
    ) as events:
        async for event in events:
            if event.status_update is not None:
                return event.status_update.task_id
    raise AssertionError("the hub named no task")


async def _signed_in(http: httpx.AsyncClient, url: str, key: str) -> None:
    login = await http.get(f"{url}/ui/login")
    signed = await http.post(
        f"{url}/ui/login", data={"_csrf": token(login.text), "kind": "api_key", "secret": key}
    )
    assert signed.status_code == 303


async def test_the_console_shows_spend_and_gives_only_an_operator_the_kill_buttons(
    hub: KillHub,
) -> None:
    async with (
        httpx.AsyncClient(timeout=30) as ops,
        httpx.AsyncClient(timeout=30) as alice_browser,
        httpx.AsyncClient(timeout=30) as http,
    ):
        alice = await A2AClient.from_url(hub.url, http=http, headers={"X-API-Key": ALICE_KEY})
        operator = await A2AClient.from_url(hub.url, http=http, headers={"X-API-Key": OPS_KEY})
        with anyio.fail_after(30):
            task_id = await _swarm_started(alice)
            own_id = await _swarm_started(operator)
            await _signed_in(ops, hub.url, OPS_KEY)
            await _signed_in(alice_browser, hub.url, ALICE_KEY)
            ops_spend = await ops.get(f"{hub.url}/ui/spend")
            alice_spend = await alice_browser.get(f"{hub.url}/ui/spend")
            ops_task = await ops.get(f"{hub.url}/ui/tasks/{own_id}")
            alice_task = await alice_browser.get(f"{hub.url}/ui/tasks/{task_id}")
            forged = await ops.post(f"{hub.url}/ui/kill", data={"caller": "alice"})
            refused = await alice_browser.post(
                f"{hub.url}/ui/kill", data={"_csrf": token(alice_spend.text), "caller": "ops"}
            )
            killed = await ops.post(
                f"{hub.url}/ui/kill", data={"_csrf": token(ops_spend.text), "caller": "alice"}
            )
            ended = await alice.get_task(task_id)
            await operator.cancel(own_id)

    assert ops_spend.status_code == 200
    assert 'data-caller="ops"' in ops_spend.text
    assert 'data-caller="alice"' in ops_spend.text
    assert "Kill alice's tasks" in ops_spend.text
    assert "<td>1</td>" in ops_spend.text  # alice's one partner call, this window
    assert 'data-caller="ops"' not in alice_spend.text
    assert 'data-caller="alice"' in alice_spend.text
    assert 'action="/ui/kill"' not in alice_spend.text
    assert 'id="kill-context"' in ops_task.text
    assert 'id="kill-context"' not in alice_task.text
    assert forged.status_code == 403
    assert refused.status_code == 403
    assert "may not use the kill switch" in refused.text
    assert killed.status_code == 200
    assert "killed caller &#39;alice&#39;: canceled 1 tasks" in killed.text
    assert ended.status.state is TaskState.CANCELED
    for page in (ops_spend, alice_spend, ops_task, killed, refused):
        assert OPS_KEY not in page.text
        assert ALICE_KEY not in page.text
