"""What a running skill sees of its task (`TaskRun`), and what runs a skill (`TaskExecutor`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol, TypeAlias

from hub.errors import SkillError
from hub.protocol import Artifact, JsonObject, Message, TaskState
from hub.tasks.live import LiveTask
from hub.tasks.opening import Opening

__all__ = ["ReplyMode", "TaskExecutor", "TaskRun"]

ReplyMode: TypeAlias = Literal["task", "message", "either"]
"""How a skill answers a new message: always with a task ("task"); always with one direct
Message and no task ("message"); or as the skill decides for each message ("either")."""


class TaskExecutor(Protocol):
    """Runs one local skill. Implemented by the skills layer for each registered skill."""

    @property
    def skill_id(self) -> str: ...

    @property
    def reply_mode(self) -> ReplyMode:
        """How the skill answers a new message. Unless it is "task", the skill runs before
        its task exists, and `TaskRun.reply` then answers with a Message and no task."""
        ...

    @property
    def resumable(self) -> bool:
        """The skill can pick up a task it was running when its hub stopped (a crash, a
        replica that stopped renewing its lease): the hub then runs it again from the start
        with `TaskRun.resumed` set, in its caller's scope, instead of failing the task. A
        skill that keeps what it has done (a journal) and can go on from there says so."""
        ...

    async def run(self, run: TaskRun) -> None:
        """Work on a task until it is terminal or interrupted; may return early to park it.

        The executor sets WORKING when the work starts (`run.status(TaskState.WORKING)`);
        a task still SUBMITTED when `run` returns is completed by the manager.
        """


class TaskRun:
    """The handle a skill uses to change its task. Every change is persisted, then published.

    After a restart, a parked task's skill is run again from the start with the answers it
    already received: while those are replayed (`replaying` is True) the skill's progress and
    artifacts are not emitted again.

    A run given an `Opening` instead of a task starts before its task exists (a skill that
    may answer with a direct Message): `reply` then answers without a task, and the first
    change the skill makes creates the task (in WORKING, since the skill is already at work).

    A resumable skill's task that was running when its hub stopped is run again the same
    way, with `resumed` True.
    """

    __slots__ = ("_answers", "_asked", "_attach", "_live", "_opening", "_resumed", "metadata")

    def __init__(
        self,
        live: LiveTask | Opening,
        metadata: JsonObject | None = None,
        *,
        resumed: bool = False,
    ) -> None:
        self._opening = live if isinstance(live, Opening) else None
        self._live = None if isinstance(live, Opening) else live
        self._answers = self._live.answers() if self._live is not None else []
        self._asked = 0
        self._attach: Callable[[LiveTask], None] | None = None
        self._resumed = resumed
        self.metadata: JsonObject = metadata or {}
        """The SendMessage request's metadata."""

    @property
    def skill(self) -> str:
        return self._live.skill if self._live is not None else self._undecided().skill

    @property
    def task_id(self) -> str:
        """The task's id (chosen in advance while the task does not exist yet)."""
        return self._live.task_id if self._live is not None else self._undecided().task_id

    @property
    def context_id(self) -> str:
        return self._live.context_id if self._live is not None else self._undecided().context_id

    @property
    def message(self) -> Message:
        """The message that started the task."""
        if self._live is None:
            return self._undecided().message
        history = self._live.task.history
        assert history, "a live task always has its first message"
        return history[0]

    @property
    def history(self) -> list[Message]:
        if self._live is None:
            return [self._undecided().message]
        return list(self._live.task.history or [])

    @property
    def state(self) -> TaskState:
        """The task's state; SUBMITTED while the task does not exist yet."""
        return self._live.state if self._live is not None else TaskState.SUBMITTED

    @property
    def opened(self) -> bool:
        """True once the task exists (always, unless the run was given an `Opening`)."""
        return self._live is not None

    @property
    def can_reply(self) -> bool:
        """True while `reply` would answer with a Message and no task."""
        return self._opening is not None and not self._opening.decided

    @property
    def replied(self) -> bool:
        """True once the message is answered without a task: by `reply` (or by the error
        that refused to create the task)."""
        return self._opening is not None and self._opening.decided and self._live is None

    @property
    def replaying(self) -> bool:
        return self._asked < len(self._answers)

    @property
    def resumed(self) -> bool:
        """True when this run restarts a task that was running when its hub stopped (or
        whose replica stopped): the skill's earlier run may have done part of the work."""
        return self._resumed

    async def status(
        self,
        state: TaskState,
        message: Message | None = None,
        *,
        metadata: JsonObject | None = None,
        history: bool = True,
    ) -> None:
        """Set the task's state (WORKING for progress, or a terminal state to end it);
        `history=False` keeps `message` out of the task's history (its status shows it)."""
        if self.replaying and not state.is_terminal:
            return
        self._task().update_status(state, message, metadata, history=history)

    async def artifact(
        self,
        artifact: Artifact,
        *,
        append: bool = False,
        last_chunk: bool = True,
        metadata: JsonObject | None = None,
    ) -> None:
        """Add or extend an artifact; it is persisted when `last_chunk` is True."""
        if self.replaying:
            return
        self._task().add_artifact(artifact, append=append, last_chunk=last_chunk, metadata=metadata)

    async def ask(
        self, question: Message, *, state: TaskState = TaskState.INPUT_REQUIRED
    ) -> Message:
        """Park the task in `state` with `question` and wait for the caller's answer."""
        if self._asked < len(self._answers):
            answer = self._answers[self._asked]
            self._asked += 1
            return answer
        answer = await self._task().park(question, state)
        self._asked += 1
        self._answers.append(answer)
        return answer

    async def reply(self, message: Message) -> None:
        """Answer with `message`.

        While `can_reply`, that is the whole answer: the request gets `message` and no task
        is created. Once the task exists, it completes with `message` as its final status
        message.
        """
        if self._opening is not None and self.can_reply:
            self._opening.reply(message)
            return
        await self.status(TaskState.COMPLETED, message)

    # -- for the Execution that runs the skill ---------------------------------------------

    @property
    def opening(self) -> Opening | None:
        return self._opening

    def when_open(self, attach: Callable[[LiveTask], None]) -> None:
        """Call `attach` with the task when it exists (at once if it does)."""
        self._attach = attach
        if self._live is not None:
            attach(self._live)

    def task(self) -> LiveTask | None:
        """The task; created now if the skill has not decided (returning without a reply
        makes a task); None when the answer was a Message, or the task was refused (the
        request got that error)."""
        if self.can_reply:
            try:
                self._task()
            except SkillError:
                return None
        return self._live

    def _task(self) -> LiveTask:
        live = self._live
        if live is not None:
            return live
        opening = self._undecided()
        if opening.decided:
            raise SkillError(
                f"skill '{opening.skill}' has already answered without a task; there is no "
                "task to change"
            )
        try:
            live = opening.open()
        except Exception as exc:
            raise SkillError(f"skill '{opening.skill}' could not create its task: {exc}") from exc
        self._live = live
        if self._attach is not None:
            self._attach(live)
        live.update_status(TaskState.WORKING)  # the skill is already at work
        return live

    def _undecided(self) -> Opening:
        assert self._opening is not None, "a run has a task or an opening"
        return self._opening
