"""A skill that streams its answer in appended text chunks: each chunk is its own event on the
stream, as sent, and the task keeps the chunks joined into one text part."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
from litestar import Litestar

from hub.app import create_app
from hub.client import A2AClient, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.protocol import Artifact, Part, Task, TaskArtifactUpdateEvent, TaskState
from hub.store import SqliteTaskStore
from hub.testing import serve_on_loopback
from tests.streamed_text import REPEATS, WHOLE, hub_tokens, tokens

pytestmark = pytest.mark.anyio


async def _stream(url: str, text: str) -> tuple[list[TaskArtifactUpdateEvent], Task]:
    """The artifact updates of one streamed message, and the task GetTask reads after."""
    async with httpx.AsyncClient() as http:
        client = await A2AClient.from_url(url, http=http)
        with anyio.fail_after(15):
            async with client.stream(user_message(text)) as events:
                seen = [event async for event in events]
            first = seen[0].task
            assert first is not None
            stored = await client.get_task(first.id)
    return [event.artifact_update for event in seen if event.artifact_update], stored


def _chunk(chunk: TaskArtifactUpdateEvent) -> tuple[bool, bool, list[str | None]]:
    return chunk.append, chunk.last_chunk, [part.text for part in chunk.artifact.parts]


async def test_chunks_stream_as_sent_and_the_task_keeps_them_as_one_text() -> None:
    async with serve_on_loopback(hub_tokens) as url:
        chunks, stored = await _stream(url, "go")

    assert [_chunk(chunk) for chunk in chunks] == [
        (False, False, ["Hel"]),
        (True, False, ["lo"]),
        (True, False, [", wor"]),
        (True, True, ["ld!"]),
    ]
    assert stored.status.state is TaskState.COMPLETED
    assert stored.artifacts == [
        Artifact(
            artifact_id=chunks[0].artifact.artifact_id, name="response", parts=[Part(text=WHOLE)]
        )
    ]


async def test_repeated_chunks_each_reach_the_caller_and_the_task() -> None:
    async with serve_on_loopback(hub_tokens) as url:
        chunks, stored = await _stream(url, "repeat")

    assert [text for chunk in chunks for text in _chunk(chunk)[2]] == list(REPEATS)
    assert stored.artifacts is not None
    assert stored.artifacts[0].parts == [Part(text="haha\n\nha")]


async def test_a_blocking_send_answers_with_the_joined_text_and_sqlite_keeps_it(
    tmp_path: Path,
) -> None:
    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="sqlite", path=str(tmp_path / "hub.db")),
            default_skill="tokens",
        )
        store = SqliteTaskStore(tmp_path / "hub.db")
        return create_app(settings, store=store, skills={"tokens": tokens})

    async with serve_on_loopback(build) as url, httpx.AsyncClient() as http:
        client = await A2AClient.from_url(url, http=http)
        with anyio.fail_after(15):
            answer = await client.send(user_message("go"))
    assert isinstance(answer, Task)
    assert answer.artifacts is not None
    assert [artifact.parts for artifact in answer.artifacts] == [[Part(text=WHOLE)]]

    # Read back from the file by a hub started again.
    async with serve_on_loopback(build) as url, httpx.AsyncClient() as http:
        client = await A2AClient.from_url(url, http=http)
        with anyio.fail_after(15):
            stored = await client.get_task(answer.id)
    assert stored.artifacts == answer.artifacts
