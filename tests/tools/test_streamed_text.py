"""A partner that streams its answer in chunks, called as a tool: the result holds one text,
whether the partner is the hub or the a2a-sdk, streams or answers with its stored task (one
part per chunk), and repeated chunks are all kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from hub.partners import Partners
from hub.protocol import Artifact, Part
from hub.testing import serve_on_loopback
from hub.tools import ArtifactResult
from tests.streamed_text import WHOLE, hub_tokens, sdk_tokens
from tests.tools.agents import registry_file

pytestmark = pytest.mark.anyio

PARTNERS: dict[str, Callable[[str], Any]] = {
    "hub": hub_tokens,
    "sdk-streams": sdk_tokens(),
    "sdk-stored": sdk_tokens(streaming=False),
}


@pytest.fixture(params=list(PARTNERS))
async def partners(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    async with serve_on_loopback(PARTNERS[request.param]) as url:
        registry = registry_file(tmp_path / "agents.yaml", {"tokens": url})
        async with Partners(registry) as partners:
            yield partners


async def test_the_tool_result_holds_the_chunks_as_one_text(partners: Partners) -> None:
    with anyio.fail_after(15):
        result = await partners["tokens"].call(message="go")

    assert result.state == "completed"
    assert result.text == WHOLE
    [artifact] = result.artifacts
    assert artifact.text == WHOLE


async def test_repeated_chunks_are_all_in_the_result(partners: Partners) -> None:
    with anyio.fail_after(15):
        result = await partners["tokens"].call(message="repeat")

    assert result.text == "haha\n\nha"


def test_an_artifact_kept_as_one_part_per_chunk_reads_as_one_text() -> None:
    kept = Artifact(artifact_id="a", parts=[Part(text=text) for text in ("Hel", "lo", "!")])
    assert ArtifactResult.from_artifact(kept).text == "Hello!"
