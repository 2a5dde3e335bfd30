"""SkillContext: what a local skill receives, and the only way it changes its task."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

from hub.errors import InvalidParamsError, SkillError
from hub.partners import PartnerView
from hub.protocol import (
    Artifact,
    JsonObject,
    Message,
    Part,
    TaskState,
    agent_message,
    new_id,
    state_name,
)
from hub.protocol.trace import current_scope
from hub.skills.toolbox import Toolbox
from hub.swarm import Branch, SwarmOptions, SwarmResult, SwarmSpec, choose_partners, run_swarm
from hub.tasks import TaskRun

__all__ = ["SkillContext", "as_parts"]


def as_parts(content: str | Part | Sequence[Part]) -> list[Part]:
    if isinstance(content, str):
        return [Part(text=content)]
    if isinstance(content, Part):
        return [content]
    return list(content)


class SkillContext:
    """The task a skill is working on, and the calls that report progress and results.

    Attributes:
        message: the message that started the task (or, before the task exists, the
            request's message).
        metadata: the request's metadata.
    """

    def __init__(
        self,
        *,
        skill_id: str,
        message: Message,
        metadata: JsonObject | None,
        run: TaskRun | None,
        tools: Toolbox | None = None,
        reply_only: bool = False,
    ) -> None:
        self.skill_id = skill_id
        self.message = message
        self.metadata: JsonObject = metadata or {}
        self._run = run
        # What the skill reaches is what the caller that started its task may reach: the
        # scope the task runs in (none outside one).
        self._scope = current_scope()
        self._hub_tools = tools
        self._tools: Toolbox | None = None
        self._reply_only = reply_only

    @property
    def extensions(self) -> frozenset[str]:
        """The URIs of the A2A extensions the request activated: those it listed in its
        `A2A-Extensions` header (0.3: `X-A2A-Extensions`) that the hub's card declares.

        For a task, the request that started its skill's run; empty outside a request
        (a run restarted after the hub restarted, or a skill called from Python)."""
        scope = current_scope()
        return scope.extensions if scope is not None else frozenset()

    @property
    def tools(self) -> Toolbox:
        """Every tool of the hub by name: partners (`a2a_<agent>`) and local skills
        (`skill_<id>`), those the task's caller may use. Calls carry this task's trace and
        deadline."""
        if self._tools is None:
            if self._hub_tools is None:
                raise SkillError(
                    f"skill '{self.skill_id}' has no tools: it runs outside a hub "
                    "(serve it with a2a-hub, or give it a Toolbox with Skill.with_tools)"
                )
            self._tools = self._hub_tools.within(self._scope)
        return self._tools

    @property
    def agents(self) -> PartnerView:
        """The partner agents of agents.yaml the task's caller may reach, by name:
        `await ctx.agents["research"].call(message="...")` returns a `ToolResult`. Calls
        carry this task's trace and deadline."""
        return self.tools.partners

    async def swarm(
        self,
        message: str | None = None,
        *,
        spec: SwarmSpec | None = None,
        **options: Unpack[SwarmOptions],
    ) -> SwarmResult:
        """Send `message` (default: this task's text) to several partners at once.

        Args:
            message: the text to send (default: this task's).
            spec: the swarm's options (`SwarmSpec`, whose fields say what each does). With
                no `agents`, the partners are the router's choice by `tags`, `skill` and
                the message's words (at most `limit`); `judge` names a tool of `ctx.tools`
                (`a2a_<partner>` or `skill_<id>`); `concurrency` defaults to 8 (or
                `swarm.max_concurrency` if lower).
            **options: the same fields as keywords instead (`strategy="vote",
                tag="review", quorum=2`; `tag` is `tags` too), not with `spec`.

        Returns:
            The `SwarmResult`: `ok`, `answer`, `reason` and every branch. A swarm that reached
            no answer is returned, not raised; `raise ctx.fail(result.reason)` fails the task.

        Raises:
            SkillError: no partner matches, or the options do not fit the strategy (or are
                not valid options: an unknown strategy, a number out of range).
            InvalidParamsError: the swarm is past a cap of `swarm:` in hub.yaml (items,
                partners, concurrency, deadline); no partner was called.
        """
        text = self.text if message is None else message
        if spec is not None and options:
            raise TypeError("give ctx.swarm a spec or its options as keywords, not both")
        if spec is None:
            try:
                spec = SwarmSpec.parse(options)
            except InvalidParamsError as exc:
                raise SkillError(f"swarm: {exc.message}") from None
        try:
            chosen = await choose_partners(
                self.agents,
                text=text,
                agents=spec.agents,
                tags=spec.tags,
                skill=spec.skill,
                limit=spec.limit,
                stats=self.tools.stats,
            )
            if not chosen:
                tags = list(spec.tags) or "any"
                raise SkillError(f"no partner agent matches the swarm (tags {tags})")
            return await run_swarm(
                self.agents,
                text,
                spec.model_copy(update={"agents": tuple(chosen)}),
                judge=self.tools[spec.judge] if spec.judge else None,
                on_branch=self._report_branch if self._run is not None else None,
                limits=self.tools.swarm,
                stats=self.tools.stats,
            )
        except (ValueError, KeyError) as exc:
            raise SkillError(f"swarm: {exc}") from None

    async def _report_branch(self, branch: Branch) -> None:
        outcome = branch.answer if branch.ok else branch.error
        # Out of the history: a swarm has up to swarm.max_items branches, and the task is
        # written whole at each change, so a report kept per branch made its cost quadratic.
        await self.progress(
            f"{branch.agent}: {branch.state}" + (f" ({outcome[:200]})" if outcome else ""),
            metadata={"agent": branch.agent, "branch": branch.index, "state": branch.state},
            history=False,
        )

    @property
    def task_id(self) -> str | None:
        """The task's id; None while there is no task (`can_reply`, or a reply skill)."""
        return self._run.task_id if self._run is not None and self._run.opened else None

    @property
    def can_reply(self) -> bool:
        """True while `reply` answers with a Message and no task: a new message to a skill
        declared with `reply="either"` (or `"message"`), before the skill did anything that
        makes a task."""
        return self._run is not None and self._run.can_reply

    async def reply(self, content: str | Part | Sequence[Part] | Message) -> None:
        """Answer with a Message: while `can_reply`, the caller gets this Message and no
        task is created or kept (the skill should return after it). Once there is a task
        (the skill reported something, the message continues a task, or the caller asked
        for the answer at once with `returnImmediately`), the task completes with this
        message as its final status message instead.

        Raises:
            SkillError: the skill already answered with a Message.
        """
        if self._run is None:
            raise SkillError(
                f"skill '{self.skill_id}' runs outside a hub; it has no one to reply to"
            )
        reply = content if isinstance(content, Message) else agent_message(as_parts(content))
        await self._run.reply(reply)

    @property
    def context_id(self) -> str | None:
        return self._run.context_id if self._run else self.message.context_id

    @property
    def text(self) -> str:
        """The text parts of the first message, joined by newlines."""
        return self.message.text()

    @property
    def data(self) -> list[Any]:
        """The `data` values of the first message's data parts."""
        return [part.data for part in self.message.parts if part.data is not None]

    @property
    def history(self) -> list[Message]:
        return self._run.history if self._run else [self.message]

    @property
    def replaying(self) -> bool:
        """True while a restarted skill replays answers it already had (nothing is emitted)."""
        return self._run.replaying if self._run else False

    @property
    def resumed(self) -> bool:
        """True when this run picks up a task the skill was running when its hub stopped
        (a `resumable` skill): the earlier run may have done part of the work."""
        return self._run.resumed if self._run else False

    def _task(self, what: str) -> TaskRun:
        if self._run is None or self._reply_only:
            raise SkillError(
                f"skill '{self.skill_id}' replies with a message and has no task to {what}"
            )
        return self._run

    async def progress(
        self, text: str, *, metadata: JsonObject | None = None, history: bool = True
    ) -> None:
        """Report progress: a WORKING status update carrying `text`.

        Args:
            history: False leaves the report out of the task's history (the task's status
                and its streams still show it): for a report made once per item of a large
                batch, which would otherwise make every later write of the task longer.
        """
        await self._task("report progress on").status(
            TaskState.WORKING, agent_message(text), metadata=metadata, history=history
        )

    async def artifact(
        self,
        content: str | Part | Sequence[Part],
        *,
        name: str | None = None,
        description: str | None = None,
        artifact_id: str | None = None,
        append: bool = False,
        last_chunk: bool = True,
        metadata: JsonObject | None = None,
    ) -> str:
        """Emit an artifact (or a chunk of one, with `append`); returns its id.

        Send chunks with the same `artifact_id` and `append=True`, the last with
        `last_chunk=True`; the artifact is persisted when its last chunk arrives.
        """
        artifact = Artifact(
            artifact_id=artifact_id or new_id(),
            name=name,
            description=description,
            parts=as_parts(content),
            metadata=metadata,
        )
        await self._task("add artifacts to").artifact(
            artifact, append=append, last_chunk=last_chunk
        )
        return artifact.artifact_id

    async def ask(self, question: str | Sequence[Part], *, auth: bool = False) -> Message:
        """Park the task in input-required (or auth-required) and wait for the answer.

        Returns:
            The caller's answer; `answer.text()` gives its text.
        """
        state = TaskState.AUTH_REQUIRED if auth else TaskState.INPUT_REQUIRED
        return await self._task("park").ask(agent_message(question), state=state)

    async def finish(
        self,
        state: TaskState = TaskState.COMPLETED,
        message: str | None = None,
        *,
        metadata: JsonObject | None = None,
    ) -> None:
        """End the task now in `state` (COMPLETED, FAILED or REJECTED), with a message (whose
        `metadata` it is, when given)."""
        if not state.is_terminal:
            raise SkillError(f"finish() takes a terminal state, not {state_name(state)}")
        status = agent_message(message) if message else None
        if status is not None and metadata is not None:
            status = status.model_copy(update={"metadata": metadata})
        await self._task("finish").status(state, status)

    @staticmethod
    def fail(message: str) -> SkillError:
        """`raise ctx.fail("why")` ends the task as failed with that message."""
        return SkillError(message)
