"""A skill for the database restart tests, loaded by real hub processes."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from hub import SkillContext, skill

from .replica_skills import MARKS_ENV


@skill(id="steady", description="reports progress every few milliseconds until released")
async def steady(ctx: SkillContext) -> str:
    # Released by a file `release` in the marks folder, so the test decides when the work
    # ends: after the database restart, whatever the machine's speed.
    step = 0
    while not _released():
        step += 1
        await ctx.progress(f"step {step}")
        await anyio.sleep(0.05)
    return f"released after {step} steps"


def _released() -> bool:
    return Path(os.environ[MARKS_ENV], "release").exists()
