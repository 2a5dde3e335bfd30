"""Budgets over real HTTP: a credential's partner-call budget crossed by the last call of a
burst through the gateway is refused with the A2A error naming the budget and the figure
(HTTP 429, `BUDGET_EXHAUSTED`), counted in `/metrics` by reason and named on the access
line; inside a running task, the partner call past the budget ends the task with the same
words; a caller without a budget, or another caller, is not held back."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.config import (
    BudgetSettings,
    Settings,
)
from hub.protocol import Task, TaskState
from hub.skills.delegate import delegate
from hub.testing import serve_hub
from hub.testing.model_server import Turn
from tests.identity.callers import credential, with_credentials
from tests.orchestrator.plans import collect, final_message, final_state, planning
from tests.swarm.partners import partner_registry, scripted

pytestmark = pytest.mark.anyio

BOB_KEY = "bob-key-0123456789abcdef"
CAROL_KEY = "carol-key-0123456789abcdef"
BURST = 4
V1 = {"A2A-Version": "1.0"}


def settings() -> Settings:
    budget = BudgetSettings.model_validate({"window": "1h", "partner_calls": BURST - 1})
    return with_credentials(
        credential("bob", BOB_KEY, budget=budget), credential("carol", CAROL_KEY)
    )


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[str]:
    script = {"echoer": (scripted("echo: {text}"), ())}
    async with (
        partner_registry(tmp_path, script) as (registry, _),
        serve_hub(skills=[delegate], partners=registry, settings=settings()) as running,
    ):
        yield running.url


def _send(text: str) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


async def test_the_last_call_of_a_burst_through_the_gateway_crosses_the_budget(
    hub: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="hub.access")
    async with httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(30):
            answers = [
                await http.post(
                    f"{hub}/agents/echoer",
                    json=_send(f"call {n}"),
                    headers={"X-API-Key": BOB_KEY, **V1},
                )
                for n in range(BURST)
            ]
            others = await http.post(
                f"{hub}/agents/echoer",
                json=_send("not bob"),
                headers={"X-API-Key": CAROL_KEY, **V1},
            )
            metrics = await http.get(f"{hub}/metrics", headers={"X-API-Key": CAROL_KEY})

    assert [answer.json().get("error") is None for answer in answers] == [True] * (BURST - 1) + [
        False
    ]
    last = answers[-1]
    assert last.status_code == 429
    assert int(last.headers["retry-after"]) > 3000
    error = last.json()["error"]
    assert error["code"] == -32602
    assert error["message"].startswith(
        "credential 'bob' has spent its partner_calls budget: 3 partner calls in the last 1h, "
        "its limit is 3 (auth.credentials[].budget.partner_calls); the call to partner "
        "'echoer' was not sent; retry in "
    )
    info = error["data"][0]
    assert info["reason"] == "BUDGET_EXHAUSTED"
    assert info["metadata"] == {
        "agent": "echoer",
        "caller": "bob",
        "budget": "partner_calls",
        "limit": "3",
        "spent": "3 partner calls",
        "window": "3600s",
    }
    assert others.json().get("error") is None
    assert 'a2a_hub_refusals_total{reason="BUDGET_EXHAUSTED"} 1.0' in metrics.text
    lines = [record.getMessage() for record in caplog.records if record.name == "hub.access"]
    refused = [line for line in lines if "refused=" in line]
    assert len(refused) == 1
    assert "caller=bob refused=BUDGET_EXHAUSTED" in refused[0]
    for text in (*lines, metrics.text, last.text):
        assert BOB_KEY not in text
        assert CAROL_KEY not in text


async def test_inside_a_task_the_partner_call_past_the_budget_ends_the_task_saying_so(
    hub: str,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        bob = await A2AClient.from_url(hub, http=http, headers={"X-API-Key": BOB_KEY})
        with anyio.fail_after(30):
            tasks = [
                await bob.send(user_message(f"turn {n}"), metadata={"agent": "echoer"})
                for n in range(BURST)
            ]
            metrics = await http.get(f"{hub}/metrics", headers={"X-API-Key": BOB_KEY})

    states = [task.status.state for task in tasks if isinstance(task, Task)]
    assert states == [TaskState.COMPLETED] * (BURST - 1) + [TaskState.FAILED]
    last = tasks[-1]
    assert isinstance(last, Task)
    assert last.status.message is not None
    assert "has spent its partner_calls budget: 3 partner calls" in last.status.message.text()
    assert 'a2a_hub_refusals_total{reason="BUDGET_EXHAUSTED"} 1.0' in metrics.text


@pytest.mark.parametrize(
    ("budget", "usage", "price", "words"),
    [
        ({"tokens": 100}, (60, 40), None, "has spent its tokens budget: 100 tokens"),
        (
            {"cost": 0.5},
            (1_000_000, 0),
            {"input": 1.0, "output": 2.0},
            "has spent its cost budget: $1.0000 in the last 1h, its limit is $0.5",
        ),
    ],
)
async def test_the_model_step_after_the_one_that_crossed_the_budget_is_refused(
    budget: dict[str, Any], usage: tuple[int, int], price: dict[str, float] | None, words: str
) -> None:
    limits = BudgetSettings.model_validate(budget)
    bob_only = with_credentials(credential("bob", BOB_KEY, budget=limits))
    script = [Turn(text="first answer", usage=usage), Turn(text="never", usage=usage)]
    async with (
        planning(script, settings=bob_only, price=price) as (_, model, served),
        httpx.AsyncClient(timeout=30) as http,
    ):
        bob = await A2AClient.from_url(served.url, http=http, headers={"X-API-Key": BOB_KEY})
        with anyio.fail_after(30):
            first = await collect(bob, "one")
            second = await collect(bob, "two")
        spend = await http.get(f"{served.url}/metrics", headers={"X-API-Key": BOB_KEY})

    assert final_state(first) is TaskState.COMPLETED
    assert final_state(second) is TaskState.FAILED
    assert words in final_message(second)
    assert len(model.requests) == 1  # the refused step never reached the model
    assert 'a2a_hub_refusals_total{reason="BUDGET_EXHAUSTED"} 1.0' in spend.text
