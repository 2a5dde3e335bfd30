"""The hub as an MCP server, end to end: the official `mcp` client against a real `a2a-hub
serve` process (Streamable HTTP at /mcp, auth on) and a real `a2a-hub mcp` process (stdio),
in front of real a2a-sdk partner processes (1.0 and 0.3)."""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as mcp
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import stdio as mcp_stdio
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from hub.tools import input_schema

from . import rpc
from .hubproc import ROOT
from .partnerproc import (
    _HUB_LINE,
    AgentEntry,
    Child,
    PartnerSpec,
    agents_for,
    partner_processes,
    stop_all,
    write_agents,
    write_hub_config,
)
from .sdk_partner import FAILURE, QUESTION

pytestmark = pytest.mark.anyio

OPS_KEY = "e2e-mcp-ops-key-5b7d9f1a3c"
NARROW_TOKEN = "e2e-mcp-narrow-token-2e4a6c8e0b"
OPS = {"X-API-Key": OPS_KEY}
NARROW = {"Authorization": f"Bearer {NARROW_TOKEN}"}

PARTNERS = [
    PartnerSpec(name="quick", behaviour="fast", answer="Paris", tags=("race",)),
    PartnerSpec(name="old", behaviour="echo", protocol="0.3"),
    PartnerSpec(name="slow", behaviour="slow", delay=30, tags=("race",)),
    PartnerSpec(name="failing", behaviour="failing"),
    PartnerSpec(name="asker", behaviour="ask"),
    PartnerSpec(name="steps", behaviour="steps"),
]
PARTNER_TOOLS = {f"a2a_{spec.name}" for spec in PARTNERS}

# Few open streams per caller: a request that kept its stream after it ended would soon
# have every later one of this module refused.
AUTH = """\
limits: {max_streams_per_caller: 4}
auth:
  enabled: true
  credentials:
    - name: ops
      api_key: "${E2E_MCP_OPS}"
    - name: narrow
      bearer: "${E2E_MCP_NARROW}"
      skills: [delegate]
      agents: [quick]
"""


@dataclass
class Setup:
    url: str
    config: Path
    agents: Path
    entries: list[AgentEntry]
    partners: dict[str, Child]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    folder = tmp_path_factory.mktemp("mcp-hub")
    with partner_processes(PARTNERS) as partners:
        entries = agents_for(partners, PARTNERS)
        config = write_hub_config(folder, entries=entries)
        with config.open("a", encoding="utf-8") as file:
            file.write(AUTH)
        env = {"E2E_MCP_OPS": OPS_KEY, "E2E_MCP_NARROW": NARROW_TOKEN}
        argv = [sys.executable, "-m", "hub", "serve", "--config", str(config), "--port", "0"]
        hub = Child(argv, _HUB_LINE, "mcp hub", env=env)
        try:
            url = hub.wait_ready()
            yield Setup(url, config, folder / "agents.yaml", entries, partners)
        finally:
            stop_all([hub])


def connect(url: str, headers: dict[str, str], **options: Any) -> Client:
    """An MCP client of the hub at `url`, sending `headers` with every request."""
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0))
    return Client(streamable_http_client(f"{url}/mcp", http_client=http), **options)


async def answer_blue(*_: Any) -> mcp.ElicitResult:
    return mcp.ElicitResult(action="accept", content={"answer": "blue"})


def text_of(result: mcp.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, mcp.TextContent))


async def hub_task(url: str, task_id: str) -> dict[str, Any]:
    tasks = await anyio.to_thread.run_sync(
        lambda: rpc.call(url, "ListTasks", {"pageSize": 100}, headers=OPS)["tasks"]
    )
    [task] = [task for task in tasks if task["id"] == task_id]
    return dict(task)


async def partner_states(url: str) -> list[str]:
    tasks = await anyio.to_thread.run_sync(rpc.list_tasks, url)
    return [rpc.state(task) for task in tasks]


async def test_tools_are_listed_with_the_hubs_names_descriptions_and_schemas(
    setup: Setup,
) -> None:
    async with connect(setup.url, OPS) as client:
        assert client.protocol_version == "2026-07-28"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == PARTNER_TOOLS | {"skill_echo", "delegate", "swarm"}
    quick = tools["a2a_quick"]
    assert quick.input_schema == input_schema(["fast"])
    assert quick.description is not None
    assert quick.description.startswith("Send a task to the partner agent 'quick'")
    swarm = tools["swarm"].input_schema
    assert swarm["properties"]["strategy"]["enum"] == [
        "broadcast",
        "race",
        "vote",
        "best_of",
        "map",
        "chain",
    ]
    assert swarm["required"] == ["message"]


async def test_a_partner_tool_call_is_a_hub_task_answered_by_a_1_0_and_a_0_3_partner(
    setup: Setup,
) -> None:
    async with connect(setup.url, OPS) as client:
        quick = await client.call_tool("a2a_quick", {"message": "capital of France?"})
        old = await client.call_tool("a2a_old", {"message": "hello from mcp"})
    assert not quick.is_error
    assert text_of(quick) == "Paris"
    assert not old.is_error
    assert text_of(old) == "hello from mcp"
    for result, agent in ((quick, "quick"), (old, "old")):
        structured = result.structured_content
        assert structured is not None
        assert structured["state"] == "completed"
        assert structured["agent"] == agent
        task = await hub_task(setup.url, structured["task_id"])
        assert rpc.state(task) == "TASK_STATE_COMPLETED"
        assert task["metadata"]["skill"] == "delegate"
        assert task["metadata"]["agent"] == agent


async def test_a_swarm_race_answers_with_the_first_success_and_cancels_the_losers(
    setup: Setup,
) -> None:
    async with connect(setup.url, OPS) as client:
        result = await client.call_tool(
            "swarm", {"message": "race to Paris", "strategy": "race", "tags": ["race"]}
        )
    assert not result.is_error, text_of(result)
    assert "Paris" in text_of(result)
    states = await anyio.to_thread.run_sync(
        lambda: rpc.wait_for(
            lambda: states if "TASK_STATE_CANCELED" in (states := _states(setup, "slow")) else None,
            what="the slow partner's losing branch to end canceled",
        )
    )
    assert "TASK_STATE_CANCELED" in states


def _states(setup: Setup, partner: str) -> list[str]:
    return [rpc.state(task) for task in rpc.list_tasks(setup.partners[partner].url)]


async def test_a_failing_partner_is_a_tool_error_with_the_hubs_message(setup: Setup) -> None:
    async with connect(setup.url, OPS) as client:
        result = await client.call_tool("a2a_failing", {"message": "please fail"})
    assert result.is_error
    assert FAILURE in text_of(result)
    assert "partner 'failing'" in text_of(result)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_partners_question_is_asked_and_the_answer_continues_the_same_partner_task(
    setup: Setup, mode: str
) -> None:
    asked: list[str] = []

    async def answer(*args: Any) -> mcp.ElicitResult:
        params = args[-1]
        asked.append(params.message)
        return await answer_blue()

    before = len(await partner_states(setup.partners["asker"].url))
    async with connect(setup.url, OPS, mode=mode, elicitation_callback=answer) as client:
        result = await client.call_tool("a2a_asker", {"message": "paint it"})
    assert not result.is_error, text_of(result)
    assert text_of(result) == "you said: blue"
    assert asked == [QUESTION]
    # One partner task, asked and answered: the answer went to the task that asked.
    states = await partner_states(setup.partners["asker"].url)
    assert states[before:] == ["TASK_STATE_COMPLETED"]


async def test_progress_notifications_carry_the_partners_updates_in_order(setup: Setup) -> None:
    notes: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        notes.append((value, message))

    async with connect(setup.url, OPS) as client:
        result = await client.call_tool("a2a_steps", {"message": "go"}, progress_callback=progress)
    assert text_of(result) == "done"
    assert [message for _, message in notes] == [
        "delegated to 'steps'",
        "step 1",
        "step 2",
        "step 3",
        "answer: done",
    ]
    assert [value for value, _ in notes] == [1, 2, 3, 4, 5]


def _first_text(task: dict[str, Any]) -> str | None:
    return rpc.history_text(task) if task.get("history") else None


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_call_canceled_by_the_client_cancels_the_hub_task_and_the_partner_task(
    setup: Setup, mode: str
) -> None:
    text = f"take your time {uuid.uuid4().hex}"
    working = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        if message == "working":
            working.set()

    async with connect(setup.url, OPS, mode=mode) as client, anyio.create_task_group() as group:

        async def call() -> None:
            await client.call_tool("a2a_slow", {"message": text}, None, progress)

        group.start_soon(call)
        with anyio.fail_after(15):
            await working.wait()
        group.cancel_scope.cancel()

    def about(url: str, headers: dict[str, str] | None = None) -> list[str] | None:
        tasks = rpc.call(url, "ListTasks", {"pageSize": 100}, headers=headers)
        found = [rpc.state(task) for task in tasks["tasks"] if _first_text(task) == text]
        return found if found and all(state in rpc.TERMINAL for state in found) else None

    partner = await anyio.to_thread.run_sync(
        lambda: rpc.wait_for(lambda: about(setup.partners["slow"].url), what="the partner task")
    )
    hub = await anyio.to_thread.run_sync(
        lambda: rpc.wait_for(lambda: about(setup.url, OPS), what="the hub task")
    )
    assert partner == ["TASK_STATE_CANCELED"]
    assert hub == ["TASK_STATE_CANCELED"]


async def test_without_a_credential_mcp_is_refused_and_a_scoped_one_lists_only_its_tools(
    setup: Setup,
) -> None:
    async with httpx.AsyncClient() as http:
        refused = await http.post(
            f"{setup.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    with pytest.raises(ExceptionGroup) as failed:
        async with connect(setup.url, {}) as client:
            await client.list_tools()
    assert failed.group_contains(MCPError)
    async with connect(setup.url, NARROW) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == {"a2a_quick", "delegate"}
        with pytest.raises(MCPError):
            await client.call_tool("a2a_slow", {"message": "not mine"})


async def test_a_session_serves_only_the_credential_that_opened_it(setup: Setup) -> None:
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    opening = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "1"},
        },
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    async with httpx.AsyncClient() as http:
        opened = await http.post(f"{setup.url}/mcp", json=opening, headers={**OPS, **accept})
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
        version = {"MCP-Protocol-Version": "2025-11-25"}
        other = await http.post(
            f"{setup.url}/mcp", json=listing, headers={**NARROW, **accept, **session, **version}
        )
        own = await http.post(
            f"{setup.url}/mcp", json=listing, headers={**OPS, **accept, **session, **version}
        )
    assert opened.status_code == 200
    assert other.status_code == 404  # as if the session did not exist
    assert own.status_code == 200


async def test_a_foreign_host_or_origin_and_an_oversized_body_are_refused(setup: Setup) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx.AsyncClient() as http:
        host = await http.post(
            f"{setup.url}/mcp", json=body, headers={**OPS, **accept, "Host": "evil.example"}
        )
        origin = await http.post(
            f"{setup.url}/mcp",
            json=body,
            headers={**OPS, **accept, "Origin": "http://evil.example"},
        )
        big = await http.post(
            f"{setup.url}/mcp",
            content=b'{"pad":"' + b"x" * (2 * 1024 * 1024) + b'"}',
            headers={**OPS, **accept},
        )
    assert host.status_code == 421
    assert origin.status_code == 403
    assert big.status_code == 413  # limits.max_body, 1 MiB by default


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


async def follow_an_edit(setup: Setup, client: Client, next_change: Any) -> None:
    """Add a partner to agents.yaml, then take it out again, each time waiting (on the
    client's list-changed signal, `next_change`) until the tool list shows it."""
    extra = AgentEntry(name="extra", url=setup.partners["quick"].url)
    assert "a2a_extra" not in await tool_names(client)
    try:
        write_agents(setup.agents, [*setup.entries, extra])
        with anyio.fail_after(15):
            # Cards read for the first listing may be announced too: wait for the edit.
            while "a2a_extra" not in await tool_names(client):
                await next_change()
    finally:
        write_agents(setup.agents, setup.entries)
    with anyio.fail_after(15):
        while "a2a_extra" in await tool_names(client):
            await next_change()


async def test_the_tool_list_follows_an_agents_yaml_edit(setup: Setup) -> None:
    async with connect(setup.url, OPS) as client, client.listen(tools_list_changed=True) as sub:
        events = aiter(sub)
        await follow_an_edit(setup, client, lambda: anext(events))


async def test_clients_of_earlier_revisions_are_sent_list_changed_notifications(
    setup: Setup,
) -> None:
    send, receive = anyio.create_memory_object_stream[None](10)

    async def watch(message: Any) -> None:
        if isinstance(message, mcp.ToolListChangedNotification):
            send.send_nowait(None)

    async with connect(setup.url, OPS, mode="legacy", message_handler=watch) as client:
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed
        await follow_an_edit(setup, client, receive.receive)


@asynccontextmanager
async def stdio_client(setup: Setup, **options: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "hub", "mcp", "--config", str(setup.config)),
            *("--agents", str(setup.agents), "--store", "memory"),
        ],
        env={"E2E_MCP_OPS": OPS_KEY, "E2E_MCP_NARROW": NARROW_TOKEN, "PYTHONPATH": "."},
        cwd=str(ROOT),
    )
    async with Client(params, **options) as client:
        yield client


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a2a_hub_mcp_serves_the_same_tools_on_stdio(setup: Setup, mode: str) -> None:
    send, receive = anyio.create_memory_object_stream[None](10)

    async def watch(message: Any) -> None:
        if isinstance(message, mcp.ToolListChangedNotification):
            send.send_nowait(None)

    options: dict[str, Any] = {"mode": mode, "elicitation_callback": answer_blue}
    async with stdio_client(setup, message_handler=watch, **options) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == PARTNER_TOOLS | {"skill_echo", "delegate", "swarm"}
        quick = await client.call_tool("a2a_quick", {"message": "capital?"})
        asked = await client.call_tool("a2a_asker", {"message": "paint it"})
        failed = await client.call_tool("a2a_failing", {"message": "fail"})
        if mode == "legacy":
            await follow_an_edit(setup, client, receive.receive)
        else:
            async with client.listen(tools_list_changed=True) as sub:
                events = aiter(sub)
                await follow_an_edit(setup, client, lambda: anext(events))
    assert text_of(quick) == "Paris"
    assert text_of(asked) == "you said: blue"
    assert failed.is_error
    assert FAILURE in text_of(failed)


async def test_a2a_hub_mcp_started_in_another_folder_serves_every_partner_quietly(
    setup: Setup, tmp_path: Path
) -> None:
    """As a desktop client starts it: in a folder of the client's choosing, with no
    config/hub.yaml there, given only agents.yaml."""
    elsewhere = tmp_path / "client-folder"
    elsewhere.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hub", "mcp", "--agents", str(setup.agents)],
        cwd=str(elsewhere),
    )
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w", encoding="utf-8") as stderr, anyio.fail_after(120):
        async with Client(mcp_stdio.stdio_client(params, errlog=stderr)) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            quick = await client.call_tool("a2a_quick", {"message": "capital?"})
            routed = await client.call_tool("delegate", {"message": "capital?", "agent": "quick"})
    assert tools == PARTNER_TOOLS | {"skill_echo", "delegate", "swarm"}
    assert text_of(quick) == "Paris"
    assert text_of(routed) == "Paris"
    # Its tasks were kept in memory: nothing written where the client started it.
    assert list(elsewhere.iterdir()) == []
    # stderr is the client's view of the server's complaints: no INFO line on every start.
    assert errlog.read_text(encoding="utf-8") == ""


def _stdio_configurations() -> list[dict[str, Any]]:
    """The stdio servers the client configurations of docs/mcp.md start."""
    text = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"^```json\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL):
        document = json.loads(block)
        servers = document.get("mcpServers") or document.get("servers") or {}
        found += [server for server in servers.values() if "command" in server]
    return found


@pytest.mark.parametrize("server", _stdio_configurations(), ids=["claude-desktop", "vs-code"])
async def test_the_client_configurations_of_the_docs_work_from_another_folder(
    setup: Setup, tmp_path: Path, server: dict[str, Any]
) -> None:
    project = "/path/to/project"
    # The console script installed beside this interpreter, as `make install` puts it in
    # the project's .venv/bin.
    command = server["command"].replace(f"{project}/.venv/bin", str(Path(sys.executable).parent))
    agents = f"{project}/agents.yaml"
    args = [str(setup.agents) if arg == agents else arg for arg in server["args"]]
    assert all(project not in arg for arg in args), args
    elsewhere = tmp_path / "client-folder"
    elsewhere.mkdir()
    params = StdioServerParameters(command=command, args=args, cwd=str(elsewhere))
    with anyio.fail_after(120):
        async with Client(params) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            quick = await client.call_tool("a2a_quick", {"message": "capital?"})
    assert tools == PARTNER_TOOLS | {"skill_echo", "delegate", "swarm"}
    assert text_of(quick) == "Paris"
