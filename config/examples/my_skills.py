"""Example local skills, loaded with `skills: [{module: config.examples.my_skills:shout}]`
and so on (docs/skills.md describes each kind)."""

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


@skill(
    id="assistant",
    name="Assistant",
    description="Answers 'ping' at once with a message; works on anything else as a task.",
    tags=["example", "reply"],
    examples=["ping", "plan my week"],
    reply="either",
)
async def assistant(ctx: SkillContext) -> str | None:
    if ctx.text.strip().lower() == "ping":
        await ctx.reply("pong")  # the answer is this Message: no task is created
        return None
    await ctx.progress("working on it")  # the first report creates the task
    return f"done: {ctx.text}"
