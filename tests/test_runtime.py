"""`Hub.from_config`: the hub in-process, built from a settings file and an agents.yaml, with a
real partner on a loopback socket and module skills from `tests.runtime_skills`."""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hub.config import FederationSettings, Settings
from hub.errors import ConfigError, InvalidParamsError, UnknownAgentError
from hub.mcp.catalog import DELEGATE_TOOL, SWARM_TOOL
from hub.registry import AgentEntry, Registry
from hub.runtime import Hub
from hub.skills.delegate import DelegateArguments
from hub.skills.swarm import SwarmArguments
from hub.store import PostgresTaskStore
from hub.swarm import STRATEGIES
from hub.testing import serve_on_loopback
from hub.tools import ToolResult, input_schema
from hub.tools.arguments import arguments_schema
from tests.client.partners import sdk_jsonrpc
from tests.runtime_skills import PARTNER
from tests.tools.agents import HeaderRecorder

pytestmark = pytest.mark.anyio

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)

SECRET = "zq-runtime-secret-51b0"
TOOL_NAME = re.compile(r"^[a-z0-9_]{1,64}$")
SKILLS = """\
skills:
  - builtin: echo
  - module: tests.runtime_skills:shout
  - module: tests.runtime_skills:relay
  - module: tests.runtime_skills:interview
default_skill: echo
"""


@pytest.fixture
async def partner() -> AsyncIterator[tuple[str, HeaderRecorder]]:
    """The a2a-sdk echo partner (JSON-RPC 1.0) on a loopback socket, recording headers."""
    recorders: list[HeaderRecorder] = []

    def build(url: str) -> HeaderRecorder:
        recorders.append(HeaderRecorder(sdk_jsonrpc(url)))
        return recorders[0]

    async with serve_on_loopback(build) as url:
        yield url, recorders[0]


def write_files(folder: Path, partner_url: str, *, auth: str = "") -> Path:
    """An agents.yaml naming the partner, and settings naming it and the module skills."""
    agents = folder / "partners.yaml"
    agents.write_text(
        f"version: 1\nagents:\n  - name: {PARTNER}\n    url: {partner_url}\n{auth}",
        encoding="utf-8",
    )
    settings = folder / "hub.yaml"
    settings.write_text(f"store: {{kind: memory}}\nagents: {agents}\n{SKILLS}", encoding="utf-8")
    return settings


async def test_the_toolbox_holds_the_partner_and_every_local_skill(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    settings = write_files(tmp_path, partner[0])

    async with Hub.from_config(settings, env={}) as hub:
        assert hub.registry.names() == (PARTNER,)
        assert list(hub.partners) == [PARTNER]
        assert sorted(hub.tools) == [
            f"a2a_{PARTNER}",
            "skill_echo",
            "skill_interview",
            "skill_relay",
            "skill_shout",
        ]
        assert len(hub.tools) == 5


async def test_a_partner_tool_and_a_skill_tool_answer_with_results_of_one_shape(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    settings = write_files(tmp_path, partner[0])

    async with Hub.from_config(settings, env={}) as hub:
        with anyio.fail_after(10):
            remote = await hub.tools[f"a2a_{PARTNER}"].call(message="hello")
            local = await hub.tools["skill_shout"].call(message="hello")

    assert isinstance(remote, ToolResult)
    assert isinstance(local, ToolResult)
    assert remote.to_dict().keys() == local.to_dict().keys()
    assert (remote.tool, remote.agent, remote.state, remote.text) == (
        f"a2a_{PARTNER}",
        PARTNER,
        "completed",
        "hello",
    )
    assert (local.tool, local.agent, local.state, local.text) == (
        "skill_shout",
        "shout",
        "completed",
        "HELLO",
    )
    for result in (remote, local):
        assert result.ok
        assert not result.needs_input
        assert result.task_id
        assert result.context_id
        assert len(result.artifacts) == 1
    assert remote.artifacts[0].text == "hello"
    assert local.artifacts[0].text == "HELLO"


def _assert_schema(schema: dict[str, Any], skills: list[str]) -> None:
    assert schema["type"] == "object"
    assert schema["required"] == ["message"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["message"]["type"] == "string"
    assert schema["properties"]["skill"]["enum"] == skills
    assert set(schema["properties"]) == {
        "message",
        "context_id",
        "task_id",
        "skill",
        "data",
        "files",
    }


async def test_every_tool_exports_valid_openai_anthropic_and_mcp_shapes(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    settings = write_files(tmp_path, partner[0])
    skills = {
        f"a2a_{PARTNER}": ["echo"],
        "skill_echo": ["echo"],
        "skill_shout": ["shout"],
        "skill_relay": ["relay"],
        "skill_interview": ["interview"],
    }

    async with Hub.from_config(settings, env={}) as hub:
        with anyio.fail_after(10):
            await hub.partners.card(PARTNER)  # the partner's tool is described by its card
        tools = dict(hub.tools)

    assert set(tools) == set(skills)
    for name, tool in tools.items():
        assert TOOL_NAME.match(tool.name), tool.name
        assert tool.name == name
        openai, anthropic, mcp = tool.to_openai(), tool.to_anthropic(), tool.to_mcp()
        json.dumps([openai, anthropic, mcp])  # plain JSON, as the APIs take them

        assert openai.keys() == {"type", "function"}
        assert openai["type"] == "function"
        function = openai["function"]
        assert function.keys() == {"name", "description", "parameters"}
        assert anthropic.keys() == {"name", "description", "input_schema"}
        assert mcp.keys() == {"name", "description", "inputSchema"}

        assert function["name"] == anthropic["name"] == mcp["name"] == name
        description = function["description"]
        assert isinstance(description, str)
        assert description
        assert anthropic["description"] == mcp["description"] == description
        assert function["parameters"] == anthropic["input_schema"] == mcp["inputSchema"]
        _assert_schema(function["parameters"], skills[name])
    assert "echoes" in tools[f"a2a_{PARTNER}"].to_openai()["function"]["description"]


async def test_a_local_skill_calls_the_partner_through_ctx_agents(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    settings = write_files(tmp_path, partner[0])

    async with Hub.from_config(settings, env={}) as hub:
        with anyio.fail_after(10):
            result = await hub.tools["skill_relay"].call(message="relay me")

    assert result.state == "completed"
    assert result.text == f"{PARTNER} completed: relay me"
    # The card was read and the message sent: the answer came from the partner over the wire.
    assert len(partner[1].headers) >= 2


async def test_a_local_skill_that_asks_is_answered_by_calling_again_with_its_task_id(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    settings = write_files(tmp_path, partner[0])

    async with Hub.from_config(settings, env={}) as hub:
        tool = hub.tools["skill_interview"]
        with anyio.fail_after(10):
            asked = await tool.call(message="hi")
            answered = await tool.call(message="Ada", task_id=asked.task_id)

    assert asked.state == "input-required"
    assert asked.needs_input
    assert asked.message == "What is your name?"
    assert answered.state == "completed"
    assert answered.text == "Hello, Ada!"
    assert (answered.task_id, answered.context_id) == (asked.task_id, asked.context_id)


async def test_secrets_come_from_the_env_given_and_reach_the_partner_as_a_bearer_token(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    url, recorder = partner
    settings = write_files(tmp_path, url, auth='    auth: {bearer: "${PARTNER_TOKEN}"}\n')

    async with Hub.from_config(settings, env={"PARTNER_TOKEN": SECRET}) as hub:
        assert SECRET not in repr(hub.registry)
        with anyio.fail_after(10):
            result = await hub.tools[f"a2a_{PARTNER}"].call(message="hello")

    assert result.ok
    assert recorder.headers
    assert {h.get("authorization") for h in recorder.headers} == {f"Bearer {SECRET}"}


async def test_the_agents_argument_replaces_the_file_the_settings_name(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    settings = write_files(tmp_path, partner[0])
    other = tmp_path / "other.yaml"
    other.write_text(f"version: 1\nagents:\n  - name: other\n    url: {partner[0]}\n")

    async with Hub.from_config(settings, agents=other, env={}) as hub:
        assert hub.registry.names() == ("other",)
        assert "a2a_other" in hub.tools
        assert f"a2a_{PARTNER}" not in hub.tools


async def test_an_edit_of_agents_yaml_shows_in_the_tools_while_the_hub_is_open(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    url = partner[0]
    settings = write_files(tmp_path, url)

    async with Hub.from_config(settings, env={}) as hub:
        assert f"a2a_{PARTNER}" in hub.tools
        (tmp_path / "partners.yaml").write_text(
            f"version: 1\nagents:\n  - name: second\n    url: {url}\n", encoding="utf-8"
        )
        with anyio.fail_after(30):
            # The hub offers no reload notification to wait on: look until the tool shows.
            while "a2a_second" not in hub.tools:  # noqa: ASYNC110
                await anyio.sleep(0.05)
            result = await hub.tools["a2a_second"].call(message="after the edit")

        assert hub.registry.names() == ("second",)
        assert f"a2a_{PARTNER}" not in hub.tools
        assert result.text == "after the edit"


async def test_partners_whose_names_differ_only_by_dash_and_underscore_each_get_a_tool(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    url = partner[0]
    agents = tmp_path / "agents.yaml"
    agents.write_text(
        "version: 1\nagents:\n"
        f"  - name: legacy-translator\n    url: {url}\n"
        f"  - name: legacy_translator\n    url: {url}\n",
        encoding="utf-8",
    )
    settings = tmp_path / "hub.yaml"
    settings.write_text(f"store: {{kind: memory}}\nagents: {agents}\n", encoding="utf-8")

    # Both slug to `a2a_legacy_translator`: the hub must either refuse the file, naming both,
    # or give each partner a tool of its own; it must not hide one of them.
    hub, error = _from_config(settings)
    if error is not None:
        assert "legacy-translator" in str(error)
        assert "legacy_translator" in str(error)
        return
    assert hub is not None
    async with hub:
        names = list(hub.tools)
        assert len(names) == len(set(names)) == len(hub.tools)
        reached = {getattr(hub.tools[name], "agent", None) for name in names}
        assert {"legacy-translator", "legacy_translator"} <= reached


def _from_config(settings: Path) -> tuple[Hub | None, ConfigError | None]:
    try:
        return Hub.from_config(settings, env={}), None
    except ConfigError as error:
        return None, error


async def test_an_error_inside_the_hub_block_reaches_the_caller_as_itself(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    settings = write_files(tmp_path, partner[0])

    async def ask_for_an_unknown_card() -> None:
        async with Hub.from_config(settings, env={}) as hub:
            with anyio.fail_after(10):
                await hub.partners.card("nosuch")

    # A caller's `except UnknownAgentError:` around the block must catch it, not an
    # ExceptionGroup wrapping it.
    with pytest.raises(UnknownAgentError):
        await ask_for_an_unknown_card()


async def test_an_agents_argument_that_does_not_exist_is_a_config_error_naming_it(
    tmp_path: Path,
) -> None:
    settings = tmp_path / "hub.yaml"
    settings.write_text("store: {kind: memory}\n", encoding="utf-8")
    missing = tmp_path / "nowhere.yaml"

    with pytest.raises(ConfigError) as raised:
        Hub.from_config(settings, agents=missing, env={})

    assert str(missing) in str(raised.value)


async def test_an_agents_file_named_in_the_settings_that_does_not_exist_is_a_config_error(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "nowhere.yaml"
    settings = tmp_path / "hub.yaml"
    settings.write_text(f"store: {{kind: memory}}\nagents: {missing}\n", encoding="utf-8")

    with pytest.raises(ConfigError) as raised:
        Hub.from_config(settings, env={})

    assert str(missing) in str(raised.value)


async def test_a_missing_default_agents_yaml_gives_an_empty_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no agents.yaml and no config/hub.yaml here
    settings = tmp_path / "hub.yaml"
    settings.write_text("store: {kind: memory}\n", encoding="utf-8")

    async with Hub.from_config(settings, env={}) as hub:
        assert len(hub.registry) == 0
        assert list(hub.tools) == ["skill_echo"]
        with anyio.fail_after(10):
            result = await hub.tools["skill_echo"].call(message="alone")

    assert result.text == "alone"


async def test_without_any_file_the_hub_has_the_default_settings_and_no_partners(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    async with Hub.from_config(env={}) as hub:
        assert hub.settings.default_skill == "echo"
        assert len(hub.registry) == 0
        assert list(hub.tools) == ["skill_echo"]


async def test_hubs_on_one_shared_store_serve_the_partners_any_of_them_adds_at_run_time(
    postgres_dsn: str, echoer: str
) -> None:
    settings = Settings(federation=FederationSettings(allow_cidrs=LOOPBACK))

    def opened() -> Hub:
        return Hub(settings, registry=Registry(), store=PostgresTaskStore(postgres_dsn))

    async with opened() as first, opened() as second:
        tools_changed = anyio.Event()
        second.partners.subscribe(tools_changed.set)
        await first.partners.add(AgentEntry(name="newbie", url=echoer), origin="spawn_agent by ops")
        with anyio.fail_after(10):
            await tools_changed.wait()
            result = await second.tools["a2a_newbie"].call(message="hello newbie")

        assert second.partners.names() == ("newbie",)
        assert second.partners.origin("newbie") == "spawn_agent by ops"
        assert (result.state, result.text) == ("completed", "hello newbie")

    async with opened() as later:
        assert later.partners.names() == ("newbie",)
        assert "a2a_newbie" in later.tools


ROUTING_SKILLS = """\
skills:
  - builtin: echo
  - builtin: delegate
  - builtin: swarm
default_skill: echo
"""


def write_routing_hub(folder: Path, partners: dict[str, str]) -> Path:
    """Settings serving echo, delegate and swarm, and an agents.yaml naming `partners`."""
    agents = folder / "partners.yaml"
    listed = "".join(f"  - name: {name}\n    url: {url}\n" for name, url in partners.items())
    agents.write_text(f"version: 1\nagents:\n{listed}", encoding="utf-8")
    settings = folder / "hub.yaml"
    settings.write_text(
        f"store: {{kind: memory}}\nagents: {agents}\n{ROUTING_SKILLS}", encoding="utf-8"
    )
    return settings


async def test_partner_tools_are_described_by_their_cards_as_soon_as_the_hub_is_open(
    tmp_path: Path, partner: tuple[str, HeaderRecorder], refusing_port: int
) -> None:
    settings = write_routing_hub(
        tmp_path, {PARTNER: partner[0], "gone": f"http://127.0.0.1:{refusing_port}"}
    )

    with anyio.fail_after(30):
        async with Hub.from_config(settings, env={}) as hub:
            # No card is read by the test: entering the hub read them.
            live = hub.tools[f"a2a_{PARTNER}"]
            dead = hub.tools["a2a_gone"]
            shapes = {
                name: (tool.to_openai(), tool.to_anthropic(), tool.to_mcp())
                for name, tool in hub.tools.items()
            }

    schema = input_schema(["echo"])
    description = live.definition.description
    assert description == (
        f"Send a task to the partner agent '{PARTNER}': a2a-sdk partner for the client tests\n"
        "Skills:\n- echo: echoes"
    )
    assert shapes[f"a2a_{PARTNER}"] == (
        {
            "type": "function",
            "function": {
                "name": f"a2a_{PARTNER}",
                "description": description,
                "parameters": schema,
            },
        },
        {"name": f"a2a_{PARTNER}", "description": description, "input_schema": schema},
        {"name": f"a2a_{PARTNER}", "description": description, "inputSchema": schema},
    )
    assert dead.definition.description == (
        "Send a task to the partner agent 'gone'. It is unreachable at the moment (when last "
        "tried: agent 'gone': its agent card could not be read (unreachable)); a call tries "
        "again."
    )
    assert dead.to_mcp()["inputSchema"] == input_schema()
    assert "not been read" not in json.dumps(shapes)
    assert "could not be read yet" not in json.dumps(shapes)


async def test_skill_delegate_and_skill_swarm_take_the_options_their_descriptions_name(
    tmp_path: Path, partner: tuple[str, HeaderRecorder]
) -> None:
    settings = write_routing_hub(tmp_path, {PARTNER: partner[0]})

    with anyio.fail_after(30):
        async with Hub.from_config(settings, env={}) as hub:
            delegated = await hub.tools["skill_delegate"].call(
                message="hello", agent=PARTNER, tags=["echo"], skill="echo"
            )
            swarmed = await hub.tools["skill_swarm"].call(
                message="hello", strategy="race", agents=[PARTNER], concurrency=1
            )
            with pytest.raises(InvalidParamsError) as refused:
                await hub.tools["skill_swarm"].call(message="hello", strategy="majority")
            tools = {name: hub.tools[name] for name in ("skill_delegate", "skill_swarm")}

    assert (delegated.state, delegated.text) == ("completed", "hello")
    assert swarmed.state == "completed"
    assert swarmed.text == "hello"
    assert refused.value.violations[0][0] == "strategy"
    # One argument model per routing skill: the hub's tool and the MCP tool share its schema.
    assert tools["skill_delegate"].to_openai()["function"]["parameters"] == (
        DELEGATE_TOOL.input_schema
    )
    assert tools["skill_swarm"].to_anthropic()["input_schema"] == SWARM_TOOL.input_schema
    assert DELEGATE_TOOL.input_schema == arguments_schema(DelegateArguments)
    assert SWARM_TOOL.input_schema == arguments_schema(SwarmArguments)
    swarm_options = SWARM_TOOL.input_schema["properties"]
    assert swarm_options["strategy"]["enum"] == list(STRATEGIES)
    assert {"agents", "tags", "quorum", "items", "deadline"} <= set(swarm_options)
    assert set(DELEGATE_TOOL.input_schema["properties"]) == {
        "message",
        "context_id",
        "task_id",
        "skill",
        "data",
        "files",
        "agent",
        "tags",
    }
