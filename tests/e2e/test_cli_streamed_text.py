"""An answer streamed in chunks, as `a2a-hub` prints it: `send`, `tasks get` and `call` show
one text, `send --stream` writes the chunks one after the other, with nothing between them.
A real CLI process against a hub and an a2a-sdk partner served by this test."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hub.app import create_app
from hub.config import ServerSettings, Settings, StoreSettings
from hub.skills import SkillContext, skill
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.streamed_text import WHOLE, hub_tokens, sdk_tokens

from .test_cli_agents import ok, write_agents

pytestmark = pytest.mark.anyio


@pytest.fixture
async def hub_url() -> AsyncIterator[str]:
    async with serve_on_loopback(hub_tokens) as url:
        yield url


async def test_send_and_tasks_get_print_the_chunks_as_one_text(
    tmp_path: Path, hub_url: str
) -> None:
    sent = (await ok("send", hub_url, "go", cwd=tmp_path)).splitlines()
    assert sent[1:] == [f"  artifact response: {WHOLE}"]

    found = re.match(r"task (\S+) ", sent[0])
    assert found is not None
    got = await ok("tasks", "get", found.group(1), "--url", hub_url, cwd=tmp_path)
    assert got.splitlines()[1:] == [f"  artifact response: {WHOLE}"]


async def test_send_stream_writes_chunks_one_after_the_other(tmp_path: Path, hub_url: str) -> None:
    out = (await ok("send", "--stream", hub_url, "repeat", cwd=tmp_path)).splitlines()
    assert out[1:] == ["[status] working", "haha", "", "ha", "[status] completed"]


async def test_call_prints_the_chunks_as_one_text_from_the_hub_and_from_the_sdk(
    tmp_path: Path, hub_url: str
) -> None:
    async with serve_on_loopback(sdk_tokens(streaming=False)) as sdk_url:
        write_agents(
            tmp_path,
            "version: 1\nagents:\n"
            f"  - name: hub\n    url: {hub_url}\n"
            f"  - name: sdk\n    url: {sdk_url}\n",
        )
        from_hub = (await ok("call", "hub", "go", cwd=tmp_path)).splitlines()
        streamed = await ok("call", "--stream", "hub", "go", cwd=tmp_path)
        from_sdk = (await ok("call", "sdk", "go", cwd=tmp_path)).splitlines()

    assert from_hub[1:] == [f"  response: {WHOLE}"]
    assert f"\n{WHOLE}\n" in streamed
    assert from_sdk[1:] == [f"  answer: {WHOLE}"]


@skill(id="resent", description="streams two chunks, then sends the whole text again")
async def resent(ctx: SkillContext) -> None:
    # How a process skill ends its answer: the last chunk is the whole text once more.
    answer = await ctx.artifact("first line\n", name="answer", last_chunk=False)
    await ctx.artifact("second", name="answer", artifact_id=answer, append=True, last_chunk=False)
    await ctx.artifact("first line\nsecond line\n", name="answer", artifact_id=answer)


def resending_hub(url: str) -> Any:
    settings = Settings(
        server=ServerSettings(public_url=url),
        store=StoreSettings(kind="memory"),
        default_skill="resent",
    )
    return create_app(settings, store=MemoryTaskStore(), skills={"resent": resent})


async def test_a_last_chunk_that_repeats_the_text_adds_only_what_is_new(tmp_path: Path) -> None:
    async with serve_on_loopback(resending_hub) as url:
        out = (await ok("send", "--stream", url, "go", cwd=tmp_path)).splitlines()
    assert out[1:] == ["[status] working", "first line", "second line", "[status] completed"]
