"""A partner that answers something that is not A2A, an HTTP error page, or nothing at all,
reached through `delegate`, federation's `forward_message` and `swarm`: the hub task fails
with a message naming the partner and the kind of fault, never the partner's address or what
it said, and the hub logs the details once, without a traceback."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from hub.client import CARD_PATH, A2AClient, user_message
from hub.protocol import Task, TaskState
from hub.registry import load_registry
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.federation import federation
from hub.skills.swarm import swarm
from hub.testing import serve_hub
from tests.client.faulty import (
    FAULTS,
    INTERNAL,
    KIND,
    SECRET,
    FaultyPartner,
    assert_nothing_leaks,
    faulty_partner,
)
from tests.client.scripted import Handler, respond

pytestmark = pytest.mark.anyio


@pytest.fixture(params=[False, True], ids=["blocking-partner", "streaming-partner"])
def streaming(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture(params=FAULTS)
async def partner(request: pytest.FixtureRequest, streaming: bool) -> AsyncIterator[FaultyPartner]:
    async with faulty_partner(request.param, streaming=streaming) as running:
        yield running


@pytest.fixture
async def hub(partner: FaultyPartner, tmp_path: Path) -> AsyncIterator[A2AClient]:
    path = tmp_path / "agents.yaml"
    path.write_text(
        f"version: 1\nagents:\n  - name: faulty\n    url: {partner.url}\n", encoding="utf-8"
    )
    registry = load_registry(path)

    skills = [delegate, echo, swarm, federation]
    async with serve_hub(skills=skills, partners=registry) as running, httpx.AsyncClient() as http:
        yield await A2AClient.from_url(running.url, http=http)


def fault_of(request: pytest.FixtureRequest) -> str:
    return str(request.node.callspec.params["partner"])


async def failed_task(hub: A2AClient, **metadata: Any) -> Task:
    with anyio.fail_after(30):
        reply = await hub.send(user_message("hello"), metadata=metadata)
    assert isinstance(reply, Task)
    assert reply.status.state is TaskState.FAILED, reply.status
    return reply


def status_text(task: Task) -> str:
    assert task.status.message is not None
    return task.status.message.text()


def assert_logged_once(caplog: pytest.LogCaptureFixture, partner: FaultyPartner) -> None:
    """One WARNING tells where the partner is and what went wrong; nothing has a traceback."""
    assert not [record for record in caplog.records if record.exc_info], "a traceback was logged"
    details = [
        record
        for record in caplog.records
        if record.levelno == logging.WARNING and partner.interface in record.getMessage()
    ]
    assert len(details) == 1, [record.getMessage() for record in caplog.records]
    caplog.clear()


async def test_delegate_fails_the_task_naming_the_partner_and_the_fault(
    hub: A2AClient,
    partner: FaultyPartner,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    kind = f"agent 'faulty' {KIND[fault_of(request)]}"

    task = await failed_task(hub, agent="faulty")

    assert status_text(task).startswith(kind), status_text(task)
    assert_nothing_leaks(task.to_json().decode(), partner)
    assert_logged_once(caplog, partner)

    # The same through a stream from the hub: its last event says the same.
    with anyio.fail_after(30):
        async with hub.stream(user_message("hello"), metadata={"agent": "faulty"}) as events:
            seen = [event async for event in events]
    last = seen[-1]
    assert last.status_update is not None
    final = last.status_update.status
    assert final.state is TaskState.FAILED
    assert final.message is not None
    assert final.message.text().startswith(kind)
    assert_nothing_leaks("".join(event.to_json().decode() for event in seen), partner)
    assert_logged_once(caplog, partner)


async def test_forward_message_fails_the_task_naming_the_partner_and_the_fault(
    hub: A2AClient,
    partner: FaultyPartner,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    task = await failed_task(hub, swarmKind="forward_message", agent="faulty")

    assert status_text(task).startswith(f"agent 'faulty' {KIND[fault_of(request)]}")
    assert_nothing_leaks(task.to_json().decode(), partner)
    assert_logged_once(caplog, partner)


async def test_a_swarm_branch_names_the_partner_and_the_fault(
    hub: A2AClient,
    partner: FaultyPartner,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:
    task = await failed_task(hub, skill="swarm", agents=["faulty"], strategy="broadcast")

    assert task.artifacts is not None
    report = next(part.data for part in task.artifacts[0].parts if part.data is not None)
    assert isinstance(report, dict)
    [branch] = report["branches"]
    assert branch["state"] == "error"
    assert branch["error"].startswith(f"agent 'faulty' {KIND[fault_of(request)]}")
    assert_nothing_leaks(task.to_json().decode() + json.dumps(report), partner)
    assert_logged_once(caplog, partner)


@pytest.mark.parametrize(
    ("card", "kind"),
    [
        (
            respond(302, b"", "text/plain", headers=[("location", f"http://{INTERNAL}/card")]),
            "not A2A",
        ),
        (respond(200, b"<html>Welcome to nginx</html>", "text/html"), "not A2A"),
        (respond(500, f"password={SECRET}".encode(), "text/plain"), "HTTP 500"),
    ],
    ids=["redirect", "html", "http-500"],
)
async def test_a_partner_whose_card_cannot_be_read_is_named_with_the_kind(
    card: Handler, kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with faulty_partner("html") as partner:
        partner.agent.routes[f"GET {CARD_PATH}"] = card
        path = tmp_path / "agents.yaml"
        path.write_text(
            f"version: 1\nagents:\n  - name: faulty\n    url: {partner.url}\n", encoding="utf-8"
        )
        registry = load_registry(path)

        served = serve_hub(skills=[delegate], partners=registry)
        async with served as running, httpx.AsyncClient() as http:
            hub = await A2AClient.from_url(running.url, http=http)
            task = await failed_task(hub, agent="faulty")

    assert status_text(task) == f"agent 'faulty': its agent card could not be read ({kind})"
    assert_nothing_leaks(task.to_json().decode(), partner)
    assert_logged_once(caplog, partner)
