"""A task held in memory while it can still change: its state, subscribers and skill run."""

from __future__ import annotations

import anyio

from hub.errors import InvalidTransitionError
from hub.protocol import (
    Artifact,
    JsonObject,
    Message,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    append_chunk,
    state_name,
    utc_now,
)
from hub.store import TaskRecord
from hub.tasks.commit import Commit
from hub.tasks.state import check_transition
from hub.tasks.stream import Broadcast, TaskStream, Update

__all__ = ["LiveTask", "snapshot"]


def snapshot(task: Task, *, history_length: int | None = None, artifacts: bool = True) -> Task:
    """A copy of `task` for a response: history cut to the last `history_length` messages
    (0 leaves it out), artifacts left out when `artifacts` is False."""
    history = task.history
    if history is not None:
        if history_length == 0 or not history:
            history = None
        elif history_length is not None:
            history = history[-history_length:]
        else:
            history = list(history)
    kept = (list(task.artifacts) or None) if (artifacts and task.artifacts) else None
    return task.model_copy(update={"history": history, "artifacts": kept})


class LiveTask:
    """One task that is not terminal, with the machinery to change it and watch it.

    State changes are applied synchronously (`apply_*`), so a check and the change it guards
    never have an await between them; the manager persists and publishes after each one.
    """

    __slots__ = (
        "answer",
        "broadcast",
        "commit",
        "durable",
        "failure",
        "owner",
        "released",
        "scope",
        "seq",
        "settled",
        "skill",
        "stored",
        "task",
        "unpublished",
        "waiting_for_answer",
    )

    def __init__(self, record: TaskRecord, *, stored: bool = True) -> None:
        self.task = record.task
        self.skill = record.skill
        self.owner = record.owner
        self.broadcast = Broadcast()
        self.settled = anyio.Event()
        self.seq = record.version
        """How many changes have been applied (each update carries its number)."""
        self.durable = record.version
        """The number of the last change written (a shared store checks it on the next
        write)."""
        self.stored = stored
        """The store has the task (it was read from there, or written once): a change that
        could not be written is written again, rather than the task dropped."""
        self.released = False
        """This copy takes no more changes: another replica wrote the task since (a shared
        store), or its first write failed and the task was dropped."""
        self.unpublished: list[Update] = []
        """Applied changes waiting for the commit that makes them durable."""
        self.commit: Commit | None = None
        """The batch that will write (or wrote) the latest change."""
        self.failure: Exception | None = None
        """Set when a change could not be saved; waiters raise it."""
        self.scope: anyio.CancelScope | None = None
        self.waiting_for_answer: anyio.Event | None = None
        self.answer: Message | None = None
        if self.state.is_terminal or self.state.is_interrupted:
            self.settled.set()

    @property
    def task_id(self) -> str:
        return self.task.id

    @property
    def context_id(self) -> str:
        return self.task.context_id or ""

    @property
    def state(self) -> TaskState:
        return self.task.status.state

    def record(self) -> TaskRecord:
        return TaskRecord(task=self.task, skill=self.skill, owner=self.owner, version=self.seq)

    def subscribe(self) -> TaskStream:
        """A stream that starts with the task as it is now, then every later change.

        Changes already applied are in the snapshot, so the stream skips their updates when
        they are published.
        """
        first = Update(
            StreamResponse(task=snapshot(self.task)), closes_stream=self.state.is_terminal
        )
        return self.broadcast.subscribe(first, after=self.seq)

    def queue(self, update: Update) -> Update:
        """Number an applied change and hold it until its commit."""
        self.seq += 1
        update.seq = self.seq
        self.unpublished.append(update)
        return update

    def take_unpublished(self) -> list[Update]:
        updates, self.unpublished = self.unpublished, []
        return updates

    def publish(self, updates: list[Update]) -> None:
        """Send durable updates to every subscriber; release waiters at a settled state."""
        for update in updates:
            self.broadcast.publish(update)
        settles = any(update.closes_stream for update in updates)
        if settles and (self.state.is_terminal or self.state.is_interrupted):
            self.settled.set()

    def apply_status(
        self,
        state: TaskState,
        message: Message | None = None,
        metadata: JsonObject | None = None,
        *,
        history: bool = True,
    ) -> Update:
        """Move the task to `state` (checked), recording an agent status message in history
        (unless `history` is False: the status alone carries it then).

        Raises:
            InvalidTransitionError: the state machine forbids the change.
        """
        check_transition(self.state, state)
        if message is not None:
            message = self._own(message)
        if message is not None and history:
            if self.task.history is None:
                self.task.history = []
            self.task.history.append(message)
        status = TaskStatus(state=state, message=message, timestamp=utc_now())
        self.task.status = status
        # `settled` is set by the manager once this change is durable; a task that moves on
        # gets a fresh event for the next waiter.
        if self.settled.is_set() and not (state.is_terminal or state.is_interrupted):
            self.settled = anyio.Event()
        task_id, context_id = self.task_id, self.context_id

        def event() -> StreamResponse:
            update = TaskStatusUpdateEvent(
                task_id=task_id, context_id=context_id, status=status, metadata=metadata
            )
            return StreamResponse(status_update=update)

        return Update(event, closes_stream=state.is_terminal or state.is_interrupted)

    def apply_artifact(
        self,
        artifact: Artifact,
        *,
        append: bool = False,
        last_chunk: bool = True,
        metadata: JsonObject | None = None,
    ) -> Update:
        """Add an artifact, replace one with the same id, or append parts to it (text
        joined into the text part it continues; the update published is the chunk as sent).

        Raises:
            InvalidTransitionError: the task is already terminal.
        """
        if self.state.is_terminal:
            raise InvalidTransitionError(
                f"task is {state_name(self.state)}, a terminal state; it takes no more artifacts"
            )
        artifacts = self.task.artifacts
        if artifacts is None:
            artifacts = self.task.artifacts = []
        existing = next(
            (i for i, known in enumerate(artifacts) if known.artifact_id == artifact.artifact_id),
            None,
        )
        if existing is None:
            artifacts.append(artifact)
        elif append:
            artifacts[existing] = append_chunk(artifacts[existing], artifact)
        else:
            artifacts[existing] = artifact
        task_id, context_id = self.task_id, self.context_id

        def event() -> StreamResponse:
            update = TaskArtifactUpdateEvent(
                task_id=task_id,
                context_id=context_id,
                artifact=artifact,
                append=append,
                last_chunk=last_chunk,
                metadata=metadata,
            )
            return StreamResponse(artifact_update=update)

        return Update(event)

    def add_user_message(self, message: Message) -> None:
        if self.task.history is None:
            self.task.history = []
        self.task.history.append(self._own(message))

    def answers(self) -> list[Message]:
        """User messages after the first: each answered one `ask` of the skill, in order."""
        history = self.task.history or []
        return [message for message in history[1:] if message.role is Role.USER]

    def _own(self, message: Message) -> Message:
        if message.task_id == self.task_id and message.context_id == self.context_id:
            return message
        return message.model_copy(update={"task_id": self.task_id, "context_id": self.context_id})
