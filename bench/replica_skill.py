"""The skill `bench.replicas` times events across replicas with: it reports N progress
events (N is the message's text) 10 ms apart, each carrying the wall time it was reported."""

from __future__ import annotations

import time

import anyio

from hub import SkillContext, skill


@skill(id="clock", description="reports N timestamped progress events, 10 ms apart")
async def clock(ctx: SkillContext) -> str:
    await anyio.sleep(0.5)  # time for the subscriber on the other replica to start
    for _ in range(int(ctx.text or "10")):
        await ctx.progress(f"at {time.time():.6f}")
        await anyio.sleep(0.01)
    return "done"
