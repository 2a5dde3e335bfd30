"""The built-in `delegate` skill: hand the message to the partner best suited to it.

The partner is the one `metadata.agent` names (in the request's or the message's metadata;
a named partner that is unknown, down or refuses fails the task, there is no fallback), or
the router's first choice (by `metadata.tags`, `metadata.agentSkill` and the message's
words). The partner's status and
artifact events become the hub task's own updates, each marked with `metadata.agent`; its
questions (input-required, auth-required) become the hub task's, and the caller's answer goes
back down to the partner. A later message in the same hub context continues the same
conversation with that partner. Canceling the hub task cancels the partner's task.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anyio
from pydantic import Field

from hub.client.stream_end import StreamEnd
from hub.errors import ClientError, SkillError
from hub.partners import PartnerView
from hub.partners.conversations import hub_conversation
from hub.protocol import JsonObject, StreamResponse, Task, TaskState, joined_parts, state_name
from hub.protocol.trace import current_scope
from hub.skills.api import skill
from hub.skills.context import SkillContext
from hub.swarm import RouteRequest, ScoringRouter
from hub.tasks.choice import routing_metadata
from hub.telemetry import span
from hub.telemetry.tracing import SpanHandle
from hub.tools import ToolArguments

__all__ = ["ROUTING_SKILLS", "DelegateArguments", "delegate"]

ROUTING_SKILLS = ("delegate", "swarm", "federation")
"""Skills that route work elsewhere: never themselves a routing candidate."""

_QUESTION = (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED)


class DelegateArguments(ToolArguments):
    """The `delegate` skill called as a tool (`skill_delegate`, MCP `delegate`): the common
    arguments, `skill` naming the partner's skill, and the choice of partner."""

    agent: str | None = Field(default=None, description="The partner to hand the message to.")
    tags: tuple[str, ...] = Field(
        default=(), description="Choose among the partners with these tags."
    )

    def options(self) -> JsonObject:
        options: JsonObject = {}
        if self.agent is not None:
            options["agent"] = self.agent
        if self.tags:
            options["tags"] = list(self.tags)
        if self.skill is not None:
            options["agentSkill"] = self.skill
        return options


@skill(
    id="delegate",
    name="Delegate",
    description="Hands the message to the partner agent best suited to it (metadata.agent "
    "names one; metadata.tags narrows the choice) and relays its progress and answer.",
    tags=["delegate", "route"],
    examples=["Summarise this paper"],
    arguments=DelegateArguments,
)
async def delegate(ctx: SkillContext) -> None:
    with span("delegate") as delegation:
        await _delegate(ctx, delegation)


async def _delegate(ctx: SkillContext, delegation: SpanHandle | None) -> None:
    partners = ctx.agents
    options = routing_metadata(ctx.metadata, ctx.message.metadata)
    name = await _choose(ctx, partners, options)
    if delegation is not None:
        delegation.update_name(f"delegate {name}")
        delegation.set_attribute("a2a_hub.partner.name", name)
    tool = partners[name]
    scope = current_scope()
    conversation = hub_conversation(scope.caller if scope else "", ctx.context_id or "")
    arguments: dict[str, Any] = {"message": ctx.text or "(no text)"}
    conversations = ctx.tools.conversations
    partner_context = conversations.get(conversation, name)
    if partner_context:
        arguments["context_id"] = partner_context
    agent_skill = options.get("agentSkill")
    if isinstance(agent_skill, str):
        arguments["skill"] = agent_skill
    if ctx.data:
        arguments["data"] = ctx.data[0]
    await ctx.progress(f"delegated to '{name}'", metadata={"agent": name})
    while True:
        relay = _Relay(ctx, name, follow_up="task_id" in arguments)
        started = time.monotonic()
        try:
            async with tool.stream(**arguments) as events:
                async for event in events:
                    await relay.take(event)
                    if relay.settled:
                        break
            await relay.close()
        except anyio.get_cancelled_exc_class():
            if relay.task_id is not None and not relay.settled:
                await tool.cancel(relay.task_id)
            raise
        except ClientError:
            ctx.tools.stats.record(name, ok=False, seconds=time.monotonic() - started)
            raise
        ctx.tools.stats.record(name, ok=True, seconds=time.monotonic() - started)
        if relay.context_id:
            conversations.remember(conversation, name, relay.context_id)
        state = relay.state
        if state in _QUESTION:
            answer = await ctx.ask(
                relay.question or "the partner asks for input",
                auth=(state is TaskState.AUTH_REQUIRED),
            )
            arguments = {
                "message": answer.text() or "(no text)",
                "task_id": relay.task_id,
                "context_id": relay.context_id,
            }
            continue
        if state is TaskState.COMPLETED:
            if not relay.relayed_artifact and relay.question:
                await ctx.artifact(relay.question, name="response", metadata={"agent": name})
            return
        why = f": {relay.question}" if relay.question else ""
        raise SkillError(f"partner '{name}' ended the task {state_name(state)}{why}")


async def _choose(ctx: SkillContext, partners: PartnerView, options: Mapping[str, Any]) -> str:
    """The partner `options` name (never another one), or the router's first choice."""
    agent = options.get("agent")
    tags = options.get("tags")
    agent_skill = options.get("agentSkill")
    request = RouteRequest(
        text=ctx.text,
        agent=agent if isinstance(agent, str) else None,
        tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        skill=agent_skill if isinstance(agent_skill, str) else None,
        include_skills=False,
    )
    if request.agent is not None:
        partners.entry(request.agent)  # an unknown name fails with the known ones listed
    ranked = await ScoringRouter(partners, stats=ctx.tools.stats).rank(request)
    if not ranked:
        wanted = ", ".join(
            part
            for part in (
                f"agent '{request.agent}'" if request.agent else "",
                f"tags {list(request.tags)}" if request.tags else "",
                f"skill '{request.skill}'" if request.skill else "",
            )
            if part
        )
        raise SkillError(
            f"no partner agent can take this ({wanted or 'agents.yaml lists none that is up'})"
        )
    return ranked[0].name


class _Relay:
    """Turns one partner stream into the hub task's updates.

    On a follow-up, the partner may open with its stored task, still waiting on the question
    the hub task has already asked and relayed: that snapshot is skipped, and only the
    partner's next change settles the turn (`StreamEnd`).
    """

    def __init__(self, ctx: SkillContext, agent: str, *, follow_up: bool = False) -> None:
        self.ctx = ctx
        self._end = StreamEnd(known_task=follow_up)
        self.agent = agent
        self.metadata: JsonObject = {"agent": agent}
        self.state = TaskState.SUBMITTED
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.question: str | None = None
        self.relayed_artifact = False
        self.settled = False
        self._repeat: Task | None = None

    async def take(self, event: StreamResponse) -> None:
        repeat = self._end.is_repeat(event)
        self.settled = self._end.is_final(event)
        if not repeat:
            self._repeat = None
        if event.message is not None:
            self.context_id = event.message.context_id or self.context_id
            self.state = TaskState.COMPLETED
            self.question = event.message.text()
            return
        if event.task is not None:
            task = event.task
            self.task_id, self.context_id = task.id, task.context_id or self.context_id
            if repeat:
                self._repeat = task
                return
            for artifact in task.artifacts or []:
                # A partner may keep a text it streamed one part per chunk (the a2a-sdk does):
                # the hub task holds it as one text, as it would have from the chunks.
                parts = joined_parts(artifact.parts)
                await self._artifact(parts, artifact.name, artifact.artifact_id)
            await self._status(task.status.state, task.status.message)
            return
        if event.status_update is not None:
            update = event.status_update
            self.task_id = update.task_id
            self.context_id = update.context_id or self.context_id
            await self._status(update.status.state, update.status.message)
            return
        if event.artifact_update is not None:
            chunk = event.artifact_update
            self.task_id = chunk.task_id
            await self._artifact(
                chunk.artifact.parts,
                chunk.artifact.name,
                chunk.artifact.artifact_id,
                append=chunk.append,
                last_chunk=chunk.last_chunk,
            )

    async def close(self) -> None:
        """The stream has ended. One that ended on the partner's waiting task alone (the one
        reply of a partner that does not stream, or the question asked once more) has that
        task as its answer."""
        if not self.settled and self._repeat is not None:
            await self._status(self._repeat.status.state, self._repeat.status.message)
            self.settled = True

    async def _status(self, state: TaskState, message: Any) -> None:
        self.state = state
        text = message.text() if message is not None else None
        if state.is_terminal or state in _QUESTION:
            self.question = text
        elif text:
            await self.ctx.progress(text, metadata=self.metadata)

    async def _artifact(
        self,
        parts: Any,
        name: str | None,
        artifact_id: str,
        *,
        append: bool = False,
        last_chunk: bool = True,
    ) -> None:
        self.relayed_artifact = True
        await self.ctx.artifact(
            parts,
            name=name,
            artifact_id=f"{self.agent}-{artifact_id}",
            append=append,
            last_chunk=last_chunk,
            metadata=self.metadata,
        )
