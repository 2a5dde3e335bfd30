"""Skills for the crash test, loaded by a real hub process."""

from __future__ import annotations

import anyio

from hub import SkillContext, skill


@skill(id="forever", description="works until the process dies")
async def forever(ctx: SkillContext) -> str:
    await ctx.progress("working")
    await anyio.sleep_forever()
    return "never"


@skill(id="interview", description="asks for a name, then greets")
async def interview(ctx: SkillContext) -> str:
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}!"
