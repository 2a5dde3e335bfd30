"""The built-in `swarm` skill: one message to several partners at once, combined by a strategy.

Metadata of the request or of its message (all optional but `strategy` for anything but a
broadcast):
`strategy` (`broadcast`, `race`, `vote`, `best_of`, `map`, `chain`), `agents` (names),
`tags`, `agentSkill`, `limit`, `quorum`, `judge` (a tool name), `items` (for `map`; a list
sent as a data part works too), `concurrency`, `branchDeadline` and `deadline` (seconds).

Each branch's end is reported as a progress update naming the partner (streamed and shown
in the task's status, not kept in its history); the result is one artifact `swarm` holding
the answer as text and every branch as data. The task fails when the strategy reaches no
answer, with the reason (the artifact still shows every branch). A swarm past a cap of
`swarm:` in hub.yaml ends REJECTED before any partner is called, its status message naming
the cap and carrying the -32602 error under `metadata["a2a-hub/error"]`; so does a swarm whose
options do not fit (`SwarmSpec`: an unknown strategy, a number out of range), naming each.
"""

from __future__ import annotations

from pydantic import Field

from hub.errors import InvalidParamsError
from hub.protocol import JsonObject, Part
from hub.skills.api import skill
from hub.skills.context import SkillContext
from hub.skills.refusal import reject
from hub.swarm import SwarmSpec
from hub.tasks.choice import routing_metadata
from hub.tools import ToolArguments

__all__ = ["SwarmArguments", "swarm"]


class SwarmArguments(SwarmSpec, ToolArguments):
    """The `swarm` skill called as a tool (`skill_swarm`, MCP `swarm`): the common
    arguments, `skill` naming the partners' skill, and the swarm's options (`SwarmSpec`)."""

    # Described as every tool's `skill` is, so a model reads it the same on each tool.
    skill: str | None = Field(
        default=None, description=ToolArguments.model_fields["skill"].description
    )

    def options(self) -> JsonObject:
        return self.to_metadata()


@skill(
    id="swarm",
    name="Swarm",
    description="Sends the message to several partner agents at once and combines their "
    "answers: broadcast, race, vote, best_of, map or chain (metadata.strategy).",
    tags=["swarm", "route"],
    examples=["Translate 'good morning' into French"],
    arguments=SwarmArguments,
)
async def swarm(ctx: SkillContext) -> list[Part]:
    meta = routing_metadata(ctx.metadata, ctx.message.metadata)
    try:
        result = await ctx.swarm(spec=SwarmSpec.from_metadata(meta, data=ctx.data))
    except InvalidParamsError as error:
        await reject(ctx, f"swarm refused: {error.message}", error)
        return []
    # The branches are reported whether or not the strategy reached an answer.
    await ctx.artifact(
        [
            Part(text=result.answer or result.reason),
            Part(data=result.to_dict(), media_type="application/json"),
        ],
        name="swarm",
        metadata={"strategy": result.strategy, "reason": result.reason},
    )
    if not result.ok:
        raise ctx.fail(f"swarm ({result.strategy}) reached no answer: {result.reason}")
    return []
