"""The skill `python -m bench.console` follows on a task page: after a pause (for the page to
open and subscribe), it changes its task every 0.3 s, writing into each progress message the
moment (epoch milliseconds) just before the change."""

from __future__ import annotations

import time

import anyio

from hub.skills import SkillContext, skill

_PAUSE = 3.0
_EVERY = 0.3


@skill(id="ticker", description="changes its task every 0.3 s, stamping each change")
async def ticker(ctx: SkillContext) -> str:
    steps = int(ctx.text) if ctx.text.isdigit() else 30
    await anyio.sleep(_PAUSE)
    for number in range(steps):
        await ctx.progress(f"step {number} @ {time.time() * 1000:.3f}")
        await anyio.sleep(_EVERY)
    return "done"
