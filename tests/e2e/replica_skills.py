"""Skills for the replica tests, loaded by real hub processes on one PostgreSQL database."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from hub import SkillContext, skill

MARKS_ENV = "A2A_HUB_TEST_MARKS"
"""A folder where `until_canceled` leaves `<task id>.stopped` when its run is stopped."""


@skill(id="ticker", description="reports ten ticks, then completes")
async def ticker(ctx: SkillContext) -> str:
    for n in range(1, 11):
        await ctx.progress(f"tick {n}")
        await anyio.sleep(0.05)
    return "ticked"


@skill(id="until_canceled", description="works until canceled, and leaves a mark then")
async def until_canceled(ctx: SkillContext) -> str:
    await ctx.progress("working")
    try:
        await anyio.sleep_forever()
    finally:
        _leave_mark(f"{ctx.task_id}.stopped")
    return "never"


def _leave_mark(name: str) -> None:
    # A few bytes, written at once: no await in a canceled skill's `finally`.
    Path(os.environ[MARKS_ENV], name).write_text("stopped")
