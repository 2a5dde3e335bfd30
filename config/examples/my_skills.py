"""Example local skills, loaded with `skills: [{module: config.examples.my_skills:shout}]`."""

from hub import SkillContext, skill


@skill(
    id="shout",
    name="Shout",
    description="Answers with the message in capital letters.",
    tags=["text", "example"],
    examples=["hello there"],
)
async def shout(ctx: SkillContext) -> str:
    return ctx.text.upper()


@skill(
    id="interview",
    name="Interview",
    description="Asks for your name, then greets you (a multi-turn example).",
    tags=["example", "multi-turn"],
)
async def interview(ctx: SkillContext) -> str:
    await ctx.progress("thinking about a question")
    answer = await ctx.ask("What is your name?")
    return f"Hello, {answer.text()}!"
