"""`delegate` relays a partner's artifact chunks as the partner sent them: `append` and
`lastChunk` unchanged on the hub's stream, and the artifact assembled in the hub's task, its
text chunks joined into one text part."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types.a2a_pb2 import AgentSkill
from starlette.applications import Starlette

from hub.client import A2AClient, user_message
from hub.protocol import Artifact, Part, Task, TaskArtifactUpdateEvent, TaskState
from hub.registry import load_registry
from hub.skills.delegate import delegate
from hub.testing import serve_hub, serve_on_loopback
from tests.sdk_agents import open_task, sdk_agent
from tests.streamed_text import WHOLE, sdk_tokens

pytestmark = pytest.mark.anyio

CHUNKS = (("one ", False, False), ("two ", True, False), ("three", True, True))
"""(text, append, lastChunk) of each chunk the partner sends, in order."""


class ChunkingExecutor(AgentExecutor):
    """Answers with one artifact, `doc`, sent in the three chunks of `CHUNKS`."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater, _ = await open_task(context, event_queue)
        await updater.start_work()
        for text, append, last_chunk in CHUNKS:
            await updater.add_artifact(
                [new_text_part(text)],
                artifact_id="doc",
                name="doc",
                append=append,
                last_chunk=last_chunk,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def _chunker(url: str) -> Starlette:
    return sdk_agent(
        url,
        ChunkingExecutor(),
        name="chunker",
        description="sends its answer in chunks",
        skill=AgentSkill(id="chunks", name="Chunks", description="chunks", tags=["chunks"]),
    )


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[A2AClient]:
    async with serve_on_loopback(_chunker) as partner_url:
        path = tmp_path / "agents.yaml"
        path.write_text(f"version: 1\nagents:\n  - name: chunker\n    url: {partner_url}\n")

        served = serve_hub(skills=[delegate], partners=load_registry(path))
        async with served as running, httpx.AsyncClient() as http:
            yield await A2AClient.from_url(running.url, http=http)


async def test_artifact_chunks_are_relayed_with_the_partners_append_and_last_chunk(
    hub: A2AClient,
) -> None:
    chunks: list[TaskArtifactUpdateEvent] = []
    with anyio.fail_after(15):
        async with hub.stream(user_message("go"), metadata={"agent": "chunker"}) as events:
            async for event in events:
                if event.task is not None:
                    task_id, context_id = event.task.id, event.task.context_id
                if event.artifact_update is not None:
                    chunks.append(event.artifact_update)
        stored = await hub.get_task(task_id)

    def chunk(text: str, append: bool, last_chunk: bool) -> TaskArtifactUpdateEvent:
        return TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id=context_id,
            artifact=Artifact(
                artifact_id="chunker-doc",
                name="doc",
                parts=[Part(text=text)],
                metadata={"agent": "chunker"},
            ),
            append=append,
            last_chunk=last_chunk,
        )

    assert chunks == [chunk(*sent) for sent in CHUNKS]
    assert isinstance(stored, Task)
    assert stored.status.state is TaskState.COMPLETED
    assert stored.artifacts == [
        Artifact(
            artifact_id="chunker-doc",
            name="doc",
            parts=[Part(text="".join(text for text, _, _ in CHUNKS))],
            metadata={"agent": "chunker"},
        )
    ]


async def test_a_partner_task_kept_one_part_per_chunk_is_relayed_as_one_text(
    tmp_path: Path,
) -> None:
    # A partner that does not stream answers with its stored task, one part per chunk.
    async with serve_on_loopback(sdk_tokens(streaming=False)) as partner_url:
        path = tmp_path / "agents.yaml"
        path.write_text(f"version: 1\nagents:\n  - name: tokens\n    url: {partner_url}\n")
        served = serve_hub(skills=[delegate], partners=load_registry(path))
        async with served as running, httpx.AsyncClient() as http:
            hub = await A2AClient.from_url(running.url, http=http)
            with anyio.fail_after(15):
                done = await hub.send(user_message("go"), metadata={"agent": "tokens"})
    assert isinstance(done, Task)
    assert done.status.state is TaskState.COMPLETED
    assert done.artifacts is not None
    assert [artifact.parts for artifact in done.artifacts] == [[Part(text=WHOLE)]]
