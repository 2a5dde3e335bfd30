"""`spawn_agent` over A2A: a caller granted it adds a partner that `delegate` then reaches;
everyone else is refused (auth off included, unless the settings allow it), and so is a
partner whose card URL the SSRF guard refuses, whose card cannot be read, or whose name is
taken. Runtime partners survive an agents.yaml reload."""

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
from pydantic import SecretStr

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import (
    AuthSettings,
    CredentialSettings,
    FederationPermission,
    FederationSettings,
    ServerSettings,
    Settings,
    StoreSettings,
)
from hub.partners import FederationPolicy, Partners
from hub.protocol import Message, Part, Role, Task, TaskState
from hub.registry import load_registry
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.federation import ERROR_METADATA_KEY, federation
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback

pytestmark = pytest.mark.anyio

OPS_KEY = "ops-federation-key-5c1e9a3b7d"
GUEST_KEY = "guest-federation-key-8f2d4b6a0e"
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


def _hub(
    agents: Path,
    *,
    auth: bool = True,
    anonymous: tuple[FederationPermission, ...] = (),
    allow_loopback: bool = True,
) -> Any:
    def build(url: str) -> Litestar:
        credentials = (
            CredentialSettings(name="ops", api_key=SecretStr(OPS_KEY), federation=("spawn_agent",)),
            CredentialSettings(name="guest", api_key=SecretStr(GUEST_KEY)),
        )
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            default_skill="echo",
            auth=AuthSettings(enabled=True, credentials=credentials) if auth else AuthSettings(),
            federation=FederationSettings(
                anonymous=anonymous, allow_cidrs=LOOPBACK if allow_loopback else ()
            ),
        )
        partners = Partners(
            load_registry(agents), federation=FederationPolicy.from_settings(settings)
        )
        skills = {"echo": echo, "delegate": delegate, "federation": federation}
        return create_app(settings, store=MemoryTaskStore(), skills=skills, partners=partners)

    return build


@pytest.fixture
def agents(tmp_path: Path, echoer: str) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(f"version: 1\nagents:\n  - name: my-echo\n    url: {echoer}\n")
    return path


@asynccontextmanager
async def _client(url: str, key: str | None = None) -> AsyncIterator[A2AClient]:
    headers = {"X-API-Key": key} if key else {}
    async with httpx.AsyncClient() as http:
        yield await A2AClient.from_url(url, http=http, headers=headers)


async def _send(client: A2AClient, text: str = "spawn", **metadata: Any) -> Task:
    with anyio.fail_after(15):
        reply = await client.send(user_message(text), metadata=metadata)
    assert isinstance(reply, Task)
    return reply


async def _spawn(client: A2AClient, agent: Any) -> Task:
    return await _send(client, swarmKind="spawn_agent", agent=agent)


def _error(task: Task) -> Any:
    """The error a REJECTED directive carries in its status message."""
    assert task.status.state is TaskState.REJECTED
    assert task.status.message is not None
    assert task.status.message.metadata is not None
    return task.status.message.metadata[ERROR_METADATA_KEY]


def _data(task: Task) -> Any:
    assert task.status.state is TaskState.COMPLETED, task.status
    assert task.artifacts is not None
    return task.artifacts[0].parts[0].data


async def test_an_authorised_caller_spawns_a_partner_that_delegate_then_reaches(
    agents: Path, echoer: str
) -> None:
    async with serve_on_loopback(_hub(agents)) as url, _client(url, OPS_KEY) as ops:
        spawned = await _spawn(ops, {"name": "newbie", "url": echoer, "tags": ["echo"]})
        delegated = await _send(ops, "hello newbie", skill="delegate", agent="newbie")
        resources = await _send(ops, swarmKind="query_resources")
        state = await _send(ops, swarmKind="sync_state")

    assert _data(spawned) == {
        "added": {
            "name": "newbie",
            "url": echoer,
            "tags": ["echo"],
            "origin": "spawn_agent by ops",
        },
        "card": {"name": "sdk-jsonrpc-1.0", "skills": ["echo"]},
    }
    assert delegated.status.state is TaskState.COMPLETED
    assert delegated.artifacts is not None
    assert [(a.parts[0].text, a.metadata) for a in delegated.artifacts] == [
        ("hello newbie", {"agent": "newbie"})
    ]
    assert [(p["name"], p.get("origin")) for p in _data(resources)["partners"]] == [
        ("my-echo", None),
        ("newbie", "spawn_agent by ops"),
    ]
    assert _data(state) == {
        "partners": [
            {"name": "my-echo", "url": echoer, "tags": []},
            {"name": "newbie", "url": echoer, "tags": ["echo"]},
        ]
    }


async def test_the_partner_can_come_in_a_data_part(agents: Path, echoer: str) -> None:
    message = Message(
        message_id="m-spawn",
        role=Role.USER,
        parts=[Part(text="spawn"), Part(data={"name": "from-data", "url": echoer})],
    )
    async with serve_on_loopback(_hub(agents)) as url, _client(url, OPS_KEY) as ops:
        with anyio.fail_after(15):
            reply = await ops.send(message, metadata={"swarmKind": "spawn_agent"})

    assert isinstance(reply, Task)
    assert _data(reply)["added"]["name"] == "from-data"


async def test_a_caller_without_the_permission_is_refused(agents: Path, echoer: str) -> None:
    async with serve_on_loopback(_hub(agents)) as url, _client(url, GUEST_KEY) as guest:
        refused = await _spawn(guest, {"name": "newbie", "url": echoer})
        delegated = await _send(guest, "hi", skill="delegate", agent="newbie")

    assert _error(refused) == {
        "code": -32602,
        "status": "PERMISSION_DENIED",
        "reason": "DIRECTIVE_NOT_ALLOWED",
        "fieldViolations": [
            {"field": "metadata.swarmKind", "description": "needs the 'spawn_agent' permission"}
        ],
    }
    assert delegated.status.state is TaskState.FAILED  # no such partner


async def test_with_auth_off_spawn_is_refused_unless_the_settings_allow_it(
    agents: Path, echoer: str
) -> None:
    entry = {"name": "newbie", "url": echoer}
    async with serve_on_loopback(_hub(agents, auth=False)) as url, _client(url) as anyone:
        refused = await _spawn(anyone, entry)
    open_hub = _hub(agents, auth=False, anonymous=("spawn_agent",))
    async with serve_on_loopback(open_hub) as url, _client(url) as anyone:
        allowed = await _spawn(anyone, entry)

    assert _error(refused)["reason"] == "DIRECTIVE_NOT_ALLOWED"
    assert _data(allowed)["added"]["origin"] == "spawn_agent by anonymous caller"


@pytest.mark.parametrize(
    "card_url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.8:8080",
        "http://[fd00::1]/card.json",
        "http://127.0.0.1:9",  # loopback, with no allowlist on this hub
    ],
)
async def test_a_card_url_the_guard_refuses_is_refused(agents: Path, card_url: str) -> None:
    async with (
        serve_on_loopback(_hub(agents, allow_loopback=False)) as url,
        _client(url, OPS_KEY) as ops,
    ):
        refused = await _spawn(ops, {"name": "inside", "url": card_url})
        state = await _send(ops, swarmKind="sync_state")

    error = _error(refused)
    assert (error["code"], error["status"], error["reason"]) == (
        -32602,
        "INVALID_ARGUMENT",
        "UNSAFE_URL",
    )
    assert [violation["field"] for violation in error["fieldViolations"]] == ["url"]
    assert [p["name"] for p in _data(state)["partners"]] == ["my-echo"]


async def test_an_unreachable_card_is_refused_naming_the_problem(
    agents: Path, refusing_port: int
) -> None:
    async with serve_on_loopback(_hub(agents)) as url, _client(url, OPS_KEY) as ops:
        refused = await _spawn(ops, {"name": "ghost", "url": f"http://127.0.0.1:{refusing_port}"})

    assert _error(refused)["reason"] == "AGENT_CARD_UNUSABLE"
    assert refused.status.message is not None
    assert "ghost" in refused.status.message.text()


@pytest.mark.parametrize("name", ["my-echo", "my_echo"])
async def test_a_name_in_use_is_refused(agents: Path, echoer: str, name: str) -> None:
    async with serve_on_loopback(_hub(agents)) as url, _client(url, OPS_KEY) as ops:
        refused = await _spawn(ops, {"name": name, "url": echoer})

    assert _error(refused) == {
        "code": -32602,
        "status": "ALREADY_EXISTS",
        "reason": "AGENT_NAME_TAKEN",
        "fieldViolations": [{"field": "name", "description": "taken by 'my-echo'"}],
    }


@pytest.mark.parametrize(
    ("agent", "fields"),
    [
        (None, ["metadata.agent"]),
        ({"name": "x"}, ["metadata.agent.url"]),
        (
            {"name": "x", "url": "http://a.example", "auth": {"bearer": "t"}},
            ["metadata.agent.auth"],
        ),
        ({"name": "Not A Name", "url": "http://a.example"}, ["metadata.agent.name"]),
    ],
)
async def test_a_malformed_partner_is_refused_naming_the_field(
    agents: Path, agent: Any, fields: list[str]
) -> None:
    async with serve_on_loopback(_hub(agents)) as url, _client(url, OPS_KEY) as ops:
        refused = await _spawn(ops, agent)

    error = _error(refused)
    assert error["reason"] == "INVALID_PARAMS"
    assert [violation["field"] for violation in error["fieldViolations"]] == fields


async def test_an_agents_yaml_reload_keeps_the_spawned_partner(agents: Path, echoer: str) -> None:
    async with serve_on_loopback(_hub(agents)) as url, _client(url, OPS_KEY) as ops:
        await _spawn(ops, {"name": "newbie", "url": echoer})
        await anyio.Path(agents).write_text(
            f"version: 1\nagents:\n  - name: my-echo\n    url: {echoer}\n"
            f"  - name: second\n    url: {echoer}\n"
        )
        with anyio.fail_after(30):  # the hub polls agents.yaml every second
            while True:
                names = [
                    p["name"] for p in _data(await _send(ops, swarmKind="sync_state"))["partners"]
                ]
                if "second" in names:
                    break
                await anyio.sleep(0.1)
        delegated = await _send(ops, "still here", skill="delegate", agent="newbie")

    assert names == ["my-echo", "second", "newbie"]
    assert delegated.artifacts is not None
    assert delegated.artifacts[0].parts[0].text == "still here"
