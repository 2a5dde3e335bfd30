"""The `@skill` decorator and `Skill`, the executor that runs a decorated function."""

from __future__ import annotations

import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeAlias

from hub.errors import SkillError
from hub.protocol import (
    AgentSkill,
    Artifact,
    Message,
    Part,
    TaskState,
    agent_message,
    new_id,
)
from hub.skills.context import SkillContext, as_parts
from hub.skills.toolbox import Toolbox
from hub.tasks import ReplyMode, TaskExecutor, TaskRun
from hub.tools import ToolArguments

__all__ = ["LocalSkill", "Skill", "SkillResult", "skill"]

SkillResult: TypeAlias = (
    str | Part | Sequence[Part] | Artifact | Sequence[Artifact] | Message | None
)
"""What a skill may return: text, parts or artifacts (the task's result), a Message (the final
status message), or None. For a `reply="message"` skill, what it returns is the reply."""

SkillFunction: TypeAlias = Callable[
    [SkillContext], Awaitable[SkillResult] | AsyncIterator[str | Part | Sequence[Part] | Artifact]
]


class LocalSkill(TaskExecutor, Protocol):
    """What the hub serves as a local skill: a task executor with its card entry.

    `Skill` (a decorated function) and `ProcessSkill` (a command-line program) are the two
    kinds; the app, the card and the loader take any LocalSkill.
    """

    @property
    def card(self) -> AgentSkill: ...


_SKILL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
RESPONSE_ARTIFACT = "response"


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """A local skill: its card entry and the function that does the work.

    Implements the task manager's `TaskExecutor`.
    """

    card: AgentSkill
    function: SkillFunction = field(repr=False)
    mode: ReplyMode = "task"
    arguments: type[ToolArguments] = ToolArguments
    """What the skill takes when called as a tool (`skill_<id>`)."""
    tools: Toolbox | None = field(default=None, repr=False, compare=False)
    resumable: bool = False
    """Its task, left running when the hub stopped, is run again (`ctx.resumed`) rather
    than failed."""

    def with_tools(self, tools: Toolbox) -> Skill:
        """This skill, reaching partners and other skills through `tools` (`ctx.tools`,
        `ctx.agents`)."""
        return replace(self, tools=tools)

    @property
    def skill_id(self) -> str:
        return self.card.id

    @property
    def reply_mode(self) -> ReplyMode:
        return self.mode

    async def run(self, run: TaskRun) -> None:
        if run.opened and run.state is TaskState.SUBMITTED:
            await run.status(TaskState.WORKING)
        ctx = SkillContext(
            skill_id=self.skill_id,
            message=run.message,
            metadata=run.metadata,
            run=run,
            tools=self.tools,
            reply_only=self.mode == "message",
        )
        if inspect.isasyncgenfunction(self.function):
            await _stream_chunks(ctx, self.function(ctx))
            return
        result = await self.function(ctx)  # type: ignore[misc]
        if run.replied or run.state.is_terminal or run.state.is_interrupted:
            return
        if self.mode == "message":
            await run.reply(self._as_reply(result))
            return
        await _deliver(ctx, run, result)

    def _as_reply(self, result: SkillResult) -> Message:
        """What a `reply="message"` skill returned, as its reply."""
        if isinstance(result, Message):
            return result
        if isinstance(result, Artifact):
            return agent_message(result.parts)
        if result is None:
            raise SkillError(f"skill '{self.skill_id}' returned nothing to reply with")
        if isinstance(result, Sequence) and not isinstance(result, str):
            parts = [
                p for item in result for p in (item.parts if isinstance(item, Artifact) else [item])
            ]
            return agent_message(parts)
        return agent_message(as_parts(result))


async def _deliver(ctx: SkillContext, run: TaskRun, result: SkillResult) -> None:
    if result is None:
        return
    if isinstance(result, Message):
        await run.status(TaskState.COMPLETED, result)
        return
    if isinstance(result, Artifact):
        await run.artifact(result)
        return
    if isinstance(result, str | Part):
        await ctx.artifact(result, name=RESPONSE_ARTIFACT)
        return
    items = list(result)
    if items and all(isinstance(item, Artifact) for item in items):
        for artifact in items:
            await run.artifact(artifact)  # type: ignore[arg-type]
    elif items:
        await ctx.artifact(items, name=RESPONSE_ARTIFACT)  # type: ignore[arg-type]


async def _stream_chunks(
    ctx: SkillContext, chunks: AsyncIterator[str | Part | Sequence[Part] | Artifact]
) -> None:
    """Yielded text and parts become chunks of one response artifact; yielded artifacts are
    emitted whole. One chunk is held back so the last can be marked `lastChunk`."""
    artifact_id = new_id()
    pending: list[Part] | None = None
    sent_any = False
    async for chunk in chunks:
        if isinstance(chunk, Artifact):
            await ctx.artifact(
                chunk.parts, name=chunk.name, artifact_id=chunk.artifact_id, metadata=chunk.metadata
            )
            continue
        if pending is not None:
            await ctx.artifact(
                pending,
                name=RESPONSE_ARTIFACT,
                artifact_id=artifact_id,
                append=sent_any,
                last_chunk=False,
            )
            sent_any = True
        pending = as_parts(chunk)
    if pending is not None:
        await ctx.artifact(
            pending, name=RESPONSE_ARTIFACT, artifact_id=artifact_id, append=sent_any
        )


def skill(
    *,
    id: str,
    description: str,
    name: str | None = None,
    tags: Sequence[str] = (),
    examples: Sequence[str] = (),
    input_modes: Sequence[str] | None = None,
    output_modes: Sequence[str] | None = None,
    reply: ReplyMode = "task",
    arguments: type[ToolArguments] = ToolArguments,
    resumable: bool = False,
) -> Callable[[SkillFunction], Skill]:
    """Declare an async function (or async generator) as a local skill.

    Args:
        id: the skill id in the card and in `metadata.skill` (letters, digits, `_.-`).
        description: what the skill does, shown in the card.
        name: a human name (default: the id).
        tags: keywords for routing.
        examples: example prompts.
        input_modes: accepted media types (default: the card's).
        output_modes: produced media types (default: the card's).
        reply: how the skill answers a new message. "task" (default): with a task.
            "message": with one Message, what the function returns, and no task. "either":
            as the skill decides for each message: `await ctx.reply(...)` before anything
            else answers with a Message and no task; any other act makes a task.
        arguments: what the skill takes when called as a tool (`skill_<id>`, and its JSON
            Schema): a `ToolArguments` subclass whose own fields, through its `options()`,
            become the request's metadata, where the skill reads them.
        resumable: a task the skill was running when its hub stopped (a crash, a restart,
            a replica that stopped) is run again from the start, with `ctx.resumed` True and
            its caller's rights, instead of failed "interrupted by restart". Only for a skill
            that can tell what its earlier run did (it keeps a journal) or may safely do it
            again.
    """
    if not _SKILL_ID.match(id):
        raise ValueError(f"skill id {id!r} must be 1-64 letters, digits, '_', '.' or '-'")
    if reply not in ("task", "message", "either"):
        raise ValueError(
            f"skill {id!r}: reply must be 'task', 'message' or 'either', not {reply!r}"
        )

    def decorate(function: SkillFunction) -> Skill:
        if not (inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)):
            raise TypeError(f"skill {id!r} must be an async function or async generator")
        if reply == "message" and inspect.isasyncgenfunction(function):
            raise TypeError(
                f"skill {id!r} replies with one message (reply='message'); it cannot be an "
                "async generator"
            )
        card = AgentSkill(
            id=id,
            name=name or id,
            description=description,
            tags=list(tags),
            examples=list(examples) or None,
            input_modes=list(input_modes) if input_modes else None,
            output_modes=list(output_modes) if output_modes else None,
        )
        return Skill(
            card=card, function=function, mode=reply, arguments=arguments, resumable=resumable
        )

    return decorate
