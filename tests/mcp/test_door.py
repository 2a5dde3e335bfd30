"""The `/mcp` door's own limits, on a hub served on loopback: an open MCP request counts as
one of the caller's open streams."""

from __future__ import annotations

import logging
import sys

import httpx
import pytest
from asgi_lifespan import LifespanManager
from mcp import Client

from hub.app import create_app
from hub.config import LimitSettings, ServerSettings, Settings, SkillRef, StoreSettings
from hub.skills import load_skills
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback

pytestmark = pytest.mark.anyio


def one_stream_hub(url: str) -> object:
    settings = Settings(
        server=ServerSettings(public_url=url),
        store=StoreSettings(kind="memory"),
        limits=LimitSettings(max_streams_per_caller=1),
    )
    skills = load_skills([SkillRef(builtin="echo")])
    return create_app(settings, store=MemoryTaskStore(), skills=skills)


async def test_an_open_listen_stream_is_one_of_the_callers_streams() -> None:
    # (That a finished request gives its stream back, tests/e2e/test_mcp_processes.py shows:
    # its hub allows 4 streams per caller, and its tests make many more requests than that.)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    async with (
        serve_on_loopback(one_stream_hub) as url,
        httpx.AsyncClient() as http,
        Client(f"{url}/mcp") as client,
        client.listen(tools_list_changed=True),
    ):
        refused = await http.post(f"{url}/mcp", json=body, headers=headers)
    assert refused.status_code == 429
    assert refused.json()["error"]["details"][0]["reason"] == "LIMIT_EXCEEDED"


async def list_tools_in_process(
    base_url: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    """POST a `tools/list` to `/mcp` of an echo hub served in process."""
    settings = Settings(store=StoreSettings(kind="memory"))
    app = create_app(
        settings, store=MemoryTaskStore(), skills=load_skills([SkillRef(builtin="echo")])
    )
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=base_url) as http,
    ):
        return await http.post("/mcp", json=body, headers=headers)


async def test_without_the_mcp_extra_the_door_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What an environment without the SDK looks like to the import system.
    monkeypatch.setitem(sys.modules, "mcp", None)
    refused = await list_tools_in_process("http://hub")
    assert refused.status_code == 400
    assert "pip install 'a2a-hub[mcp]'" in refused.json()["error"]["message"]
    assert refused.json()["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"


async def test_the_access_line_of_an_mcp_request_names_mcp(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="hub.access")
    await list_tools_in_process("http://127.0.0.1", headers={"Accept": "application/json"})
    paths = [record.access["path"] for record in caplog.records if hasattr(record, "access")]
    assert paths == ["/mcp"]
