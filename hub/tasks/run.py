"""What a running skill sees of its task (`TaskRun`), and what runs a skill (`TaskExecutor`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from hub.protocol import Artifact, JsonObject, Message, SendMessageRequest, TaskState

if TYPE_CHECKING:
    from hub.tasks.execution import Execution
    from hub.tasks.live import LiveTask

__all__ = ["TaskExecutor", "TaskRun"]


class TaskExecutor(Protocol):
    """Runs one local skill. Implemented by the skills layer for each registered skill."""

    @property
    def skill_id(self) -> str: ...

    @property
    def direct_reply(self) -> bool:
        """True when the skill answers with a Message and no task is created."""
        ...

    async def run(self, run: TaskRun) -> None:
        """Work on a task until it is terminal or interrupted; may return early to park it.

        The executor sets WORKING when the work starts (`run.status(TaskState.WORKING)`);
        a task still SUBMITTED when `run` returns is completed by the manager.
        """

    async def reply(self, request: SendMessageRequest, context_id: str) -> Message:
        """Answer a request with one Message (only called when `direct_reply` is True)."""
        ...


class TaskRun:
    """The handle a skill uses to change its task. Every change is persisted, then published.

    After a restart, a parked task's skill is run again from the start with the answers it
    already received: while those are replayed (`replaying` is True) the skill's progress and
    artifacts are not emitted again.
    """

    __slots__ = ("_answers", "_asked", "_execution", "_live", "metadata")

    def __init__(
        self, execution: Execution, live: LiveTask, metadata: JsonObject | None = None
    ) -> None:
        self._execution = execution
        self._live = live
        self._answers = live.answers()
        self._asked = 0
        self.metadata: JsonObject = metadata or {}
        """The SendMessage request's metadata."""

    @property
    def task_id(self) -> str:
        return self._live.task_id

    @property
    def context_id(self) -> str:
        return self._live.context_id

    @property
    def message(self) -> Message:
        """The message that started the task."""
        history = self._live.task.history
        assert history, "a live task always has its first message"
        return history[0]

    @property
    def history(self) -> list[Message]:
        return list(self._live.task.history or [])

    @property
    def state(self) -> TaskState:
        return self._live.state

    @property
    def replaying(self) -> bool:
        return self._asked < len(self._answers)

    async def status(
        self,
        state: TaskState,
        message: Message | None = None,
        *,
        metadata: JsonObject | None = None,
    ) -> None:
        """Set the task's state (WORKING for progress, or a terminal state to end it)."""
        if self.replaying and not state.is_terminal:
            return
        await self._execution.change_status(self._live, state, message, metadata=metadata)

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
        await self._execution.change_artifact(
            self._live, artifact, append=append, last_chunk=last_chunk, metadata=metadata
        )

    async def ask(
        self, question: Message, *, state: TaskState = TaskState.INPUT_REQUIRED
    ) -> Message:
        """Park the task in `state` with `question` and wait for the caller's answer."""
        if self._asked < len(self._answers):
            answer = self._answers[self._asked]
            self._asked += 1
            return answer
        answer = await self._execution.wait_for_answer(self._live, question, state)
        self._asked += 1
        self._answers.append(answer)
        return answer
