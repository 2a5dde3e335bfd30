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
the cap and carrying the -32602 error under `metadata["a2a-hub/error"]`.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import Field

from hub.errors import InvalidParamsError
from hub.protocol import JsonObject, Part
from hub.skills.api import skill
from hub.skills.context import SkillContext
from hub.skills.refusal import reject
from hub.swarm import Strategy
from hub.tasks.choice import routing_metadata
from hub.tools import ToolArguments

__all__ = ["SwarmArguments", "swarm"]


class SwarmArguments(ToolArguments):
    """The `swarm` skill called as a tool (`skill_swarm`, MCP `swarm`): the common arguments,
    `skill` naming the partners' skill, and the swarm's options."""

    strategy: Strategy = Field(
        default="broadcast",
        description="broadcast: every answer; race: the first success, the others canceled; "
        "vote: the majority (quorum); best_of: a judge picks; map: items split across "
        "partners; chain: each answer goes to the next partner.",
    )
    agents: tuple[str, ...] = Field(
        default=(), description="The partners to send to (default: by tags)."
    )
    tags: tuple[str, ...] = Field(default=(), description="Send to the partners with these tags.")
    quorum: int | None = Field(default=None, ge=1, description="Answers a vote needs.")
    limit: int | None = Field(default=None, ge=1, description="Most partners to use.")
    judge: str | None = Field(default=None, description="best_of: the tool that picks the answer.")
    items: list[Any] | None = Field(
        default=None, description="map: the list to split across partners."
    )
    concurrency: int | None = Field(default=None, ge=1, description="Branches at once.")
    deadline: float | None = Field(default=None, gt=0, description="Seconds for the whole swarm.")
    branch_deadline: float | None = Field(
        default=None, gt=0, description="Seconds for each branch."
    )

    def options(self) -> JsonObject:
        given: dict[str, Any] = {
            "strategy": self.strategy,
            "agents": list(self.agents),
            "tags": list(self.tags),
            "quorum": self.quorum,
            "limit": self.limit,
            "judge": self.judge,
            "items": self.items,
            "concurrency": self.concurrency,
            "deadline": self.deadline,
            "branchDeadline": self.branch_deadline,
            "agentSkill": self.skill,
        }
        return {key: value for key, value in given.items() if value not in (None, [])}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _names(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


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
    items: Any = meta.get("items")
    if items is None and ctx.data and isinstance(ctx.data[0], list):
        items = ctx.data[0]
    quorum, limit, concurrency = (
        _number(meta.get(key)) for key in ("quorum", "limit", "concurrency")
    )
    strategy = meta.get("strategy", "broadcast")
    judge, agent_skill = meta.get("judge"), meta.get("agentSkill")
    try:
        result = await ctx.swarm(
            # run_swarm refuses a name outside STRATEGIES, with the list: the cast checks
            # nothing.
            strategy=cast(Strategy, strategy) if isinstance(strategy, str) else "broadcast",
            agents=_names(meta.get("agents")) or None,
            tag=_names(meta.get("tags")) or _names(meta.get("tag")),
            skill=agent_skill if isinstance(agent_skill, str) else None,
            limit=int(limit) if limit else None,
            quorum=int(quorum) if quorum else None,
            judge=judge if isinstance(judge, str) else None,
            items=items if isinstance(items, list) else None,
            concurrency=int(concurrency) if concurrency else None,
            branch_deadline=_number(meta.get("branchDeadline")),
            deadline=_number(meta.get("deadline")),
        )
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
