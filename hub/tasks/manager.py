"""The TaskManager: creates, continues, cancels and watches tasks, and runs their skills."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

from hub.config import LimitSettings
from hub.errors import (
    StoreError,
    StoreOutageError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from hub.protocol import (
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    StreamResponse,
    Task,
    state_name,
    utc_now,
)
from hub.store import SharedTaskRecords, TaskManagerStore, TaskQuery, TaskRecord
from hub.tasks.commit import GroupCommit
from hub.tasks.delivery import Delivery
from hub.tasks.execution import Execution
from hub.tasks.kill import OPEN_STATES, KillReport, KillTarget
from hub.tasks.ledger import (
    AFTER_TAKEOVER,
    WITH_CANCELED_PARENT,
    ChildControl,
    DelegationLedger,
)
from hub.tasks.listing import INTERRUPTED_BY_RESTART, list_tasks, recover_interrupted
from hub.tasks.live import LiveTask, snapshot
from hub.tasks.live_set import LiveSet
from hub.tasks.observer import TaskHook, TaskObserver, notify_observers
from hub.tasks.replication import INTERRUPTED_REPLICA_STOPPED, Replication
from hub.tasks.resumption import ResumeScope, Resumption
from hub.tasks.run import TaskExecutor
from hub.tasks.stream import Broadcast, TaskStream, Update

__all__ = ["INTERRUPTED_BY_RESTART", "TaskManager"]

log = logging.getLogger("hub.tasks")

# How long shutdown keeps trying to write the last changes (the interrupted tasks' ends)
# while the store is out; past it, a shared store's leases hand them to another replica,
# and a single hub's next start marks them failed.
_SHUTDOWN_WRITES = 3.0


class TaskManager:
    """Owns every live task: applies events, persists them, then publishes them.

    Use as an async context manager: entering recovers tasks a previous run left behind
    (resuming those of resumable skills, failing the others) and starts the task group that
    runs skills and evicts expired tasks; leaving cancels running skills and records their
    tasks as interrupted, except a resumable skill's, left for the next start to resume.

    Args:
        store: where every task change is written before it is published.
        executors: the local skills by id.
        default_skill: the skill a message goes to when it names none.
        limits: live-task, context and part limits, and the TTL of terminal tasks.
        children: reaches the partner tasks skills start (the delegation ledger's
            `ChildControl`), to cancel those a task leaves behind and to reconcile them after
            a restart; None only records them.
        admit_skill: called with the skill a message is about to reach (a new task's, a
            reply skill's, or a parked task's), in the request's call scope; it raises a
            `ProtocolError` to refuse the message (the server's extension requirements).
        resume_scope: the call scope a resumable skill's task runs in when it is resumed
            after a restart or a takeover (see `hub.tasks.resumption`): its owner's, from
            the auth settings; None when the owner no longer has a credential (the task is
            failed). Left out, a resumed task reaches no partner.
    """

    def __init__(
        self,
        *,
        store: TaskManagerStore,
        executors: Mapping[str, TaskExecutor],
        default_skill: str,
        limits: LimitSettings,
        children: ChildControl | None = None,
        admit_skill: Callable[[str], None] | None = None,
        resume_scope: ResumeScope | None = None,
    ) -> None:
        if default_skill not in executors:
            known = ", ".join(sorted(executors)) or "none"
            raise ValueError(f"default skill {default_skill!r} is not registered (known: {known})")
        self._store = store
        self.ledger = DelegationLedger(store, children)
        self._execution = Execution(executors, ledger=self.ledger)
        self._resumption = Resumption(
            execution=self._execution, ledger=self.ledger, scope=resume_scope
        )
        self._limits = limits
        self._live = LiveSet(limits)
        self._group: TaskGroup | None = None
        self._replication = (
            Replication(store, live=self._live, take_over=self._take_over)
            if isinstance(store, SharedTaskRecords)
            else None
        )
        self._commits: GroupCommit[LiveTask] = GroupCommit(
            store,
            on_durable=self._after_commit,
            on_failure=self._commit_failed,
            on_lost=self._replication.release if self._replication is not None else None,
        )
        self._delivery = Delivery(
            execution=self._execution,
            live=self._live,
            commits=self._commits,
            limits=limits,
            default_skill=default_skill,
            admit_skill=admit_skill,
            materialize=self._materialize,
        )
        self._observers: list[TaskObserver] = []

    def observe(self, observer: TaskObserver) -> None:
        """Call `observer` after every commit that changed a task (see `TaskObserver`), and
        for each task that restart recovery marks failed."""
        self._observers.append(observer)

    def live_counts(self) -> tuple[int, int]:
        """(tasks held in memory, those among them parked for input) now."""
        parked = sum(1 for live in self._live if live.state.is_interrupted)
        return len(self._live), parked

    # -- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> TaskManager:
        resumed: list[TaskRecord] = []
        if self._replication is None:
            refusal = functools.partial(
                self._resumption.refusal, interrupted=INTERRUPTED_BY_RESTART
            )
            resumed = await recover_interrupted(self._store, self._observers, refusal=refusal)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._execution.bind(self._group)
        self._group.start_soon(self._commits.run)
        self._group.start_soon(self._evict_expired)
        self._group.start_soon(self.ledger.run)
        if self._replication is None:
            # A resumed task's children are its skill's again (`DelegationLedger.adopt`).
            leave = frozenset(record.task.id for record in resumed)
            self._group.start_soon(functools.partial(self.ledger.reconcile, leave=leave))
            for record in resumed:
                self._group.start_soon(self._resume, record)
        else:
            # Other replicas' running tasks are theirs: only tasks whose holder's lease
            # expired are taken over (with their children), and only the children of ended
            # tasks are settled at start.
            self._group.start_soon(functools.partial(self.ledger.reconcile, ended_only=True))
            self._group.start_soon(self._replication.run)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        self._execution.bind(None)
        if group is not None:
            group.cancel_scope.cancel()
            # The block's own exception is not the group's: it propagates unchanged rather
            # than inside an exception group.
            await group.__aexit__(None, None, None)
        with anyio.CancelScope(shield=True):
            for live in self._live:
                # A resumable skill's task is left running in the store: the next start
                # (with replicas, another replica once the lease expires) resumes it.
                running = not (live.state.is_terminal or live.state.is_interrupted)
                if running and not self._execution.resumable(live.skill):
                    live.fail(INTERRUPTED_BY_RESTART)
            await self._commits.close(within=_SHUTDOWN_WRITES)
            await self.ledger.flush()
            for live in self._live:
                live.close_streams()

    async def _evict_expired(self) -> None:
        while True:
            await anyio.sleep(min(self._limits.task_ttl / 4, 60.0))
            try:
                await self.evict_expired()
            except StoreOutageError:
                pass  # the store logs its outage; tried again next time
            except StoreError as exc:
                # A store that is down for a while is tried again next time; it must not
                # stop the task manager.
                log.warning("could not evict expired tasks: %s", exc)

    async def evict_expired(self, *, now: datetime | None = None) -> int:
        """Delete terminal tasks whose last change is older than `limits.task_ttl`, and the
        skills' state that has expired by `now`.

        Runs by itself every quarter TTL (at most every minute); returns how many tasks went.
        """
        now = now or utc_now()
        cutoff = now - timedelta(seconds=self._limits.task_ttl)
        removed = await self._store.delete_terminal_before(cutoff)
        if removed:
            log.info("evicted %d expired task(s)", removed)
        dropped = await self._store.drop_expired_states(now)
        if dropped:
            log.info("dropped %d expired skill state value(s)", dropped)
        return removed

    # -- operations ------------------------------------------------------------------------

    async def send(
        self, request: SendMessageRequest, *, owner: str = "", on_task: TaskHook | None = None
    ) -> Task | Message:
        """SendMessage: returns the Task when it is terminal or interrupted (or at once with
        `returnImmediately`), or the skill's direct Message.

        `on_task` is called with the task the message goes to before its change is committed
        (see `TaskHook`); a skill that answers with a direct Message has no task to give it.
        """
        accepted = await self._delivery.accept(request, owner, subscribe=False, on_task=on_task)
        if isinstance(accepted, Message):
            return accepted
        live, _ = accepted
        configuration = request.configuration
        history_length = configuration.history_length if configuration else None
        if configuration is not None and configuration.return_immediately:
            # Taken before the wait, so the answer never shows more than what is durable.
            answer = live.snapshot(history_length=history_length)
            await live.wait_durable()
            return answer
        await live.wait_settled()
        return live.snapshot(history_length=history_length)

    async def stream(
        self, request: SendMessageRequest, *, owner: str = "", on_task: TaskHook | None = None
    ) -> TaskStream:
        """SendStreamingMessage: a stream that starts with the Task (or the one Message);
        `on_task` as for `send`."""
        accepted = await self._delivery.accept(request, owner, subscribe=True, on_task=on_task)
        if isinstance(accepted, Message):
            return Broadcast.single(Update(StreamResponse(message=accepted), closes_stream=True))
        live, stream = accepted
        assert stream is not None
        await self._durable_or_close(live, stream)
        return stream

    async def get(
        self, task_id: str, *, history_length: int | None = None, owner: str = ""
    ) -> Task:
        live = self._live.get(task_id)
        if live is not None and _visible(live.owner, owner):
            return live.snapshot(history_length=history_length)
        record = await self._stored(task_id, owner)
        return snapshot(record.task, history_length=history_length)

    async def list(
        self,
        request: ListTasksRequest,
        *,
        owner: str = "",
        skill: str | None = None,
        partner: str | None = None,
        text: str | None = None,
    ) -> ListTasksResponse:
        """ListTasks over the store (`owner` "" sees every task); `skill`, `partner` and
        `text` are the console's filters (`hub.tasks.listing.list_tasks`)."""
        return await list_tasks(
            self._store, request, owner=owner, skill=skill, partner=partner, text=text
        )

    async def cancel(self, task_id: str, *, owner: str = "") -> Task:
        """CancelTask: ends the task as canceled and stops its skill.

        Raises:
            TaskNotFoundError: no such task (or not the caller's).
            TaskNotCancelableError: the task is already terminal.
        """
        while True:
            live = await self._materialize(task_id, owner)
            if live.state.is_terminal:
                raise _not_cancelable(live.task)
            running_here = live.cancel()  # if so, the skill's end settles its children
            if (
                not running_here
                and self._replication is None
                and self._group is not None
                and (self.ledger.live_children(task_id) or self.ledger.live_tree(task_id))
            ):
                self._group.start_soon(self.ledger.settle, task_id)  # a parked task's children
            answer = live.snapshot()
            await live.wait_durable()
            if not live.released:
                if self._replication is not None and not running_here and self._group:
                    # It may have run on another replica: its children are in the ledger.
                    reconcile = functools.partial(
                        self.ledger.reconcile, parent_id=task_id, notes=WITH_CANCELED_PARENT
                    )
                    self._group.start_soon(reconcile)
                return answer
            # Another replica moved the task first (a shared store): cancel what it is now.

    async def kill(self, target: KillTarget) -> KillReport:
        """End every task of `target` that is not terminal, at once, as CancelTask ends one
        (the kill switch, `hub.tasks.kill`); the partner tasks they started are canceled by
        the delegation ledger with them. A task that ends meanwhile is left as it ended."""
        found = await self._open_tasks(target)
        partner_tasks = sum(len(self.ledger.live_children(task_id)) for task_id in found)
        canceled: set[str] = set()

        async def end(task_id: str) -> None:
            try:
                await self.cancel(task_id)
            except (TaskNotCancelableError, TaskNotFoundError):
                return  # it ended (or expired) between the search and the cancel
            canceled.add(task_id)

        async with anyio.create_task_group() as group:
            for task_id in found:
                group.start_soon(end, task_id)
        return KillReport(tasks=tuple(sorted(canceled)), partner_tasks=partner_tasks)

    async def _open_tasks(self, target: KillTarget) -> tuple[str, ...]:
        """The ids of `target`'s tasks that are not terminal: live here, or in the store
        (parked, or running on another replica)."""
        found = {
            live.task_id
            for live in self._live
            if not live.state.is_terminal
            and (target.context_id is None or live.context_id == target.context_id)
            and (target.caller is None or live.owner == target.caller)
        }
        for state in OPEN_STATES:
            cursor: str | None = None
            while True:
                page = await self._store.list(
                    TaskQuery(
                        owner=target.caller,
                        context_id=target.context_id,
                        state=state,
                        page_size=100,
                        cursor=cursor,
                    )
                )
                found.update(record.task.id for record in page.records)
                if not page.next_cursor:
                    break
                cursor = page.next_cursor
        return tuple(sorted(found))

    async def subscribe(self, task_id: str, *, owner: str = "") -> TaskStream:
        """SubscribeToTask: a stream starting with the task snapshot, ending when it is terminal.

        Raises:
            UnsupportedOperationError: the task is already terminal.
        """
        if self._replication is not None and self._live.get(task_id) is None:
            # Not run here: followed through the shared store's event log.
            record = await self._stored(task_id, owner)
            if not record.task.status.state.is_terminal:
                return self._replication.subscribe(record)
        live = await self._materialize(task_id, owner)
        if live.state.is_terminal:
            raise UnsupportedOperationError(
                f"task {task_id} is {state_name(live.state)}; a terminal task has no updates to "
                "subscribe to (use GetTask)",
                metadata={"taskId": task_id},
            )
        stream = live.subscribe()
        await self._durable_or_close(live, stream)
        return stream

    # -- internals -------------------------------------------------------------------------

    async def _resume(self, record: TaskRecord) -> None:
        """Run again the skill of a task the last run left running (a resumable one)."""
        live = LiveTask(record, commits=self._commits)
        self._live.add(live)
        self._resumption.mark(live, "restart")
        await self._resumption.start(live)

    async def _take_over(self, record: TaskRecord) -> None:
        """Take a running task whose replica's lease expired: resume it here when its skill
        can, else fail it as a restart would have. The first replica to write it wins; a
        failed one's partner children are reconciled by the winner."""
        refusal = self._resumption.refusal(record, INTERRUPTED_REPLICA_STOPPED)
        live = LiveTask(record, commits=self._commits)
        self._live.add(live)
        if refusal is None:
            self._resumption.mark(live, "takeover")
        else:
            live.fail(refusal)
        try:
            await live.wait_durable()
        except StoreError:
            return
        if live.released:
            return
        if refusal is None:
            await self._resumption.start(live)
            return
        log.warning("task %s: its replica stopped; failed it", record.task.id)
        await self.ledger.reconcile(parent_id=record.task.id, notes=AFTER_TAKEOVER)

    def _after_commit(self, live: LiveTask) -> None:
        if self._observers:
            notify_observers(self._observers, live.task)
        if live.state.is_terminal:
            self._live.discard(live)

    def _commit_failed(self, live: LiveTask, failure: Exception) -> None:
        live.fail_commit(failure)
        self._live.discard(live)

    async def _durable_or_close(self, live: LiveTask, stream: TaskStream) -> None:
        """A stream's first event is sent only once what it shows is durable."""
        try:
            await live.wait_durable()
        except BaseException:
            await stream.aclose()
            raise

    async def _stored(self, task_id: str, owner: str) -> TaskRecord:
        record = await self._store.get(task_id)
        if record is None or not _visible(record.owner, owner):
            raise TaskNotFoundError(f"task {task_id} was not found", metadata={"taskId": task_id})
        return record

    async def _materialize(self, task_id: str, owner: str) -> LiveTask:
        """The live task for `task_id`, loading a parked or finished one from the store."""
        live = self._live.get(task_id)
        if live is not None:
            if not _visible(live.owner, owner):
                raise TaskNotFoundError(
                    f"task {task_id} was not found", metadata={"taskId": task_id}
                )
            return live
        record = await self._stored(task_id, owner)
        live = self._live.get(task_id)  # another caller may have loaded it meanwhile
        if live is not None:
            return live
        live = LiveTask(record, commits=self._commits)
        if not live.state.is_terminal:
            self._live.add(live)
        return live


def _visible(record_owner: str, owner: str) -> bool:
    return not owner or record_owner == owner


def _not_cancelable(task: Task) -> TaskNotCancelableError:
    return TaskNotCancelableError(
        f"task {task.id} is {state_name(task.status.state)}; a terminal task cannot be canceled",
        metadata={"taskId": task.id},
    )
