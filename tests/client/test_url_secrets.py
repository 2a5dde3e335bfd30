"""A partner whose agents.yaml URL carries a token in its query (`?key=...`): its card is
read at the card path with the query kept, and the token appears in no log line, error
message or span attribute of the hub, only on the wire to that partner."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.client import A2AClient, card_url, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.protocol import Task, TaskState
from hub.registry import load_registry
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.scripted import card_document
from tests.raw_asgi import read_request

pytestmark = pytest.mark.anyio

TOKEN = "q-token-7c41e9b05d2f8a36"
CARD = "/.well-known/agent-card.json"
V1 = {"A2A-Version": "1.0"}


class KeyedPartner:
    """A partner that answers only requests carrying `?key=TOKEN`; its card names its
    endpoint with the token (as such a partner must). `fail` makes SendMessage answer 503."""

    def __init__(self) -> None:
        self.base = ""
        self.fail = False
        self.card_fails = False
        self.paths: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await read_request(scope, receive, send)
        if body is None:
            return
        self.paths.append(scope["path"])
        query = parse_qs(scope.get("query_string", b"").decode())
        if self.card_fails and scope["method"] == "GET":
            await _send(send, 503, {"error": f"down ({scope['path']})"})
        elif query.get("key") != [TOKEN]:
            await _send(send, 401, {"error": "missing key"})
        elif scope["method"] == "GET" and scope["path"] == f"/a2a{CARD}":
            card = card_document(f"{self.base}/a2a?key={TOKEN}", name="keyed")
            await _send(send, 200, {**card, "capabilities": {"streaming": False}})
        elif self.fail:
            await _send(send, 503, {"error": "busy"})
        else:
            call = json.loads(body)
            task = {
                "id": "t-keyed",
                "contextId": "c-keyed",
                "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "keyed answer"}]}],
            }
            reply = {"jsonrpc": "2.0", "id": call["id"], "result": {"task": task}}
            await _send(send, 200, reply)


async def _send(send: Any, status: int, document: Any) -> None:
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(document).encode()})


@asynccontextmanager
async def _hub(tmp_path: Path, partner: KeyedPartner) -> AsyncIterator[tuple[A2AClient, str]]:
    def partner_app(url: str) -> KeyedPartner:
        partner.base = url
        return partner

    async with serve_on_loopback(partner_app) as partner_url:
        host = partner_url.removeprefix("http://")
        (tmp_path / "agents.yaml").write_text(
            f"version: 1\nagents:\n  - name: keyed\n    url: http://{host}/a2a?key={TOKEN}\n",
            encoding="utf-8",
        )
        registry = load_registry(tmp_path / "agents.yaml")

        def build(url: str) -> Litestar:
            settings = Settings(
                server=ServerSettings(public_url=url),
                store=StoreSettings(kind="memory"),
                default_skill="delegate",
            )
            skills = {"delegate": delegate, "echo": echo}
            return create_app(
                settings, store=MemoryTaskStore(), skills=skills, partners=Partners(registry)
            )

        async with serve_on_loopback(build) as url, httpx.AsyncClient() as http:
            yield await A2AClient.from_url(url, http=http), url


def test_the_card_path_joins_the_url_path_and_keeps_the_query() -> None:
    assert card_url(f"http://h:1/a2a?key={TOKEN}") == f"http://h:1/a2a{CARD}?key={TOKEN}"
    assert card_url("http://h:1/a2a/") == f"http://h:1/a2a{CARD}"
    assert card_url(f"http://h:1/card.json?key={TOKEN}") == f"http://h:1/card.json?key={TOKEN}"


async def test_a_partner_keyed_in_its_query_is_read_and_its_key_is_never_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    partner = KeyedPartner()
    answers: list[str] = []
    async with _hub(tmp_path, partner) as (hub, url), httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(60):
            task = await hub.send(user_message("hi"), metadata={"agent": "keyed"})
            assert isinstance(task, Task)
            assert task.status.state is TaskState.COMPLETED, task.status
            assert task.artifacts is not None
            assert task.artifacts[0].parts[0].text == "keyed answer"
            answers.append((await http.get(f"{url}/agents/keyed{CARD}")).text)
            answers.append(
                (await http.post(f"{url}/agents/keyed", json=_send_message(), headers=V1)).text
            )
            partner.fail = True
            failed = await hub.send(user_message("again"), metadata={"agent": "keyed"})
            assert isinstance(failed, Task)
            assert failed.status.state is TaskState.FAILED
            answers.append(failed.model_dump_json())
            answers.append(
                (await http.post(f"{url}/agents/keyed", json=_send_message(), headers=V1)).text
            )

    assert f"/a2a{CARD}" in partner.paths
    logged = "\n".join(
        f"{record.getMessage()} {record.exc_text or ''}" for record in caplog.records
    )
    assert logged  # the partner calls were logged (at DEBUG at least)
    assert TOKEN not in logged
    assert '"keyed answer"' in answers[1]
    assert '"error"' in answers[3]
    for answer in answers:
        assert TOKEN not in answer


async def test_a_keyed_partner_whose_card_cannot_be_read_is_logged_without_its_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    partner = KeyedPartner()
    partner.card_fails = True
    async with _hub(tmp_path, partner) as (hub, _):
        with anyio.fail_after(60):
            task = await hub.send(user_message("hi"), metadata={"agent": "keyed"})
            assert isinstance(task, Task)
            assert task.status.state is TaskState.FAILED
            status = await hub.get_task(task.id)

    logged = "\n".join(
        f"{record.getMessage()} {record.exc_text or ''}" for record in caplog.records
    )
    assert "agent card" in logged  # the failed read was logged
    assert TOKEN not in logged
    assert TOKEN not in status.model_dump_json()


def _send_message() -> dict[str, Any]:
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": message},
    }
