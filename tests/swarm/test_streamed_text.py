"""Partners that stream their answers in chunks, in a swarm: each branch's answer is one
text, so a vote counts the same words as the same answer."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from hub.partners import Partners
from hub.swarm import SwarmSpec, run_swarm
from tests.streamed_text import WHOLE, hub_tokens, sdk_tokens
from tests.swarm.partners import partner_registry

pytestmark = pytest.mark.anyio


async def test_every_branch_answers_with_the_chunks_joined(tmp_path: Path) -> None:
    script = {
        "hub": (hub_tokens, ()),
        "streams": (sdk_tokens(), ()),
        "stored": (sdk_tokens(streaming=False), ()),
    }
    async with partner_registry(tmp_path, script) as (registry, _), Partners(registry) as p:
        with anyio.fail_after(30):
            broadcast = await run_swarm(p, "go", SwarmSpec(agents=tuple(script)))
            vote = await run_swarm(p, "go", SwarmSpec(strategy="vote", agents=tuple(script)))

    assert broadcast.answers == [WHOLE, WHOLE, WHOLE]
    assert vote.ok
    assert vote.answer == WHOLE
