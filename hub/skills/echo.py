"""The built-in `echo` skill: answers with the parts it was sent."""

from __future__ import annotations

from hub.protocol import Part
from hub.skills.api import skill
from hub.skills.context import SkillContext

__all__ = ["echo"]


@skill(
    id="echo",
    name="Echo",
    description="Answers with the message it was sent, as an artifact.",
    tags=["echo", "test"],
    examples=["hello"],
)
async def echo(ctx: SkillContext) -> list[Part]:
    return list(ctx.message.parts)
