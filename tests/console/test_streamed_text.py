"""A task whose answer was streamed in chunks, on the console's task page: one text, whether
the hub's own skill streamed it or an a2a-sdk partner keeps it one part per chunk."""

from __future__ import annotations

import re

import anyio
import pytest

from hub.protocol import user_message
from hub.registry import AgentEntry, Registry
from hub.testing import serve_on_loopback
from tests.console.test_pages import console, token
from tests.streamed_text import CHUNKS, WHOLE, sdk_tokens, tokens

pytestmark = pytest.mark.anyio


def texts(page: str) -> list[str]:
    """The text parts the page shows."""
    return re.findall(r'<div class="text">([^<]*)</div>', page)


async def test_the_task_page_shows_a_skills_chunks_as_one_text() -> None:
    async with console(skills={"tokens": tokens}) as client:
        page = await client.get("/ui/chat")
        sent = await client.post(
            "/ui/chat", data={"_csrf": token(page.text), "target": "skill:tokens", "text": "go"}
        )
        path = sent.headers["location"]
        await client.get(f"{path}/events")  # ends when the task does
        task_page = await client.get(path)
    assert 'id="task-state">completed<' in task_page.text
    assert texts(task_page.text) == ["go", WHOLE]


async def test_a_partners_task_page_shows_its_chunks_as_one_text() -> None:
    async with serve_on_loopback(sdk_tokens()) as partner_url:
        registry = Registry([AgentEntry(name="tokens", url=partner_url)])
        async with console(partners=registry) as client:
            page = await client.get("/ui/chat")
            sent = await client.post(
                "/ui/chat", data={"_csrf": token(page.text), "target": "agent:tokens", "text": "go"}
            )
            path = sent.headers["location"]
            await client.get(f"{path}/events")  # ends when the partner's task does
            task_page = await client.get(path)
    assert 'id="task-state">completed<' in task_page.text
    assert texts(task_page.text) == ["go", WHOLE]


async def test_a_partners_task_kept_one_part_per_chunk_shows_as_one_text() -> None:
    # This partner does not stream: it is sent the message, and answers with its stored task.
    async with serve_on_loopback(sdk_tokens(streaming=False)) as partner_url:
        registry = Registry([AgentEntry(name="tokens", url=partner_url)])
        async with console(partners=registry) as client:
            message = user_message("go").model_dump(mode="json", by_alias=True, exclude_none=True)
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": message},
            }
            with anyio.fail_after(15):
                sent = await client.post(
                    "/agents/tokens/", json=body, headers={"A2A-Version": "1.0"}
                )
            task = sent.json()["result"]["task"]
            assert len(task["artifacts"][0]["parts"]) == len(CHUNKS)
            task_page = await client.get(f"/ui/agents/tokens/tasks/{task['id']}")
    assert 'id="task-state">completed<' in task_page.text
    assert texts(task_page.text) == ["go", WHOLE]
