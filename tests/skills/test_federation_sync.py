"""Learning from a peer hub (`sync_state` naming it): the peer's partners this hub does not
know become runtime partners reached at their own URLs; names in use, this hub itself, hubs
on the request's trail, partners already known and URLs the guard refuses are skipped, each
with its reason."""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import (
    FederationPermission,
    FederationSettings,
    ServerSettings,
    Settings,
    StoreSettings,
)
from hub.partners import FederationPolicy, Partners
from hub.protocol import Task, TaskState
from hub.protocol.trace import TRAIL_HEADER
from hub.registry import load_registry
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.federation import ERROR_METADATA_KEY, federation
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc

pytestmark = pytest.mark.anyio

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)
ELSEWHERE = "http://127.0.0.1:1"
"""A hub the test pretends the request came through (only ever named, never called)."""


def _write(path: Path, partners: dict[str, str]) -> None:
    lines = ["version: 1", "agents:"]
    for name, url in partners.items():
        lines += [f"  - name: {name}", f"    url: {url}"]
        if name == "echoer":
            lines.append("    tags: [echo]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _hub(agents: Path, *, anonymous: tuple[FederationPermission, ...] = ("learn",)) -> Any:
    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            default_skill="echo",
            federation=FederationSettings(anonymous=anonymous, allow_cidrs=LOOPBACK),
        )
        partners = Partners(
            load_registry(agents), federation=FederationPolicy.from_settings(settings)
        )
        skills = {"echo": echo, "delegate": delegate, "federation": federation}
        return create_app(settings, store=MemoryTaskStore(), skills=skills, partners=partners)

    return build


@asynccontextmanager
async def _client(url: str, **headers: str) -> AsyncIterator[A2AClient]:
    async with httpx.AsyncClient() as http:
        yield await A2AClient.from_url(url, http=http, headers=headers)


async def _send(client: A2AClient, text: str = "sync", **metadata: Any) -> Task:
    with anyio.fail_after(20):
        reply = await client.send(user_message(text), metadata=metadata)
    assert isinstance(reply, Task)
    return reply


def _data(task: Task) -> Any:
    assert task.status.state is TaskState.COMPLETED, task.status
    assert task.artifacts is not None
    return task.artifacts[0].parts[0].data


async def _wait_until_listed(peer: str, name: str) -> None:
    """Until the peer's sync_state lists `name` (it polls its agents.yaml every second)."""
    async with _client(peer) as client:
        with anyio.fail_after(30):
            while True:
                partners = _data(await _send(client, swarmKind="sync_state"))["partners"]
                if name in [partner["name"] for partner in partners]:
                    return
                await anyio.sleep(0.2)


async def test_learning_adds_the_peers_unknown_partners_and_skips_the_rest(
    tmp_path: Path, refusing_port: int
) -> None:
    closed = f"http://127.0.0.1:{refusing_port}"
    peer_file, own_file = tmp_path / "b.yaml", tmp_path / "a.yaml"
    async with (
        serve_on_loopback(sdk_jsonrpc) as echoer,
        serve_on_loopback(sdk_jsonrpc) as research,
    ):
        _write(peer_file, {})
        async with serve_on_loopback(_hub(peer_file)) as peer:
            _write(own_file, {"b": peer, "research": research, "my-tool": research})
            async with serve_on_loopback(_hub(own_file)) as here:
                _write(
                    peer_file,
                    {
                        "a": here,  # the learning hub itself
                        "research": closed,  # a name this hub uses
                        "my_tool": closed,  # its lookalike
                        "copy": research,  # a partner this hub has under another name
                        "hop": ELSEWHERE,  # a hub on the request's trail
                        "internal": "http://10.0.0.9:8080",
                        "ghost": closed,
                        "echoer": echoer,
                    },
                )
                await _wait_until_listed(peer, "echoer")
                async with _client(here, **{TRAIL_HEADER: ELSEWHERE}) as client:
                    learned = await _send(client, swarmKind="sync_state", agent="b")
                    again = await _send(client, swarmKind="sync_state", agent="b")
                    delegated = await _send(client, "hi echoer", skill="delegate", agent="echoer")
                    resources = await _send(client, swarmKind="query_resources")

    report = _data(learned)
    assert report["peer"] == "b"
    assert report["learned"] == [{"name": "echoer", "url": echoer, "tags": ["echo"]}]
    assert [(s["name"], s["url"], s["reason"]) for s in report["skipped"]] == [
        ("a", here, "THIS_HUB"),
        ("research", closed, "AGENT_NAME_TAKEN"),
        ("my_tool", closed, "AGENT_NAME_TAKEN"),
        ("copy", research, "ALREADY_KNOWN"),
        ("hop", ELSEWHERE, "ON_TRAIL"),
        ("internal", "http://10.0.0.9:8080", "UNSAFE_URL"),
        ("ghost", closed, "AGENT_CARD_UNUSABLE"),
    ]
    assert all(isinstance(s["message"], str) and s["message"] for s in report["skipped"])
    # Learning again changes nothing: what was learned is known now.
    assert _data(again)["learned"] == []
    assert ("echoer", echoer, "ALREADY_KNOWN") in [
        (s["name"], s["url"], s["reason"]) for s in _data(again)["skipped"]
    ]
    assert delegated.status.state is TaskState.COMPLETED
    assert delegated.artifacts is not None
    assert delegated.artifacts[0].parts[0].text == "hi echoer"
    assert [(p["name"], p.get("origin")) for p in _data(resources)["partners"]] == [
        ("b", None),
        ("research", None),
        ("my-tool", None),
        ("echoer", f"learned from {peer}"),
    ]


async def test_learning_needs_the_permission(tmp_path: Path) -> None:
    own_file = tmp_path / "a.yaml"
    _write(own_file, {})
    async with serve_on_loopback(_hub(own_file, anonymous=())) as here, _client(here) as client:
        refused = await _send(client, swarmKind="sync_state", agent="b")

    assert refused.status.state is TaskState.REJECTED
    assert refused.status.message is not None
    assert refused.status.message.metadata == {
        ERROR_METADATA_KEY: {
            "code": -32602,
            "status": "PERMISSION_DENIED",
            "reason": "DIRECTIVE_NOT_ALLOWED",
            "fieldViolations": [
                {"field": "metadata.swarmKind", "description": "needs the 'learn' permission"}
            ],
        }
    }


async def test_a_peer_that_is_not_a_hub_fails_the_task_saying_so(tmp_path: Path) -> None:
    own_file = tmp_path / "a.yaml"
    async with serve_on_loopback(sdk_jsonrpc) as echoer:
        _write(own_file, {"plain": echoer})
        async with serve_on_loopback(_hub(own_file)) as here, _client(here) as client:
            failed = await _send(client, swarmKind="sync_state", agent="plain")
            unknown = await _send(client, swarmKind="sync_state", agent="nobody")

    assert failed.status.state is TaskState.FAILED
    assert failed.status.message is not None
    assert "did not answer with a partner list" in failed.status.message.text()
    assert unknown.status.state is TaskState.FAILED
    assert unknown.status.message is not None
    assert "agent 'nobody' is not in" in unknown.status.message.text()
