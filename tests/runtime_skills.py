"""Local skills for the runtime and CLI tests, loaded as `tests.runtime_skills:<name>`."""

from __future__ import annotations

from hub import SkillContext, skill

PARTNER = "echoer"
"""The partner `relay` calls: the tests name it so in their agents.yaml."""


@skill(id="shout", description="Answers with the message in capital letters.")
async def shout(ctx: SkillContext) -> str:
    return ctx.text.upper()


@skill(id="relay", description="Sends the message to the partner 'echoer' and reports its answer.")
async def relay(ctx: SkillContext) -> str:
    result = await ctx.agents[PARTNER].call(message=ctx.text)
    return f"{result.agent} {result.state}: {result.text}"


@skill(id="interview", description="Asks for a name, then greets.")
async def interview(ctx: SkillContext) -> str:
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}!"


@skill(id="broken", description="Always fails.")
async def broken(ctx: SkillContext) -> str:
    raise ctx.fail("the broken skill always fails")
