"""An answer streamed in chunks, through the `/mcp` door to the official MCP client: a local
skill's and a2a-sdk partners' (one that streams, one answering with its stored task) come
back as one text content."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as mcp
import pytest
from litestar import Litestar
from mcp import Client

from hub.app import create_app
from hub.config import ServerSettings, Settings, StoreSettings
from hub.partners import Partners
from hub.registry import load_registry
from hub.skills.delegate import delegate
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.streamed_text import WHOLE, sdk_tokens, tokens

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "tool", ["skill_tokens", "a2a_streams", "a2a_stored"], ids=["skill", "streams", "stored"]
)
async def test_chunks_come_back_as_one_text_content(tmp_path: Path, tool: str) -> None:
    async with (
        serve_on_loopback(sdk_tokens()) as streams,
        serve_on_loopback(sdk_tokens(streaming=False)) as stored,
    ):
        path = tmp_path / "agents.yaml"
        path.write_text(
            "version: 1\nagents:\n"
            f"  - name: streams\n    url: {streams}\n"
            f"  - name: stored\n    url: {stored}\n"
        )

        def build(url: str) -> Litestar:
            settings = Settings(
                server=ServerSettings(public_url=url),
                store=StoreSettings(kind="memory"),
                default_skill="tokens",
            )
            return create_app(
                settings,
                store=MemoryTaskStore(),
                skills={"tokens": tokens, "delegate": delegate},
                partners=Partners(load_registry(path)),
            )

        async with serve_on_loopback(build) as url, Client(f"{url}/mcp") as client:
            with anyio.fail_after(30):
                result = await client.call_tool(tool, {"message": "go"})

    assert not result.is_error
    assert result.content == [mcp.TextContent(text=WHOLE)]
    assert result.structured_content is not None
    assert result.structured_content["text"] == WHOLE
