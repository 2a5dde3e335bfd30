"""`RemoteAgentTool` against real partners: the a2a-sdk 1.3 (1.0 JSON-RPC, 1.0 HTTP+JSON only,
0.3 JSON-RPC) and the hub, all giving one result shape."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from hub.errors import InvalidParamsError, UnknownAgentError
from hub.partners import Partners
from hub.tools import ToolResult
from tests.tools.agents import registry_file

pytestmark = pytest.mark.anyio


async def test_every_partner_answers_with_the_same_result_shape(
    partner_url: str, tmp_path: Path
) -> None:
    registry = registry_file(tmp_path / "agents.yaml", {"echoer": partner_url})

    async with Partners(registry) as partners:
        tool = partners["echoer"]
        with anyio.fail_after(10):
            result = await tool.call(message="hello")

    assert tool.name == "a2a_echoer"
    assert isinstance(result, ToolResult)
    assert (result.tool, result.agent, result.state, result.ok) == (
        "a2a_echoer",
        "echoer",
        "completed",
        True,
    )
    assert result.text == "hello"
    assert result.task_id
    assert result.context_id
    assert not result.needs_input


async def test_a_follow_up_call_continues_the_partners_context(
    partner_url: str, tmp_path: Path
) -> None:
    registry = registry_file(tmp_path / "agents.yaml", {"echoer": partner_url})

    async with Partners(registry) as partners:
        first = await partners["echoer"].call(message="one")
        second = await partners["echoer"].call(message="two", context_id=first.context_id)

    assert second.context_id == first.context_id
    assert second.task_id != first.task_id
    assert second.text == "two"


async def test_the_tool_is_described_by_the_partners_card(partner_url: str, tmp_path: Path) -> None:
    registry = registry_file(tmp_path / "agents.yaml", {"echoer": partner_url})

    async with Partners(registry) as partners:
        await partners.card("echoer")
        tool = partners["echoer"]

    schema = tool.definition.input_schema
    assert schema["required"] == ["message"]
    assert "echo" in schema["properties"]["skill"]["enum"]
    assert "partner agent 'echoer'" in tool.definition.description
    assert tool.to_openai()["function"]["parameters"] == schema
    assert tool.to_anthropic()["input_schema"] == schema
    assert tool.to_mcp()["inputSchema"] == schema


async def test_stream_yields_the_partners_events_up_to_the_final_state(
    partner_url: str, tmp_path: Path
) -> None:
    registry = registry_file(tmp_path / "agents.yaml", {"echoer": partner_url})

    async with Partners(registry) as partners:
        with anyio.fail_after(10):
            async with partners["echoer"].stream(message="hello") as events:
                seen = [event async for event in events]

    assert seen, "the stream yielded nothing"
    last = seen[-1]
    final = last.task.status if last.task else last.status_update.status  # type: ignore[union-attr]
    assert final.state.is_terminal


async def test_bad_arguments_are_refused_before_anything_is_sent(tmp_path: Path) -> None:
    registry = registry_file(tmp_path / "agents.yaml", {"nowhere": "http://127.0.0.1:9"})

    async with Partners(registry) as partners:
        tool = partners["nowhere"]
        with pytest.raises(InvalidParamsError, match="message"):
            await tool.call()
        with pytest.raises(InvalidParamsError, match="colour"):
            await tool.call(message="hi", colour="blue")
        with pytest.raises(InvalidParamsError, match="files"):
            await tool.call(message="hi", files=[{"bytes": "not base64!"}])


async def test_an_unknown_partner_names_the_known_ones(tmp_path: Path) -> None:
    registry = registry_file(
        tmp_path / "agents.yaml", {"research": "http://127.0.0.1:9", "writer": "http://127.0.0.1:9"}
    )

    async with Partners(registry) as partners:
        with pytest.raises(
            UnknownAgentError, match=r"did you mean 'research'.*|known: research, writer"
        ):
            partners["reserch"]
