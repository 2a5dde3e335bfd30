"""A task held in memory while it can still change: its state, subscribers and skill run.

Only the live task writes its fields: the task manager, the skill's run, the group commit
and the replication each call a verb of it (apply a change, park for input, answer, cancel,
release, ...), so what a change touches is read in one place."""

from __future__ import annotations

import anyio

from hub.protocol import (
    Artifact,
    JsonObject,
    Message,
    Role,
    StreamResponse,
    Task,
    TaskState,
    agent_message,
)
from hub.store import TaskRecord
from hub.tasks.change import add_message, apply_artifact, apply_status
from hub.tasks.commit import Commit, GroupCommit
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

    A change is applied synchronously, so a check and the change it guards never have an
    await between them; it is then queued for the group commit, which writes it and only
    then publishes it (`written`). The verbs a running skill uses (`update_status`,
    `add_artifact`, `fail`, `park`) are the narrow surface of a2a-python's `TaskUpdater`.

    Args:
        record: the task as read from the store, or as just created.
        commits: where its changes are queued to be written; None for a task whose one
            change its caller writes itself (restart recovery) or that only follows the
            event log (a task running on another replica).
        stored: the store has the task already; False for a new task, which is queued
            for its first write at once.
    """

    __slots__ = (
        "_answer",
        "_broadcast",
        "_commit",
        "_commits",
        "_durable",
        "_failure",
        "_owner",
        "_released",
        "_scope",
        "_seq",
        "_settled",
        "_skill",
        "_stored",
        "_task",
        "_trace_id",
        "_unpublished",
        "_waiting",
    )

    def __init__(
        self,
        record: TaskRecord,
        *,
        commits: GroupCommit[LiveTask] | None = None,
        stored: bool = True,
    ) -> None:
        self._task = record.task
        self._skill = record.skill
        self._owner = record.owner
        self._trace_id = record.trace_id
        self._commits = commits
        self._broadcast = Broadcast()
        self._settled = anyio.Event()
        self._seq = record.version
        """How many changes have been applied (each update carries its number)."""
        self._durable = record.version
        self._stored = stored
        self._released = False
        self._unpublished: list[Update] = []
        """Applied changes waiting for the commit that makes them durable."""
        self._commit: Commit | None = None
        """The batch that will write (or wrote) the latest change."""
        self._failure: Exception | None = None
        """Set when a change could not be saved; waiters raise it."""
        self._scope: anyio.CancelScope | None = None
        """The cancel scope of the skill's run while it runs."""
        self._waiting: anyio.Event | None = None
        """Set by the caller's answer while the skill is parked for input (`park`)."""
        self._answer: Message | None = None
        if self.state.is_terminal or self.state.is_interrupted:
            self._settled.set()
        if not stored and commits is not None:
            self._commit = commits.mark(self)  # a new task: its first write

    # -- what others read ------------------------------------------------------------------

    @property
    def task(self) -> Task:
        """The task itself, not a copy (see `snapshot` for one)."""
        return self._task

    @property
    def task_id(self) -> str:
        return self._task.id

    @property
    def context_id(self) -> str:
        return self._task.context_id or ""

    @property
    def state(self) -> TaskState:
        return self._task.status.state

    @property
    def skill(self) -> str:
        return self._skill

    @property
    def owner(self) -> str:
        return self._owner

    @property
    def seq(self) -> int:
        """The number of the last change applied (or read from the event log)."""
        return self._seq

    @property
    def durable(self) -> int:
        """The number of the last change written (a shared store checks it on the next
        write)."""
        return self._durable

    @property
    def stored(self) -> bool:
        """The store has the task (it was read from there, or written once): a change that
        could not be written is written again, rather than the task dropped."""
        return self._stored

    @property
    def released(self) -> bool:
        """This copy takes no more changes: another replica wrote the task since (a shared
        store), or its first write failed and the task was dropped."""
        return self._released

    @property
    def idle(self) -> bool:
        """Nothing of the task waits to be written, and no write of it is under way (a task
        whose first write is still coming is not in the store yet)."""
        commit = self._commit
        return commit is None or (commit.done.is_set() and not self._unpublished)

    @property
    def settled(self) -> bool:
        """The task is durably terminal or interrupted (or given up)."""
        return self._settled.is_set()

    @property
    def subscriber_count(self) -> int:
        return self._broadcast.subscriber_count

    def record(self) -> TaskRecord:
        return TaskRecord(
            task=self._task,
            skill=self._skill,
            owner=self._owner,
            version=self._seq,
            trace_id=self._trace_id,
        )

    def snapshot(self, *, history_length: int | None = None) -> Task:
        """A copy of the task as it is now, for a response."""
        return snapshot(self._task, history_length=history_length)

    def subscribe(self) -> TaskStream:
        """A stream that starts with the task as it is now, then every later change.

        Changes already applied are in the snapshot, so the stream skips their updates when
        they are published.
        """
        first = Update(
            StreamResponse(task=snapshot(self._task)), closes_stream=self.state.is_terminal
        )
        return self._broadcast.subscribe(first, after=self._seq)

    # -- waiting -----------------------------------------------------------------------------

    async def wait_durable(self) -> None:
        """Wait until every change applied so far is written (a change of a task the store
        has is written again after a failure: this waits for that too).

        Raises:
            StoreError: the task's first write failed (it was dropped), or its changes were
                given up at shutdown.
        """
        while True:
            commit = self._commit
            if commit is None:
                return
            await commit.done.wait()
            if commit.failure is None:
                return
            if self._failure is not None or self._commit is commit:
                raise commit.failure
            # Queued again: wait for the batch that writes it.

    async def wait_settled(self) -> None:
        """Wait until the task is durably terminal or interrupted.

        Raises:
            StoreError: its changes could not be saved (see `fail_commit`).
        """
        await self._settled.wait()
        if self._failure is not None:
            raise self._failure

    # -- changes: what a running skill and the task manager do -----------------------------

    def update_status(
        self,
        state: TaskState,
        message: Message | None = None,
        metadata: JsonObject | None = None,
        *,
        history: bool = True,
    ) -> None:
        """Move the task to `state` (checked), recording an agent status message in history
        (unless `history` is False: the status alone carries it then).

        Raises:
            InvalidTransitionError: the state machine forbids the change.
        """
        update = apply_status(self._task, state, message, metadata, history=history)
        # `settled` is set once this change is durable; a task that moves on gets a fresh
        # event for the next waiter.
        if self._settled.is_set() and not (state.is_terminal or state.is_interrupted):
            self._settled = anyio.Event()
        self._queue(update)

    def add_artifact(
        self,
        artifact: Artifact,
        *,
        append: bool = False,
        last_chunk: bool = True,
        metadata: JsonObject | None = None,
    ) -> None:
        """Add an artifact, replace one with the same id, or append parts to it.

        Raises:
            InvalidTransitionError: the task is already terminal.
        """
        update = apply_artifact(
            self._task, artifact, append=append, last_chunk=last_chunk, metadata=metadata
        )
        self._queue(update)

    def fail(self, reason: str) -> None:
        """End the task as failed with `reason` as its status message, unless it has ended."""
        if not self.state.is_terminal:
            self.update_status(TaskState.FAILED, agent_message(reason))

    async def park(self, question: Message, state: TaskState) -> Message:
        """Park the task in `state` with `question`; return the caller's answer."""
        arrived = anyio.Event()
        self._waiting = arrived
        try:
            self.update_status(state, question)
            await arrived.wait()
        finally:
            self._waiting = None
        answer, self._answer = self._answer, None
        assert answer is not None
        return answer

    def answer(self, message: Message) -> bool:
        """Take the caller's message to a parked task: into history, the task WORKING, and
        to the skill waiting in `park`. False when no run of the skill is there to take it
        (its run ended while parked, or the hub restarted): a new run must start, which
        replays the answers in history."""
        owned = add_message(self._task, message)
        self.update_status(TaskState.WORKING)
        if self._waiting is not None:
            self._answer = owned
            self._waiting.set()
            return True
        return self._scope is not None

    def cancel(self) -> bool:
        """End the task as canceled and stop its skill; True when the skill ran here (its
        end settles its partner children).

        Raises:
            InvalidTransitionError: the task is already terminal.
        """
        self.update_status(TaskState.CANCELED)
        scope = self._scope
        if scope is None:
            return False
        scope.cancel()
        return True

    # -- the skill's run -------------------------------------------------------------------

    def run_in(self, scope: anyio.CancelScope) -> None:
        """The skill runs in `scope` from now on: a cancel or a release stops it."""
        self._scope = scope

    def run_ended(self) -> None:
        self._scope = None

    # -- what the group commit and the replication do --------------------------------------

    def take_unpublished(self) -> list[Update]:
        updates, self._unpublished = self._unpublished, []
        return updates

    def written(self, version: int, updates: list[Update]) -> None:
        self._durable = version
        self._stored = True
        if not self._released:  # else the event log brings them (the replication)
            self._publish(updates)

    def requeue(self, updates: list[Update], commit: Commit) -> None:
        # In front of what was applied meanwhile: their numbers follow these.
        self._unpublished[:0] = updates
        self._commit = commit

    def fail_commit(self, failure: Exception) -> None:
        """Give up the task's changes (its first write failed, or shutdown came first): its
        request gets `failure`, its skill stops, and it takes no more changes, so nothing
        of it is written later behind its caller's back."""
        self._released = True
        self._failure = failure
        self._unpublished = []
        self._settled.set()
        self._broadcast.close_all()
        if self._scope is not None:
            self._scope.cancel()

    def release(self) -> bool:
        """Let go of the task, which another replica has written: stop its skill and take
        no more changes, back at what was written here last. False when already let go."""
        if self._released:
            return False
        self._released = True
        self._unpublished = []
        self._seq = self._durable
        if self._scope is not None:
            self._scope.cancel()
        self._waiting = None
        return True

    def catch_up(self, updates: list[Update], *, closing: bool, task: Task | None) -> None:
        """Publish what the event log holds after this copy (a task written elsewhere);
        `closing`: one of them closes the streams, and `task` is the task as it ended."""
        if task is not None:  # waiters read the task itself once it settles
            self._task = task
        self._seq = updates[-1].seq
        self._publish(updates)
        if closing:
            self._settled.set()
            self._broadcast.close_all()

    def close_streams(self) -> None:
        self._broadcast.close_all()

    # -- internals -------------------------------------------------------------------------

    def _queue(self, update: Update) -> None:
        """Number an applied change and hold it until its commit; it is published once the
        commit that carries it is durable, so subscribers see changes in the order they
        were applied."""
        commits = self._commits
        if self._released or commits is None:
            return  # another replica wrote the task: this copy changes nothing more
        self._seq += 1
        update.seq = self._seq
        self._unpublished.append(update)
        self._commit = commits.mark(self)

    def _publish(self, updates: list[Update]) -> None:
        """Send durable updates to every subscriber; release waiters at a settled state."""
        for update in updates:
            self._broadcast.publish(update)
        settles = any(update.closes_stream for update in updates)
        if settles and (self.state.is_terminal or self.state.is_interrupted):
            self._settled.set()

    def answers(self) -> list[Message]:
        """User messages after the first: each answered one `ask` of the skill, in order."""
        history = self._task.history or []
        return [message for message in history[1:] if message.role is Role.USER]
