"""The skill `bench.delegation` measures: forward the message to partner `partner`, return
its answer. One delegation hop, with nothing else in it."""

from __future__ import annotations

from hub.skills import SkillContext, skill

__all__ = ["relay"]


@skill(id="relay", description="forwards the message to partner 'partner' and returns its answer")
async def relay(ctx: SkillContext) -> str:
    result = await ctx.agents["partner"].call(message=ctx.text)
    if not result.ok:
        raise ctx.fail(f"partner answered {result.state}: {result.message}")
    return result.text
