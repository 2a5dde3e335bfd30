"""Group commit: changes are written in batches, then published in the order they happened.

A change to a task is applied in memory at once and queued. The writer loop writes every
changed task once per batch, in one transaction, and only then publishes that task's queued
updates, in order. So nothing reaches a subscriber, a waiter or a caller before it is
durable, a skill never waits on the disk to report progress, and several changes of one task
that land in the same batch (working, an artifact, completed) cost one row write.

A batch the store could not write (a database restart) is not lost: the changes of tasks
the store already has stay queued and are written again after a pause that grows while the
store stays out, their skills working on meanwhile; a new task whose first write failed is
dropped, its request answered with the store's error, since nobody was told of it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

import anyio
import anyio.lowlevel

from hub.errors import StoreOutageError
from hub.store import SharedTaskRecords, TaskChange, TaskRecord, TaskRecords
from hub.tasks.stream import Update
from hub.telemetry import current_telemetry

__all__ = ["Commit", "Committed", "GroupCommit", "retry_pause"]

log = logging.getLogger("hub.tasks")

# The pause before a batch that failed is written again: doubled at each failure up to the
# longest, so a short blip costs little and a long outage few attempts.
_FIRST_PAUSE = 0.05
_LONGEST_PAUSE = 0.5


def retry_pause(previous: float | None) -> float:
    """The pause before writing again what the store refused, after `previous` (None at the
    first failure)."""
    return min(previous * 2, _LONGEST_PAUSE) if previous else _FIRST_PAUSE


class Commit:
    """One batch: done when it is durable (or has failed)."""

    __slots__ = ("done", "failure")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.failure: Exception | None = None


class Committed(Protocol):
    """What a batch asks of a task it writes (the live task is one)."""

    @property
    def task_id(self) -> str: ...

    @property
    def durable(self) -> int:
        """The number of the last change written (a shared store checks it on the next
        write)."""
        ...

    @property
    def stored(self) -> bool:
        """The store has the task: a change that could not be written is written again."""
        ...

    @property
    def released(self) -> bool:
        """The task takes no more changes here (another replica wrote it, or it was given
        up): a batch neither keeps nor publishes its changes."""
        ...

    def record(self) -> TaskRecord:
        """The task as it is now, to write."""
        ...

    def take_unpublished(self) -> list[Update]:
        """The changes applied since the last batch took them, in order."""
        ...

    def written(self, version: int, updates: list[Update]) -> None:
        """The batch wrote the task at `version`: publish `updates` (the changes it took)."""
        ...

    def requeue(self, updates: list[Update], commit: Commit) -> None:
        """The batch could not write the task: `updates` go back in front of the changes
        applied since, for `commit` to write."""
        ...


T = TypeVar("T", bound=Committed)


class GroupCommit(Generic[T]):
    """Writes changed tasks in batches from one loop (`run`), publishing after each batch.

    Args:
        store: where batches are written, one transaction each.
        on_durable: called for each task of a written batch, once its updates are published.
        on_failure: called for each task of a batch that could not be written and is not
            kept (a new task), or whose changes are given up at shutdown.
        on_lost: with a shared store, called for each task of a batch that another replica
            had written meanwhile (its changes here are not written, nor published).
    """

    def __init__(
        self,
        store: TaskRecords,
        *,
        on_durable: Callable[[T], None],
        on_failure: Callable[[T, Exception], None],
        on_lost: Callable[[T], None] | None = None,
    ) -> None:
        self._store = store
        self._shared = store if isinstance(store, SharedTaskRecords) else None
        self._on_lost = on_lost
        self._on_durable = on_durable
        self._on_failure = on_failure
        self._pending: dict[str, T] = {}
        self._next = Commit()
        self._wake = anyio.Event()
        self._pause: float | None = None
        """The wait before writing again what failed; None while writes succeed."""
        self._failure: Exception | None = None
        self._failing_since = 0.0

    def mark(self, live: T) -> Commit:
        """Queue `live` for the next batch; returns the batch it will be written in, which
        the task keeps to wait on (`LiveTask.wait_durable`)."""
        self._pending[live.task_id] = live
        self._wake.set()
        return self._next

    async def run(self) -> None:
        """The writer loop; runs in the task manager's task group until cancelled."""
        while True:
            if self._pause is None:
                await self._wake.wait()
                # One more turn of the event loop lets changes that are already under way
                # (a skill that has just started, other requests' tasks) join this batch.
                await anyio.lowlevel.checkpoint()
            else:
                await anyio.sleep(self._pause)
            self._wake = anyio.Event()
            if self._pending:
                await self.flush()

    async def close(self, *, within: float) -> None:
        """Write what is queued (at shutdown, after the loop has stopped), trying again for
        at most `within` seconds while the store is out; what is still not written then is
        given up (its waiters raise, its streams end)."""
        deadline = anyio.current_time() + within
        await self.flush()
        while self._pending and anyio.current_time() < deadline:
            await anyio.sleep(self._pause or _FIRST_PAUSE)
            await self.flush()
        pending, self._pending = list(self._pending.values()), {}
        failure = self._failure
        if not pending or failure is None:
            return
        log.error("gave up saving %d task(s) at shutdown: %s", len(pending), failure)
        commit, self._next = self._next, Commit()
        commit.failure = failure
        for live in pending:
            self._on_failure(live, failure)
        commit.done.set()

    async def flush(self) -> None:
        """Write what is queued now (also used at shutdown, after the loop has stopped)."""
        batch, self._pending = list(self._pending.values()), {}
        commit, self._next = self._next, Commit()
        # Records and the updates they make durable are taken together, before any await.
        records = [live.record() for live in batch]
        ready = [live.take_unpublished() for live in batch]
        started = time.perf_counter()
        lost: set[str] = set()
        try:
            # Shielded: a write cancelled half-way (at shutdown) may still land in the store,
            # and the changes it took would then be known neither as written nor as pending.
            with anyio.CancelScope(shield=True):
                if self._shared is None:
                    await self._store.put_many(records)
                else:
                    lost = await self._shared.commit(_changes(batch, records, ready))
        except Exception as exc:
            commit.failure = exc
            self._failed(batch, ready, exc)
        else:
            self._recovered()
            metrics = current_telemetry().metrics
            if metrics is not None:
                metrics.store_commit(time.perf_counter() - started)
            for live, record, updates in zip(batch, records, ready, strict=True):
                if live.task_id in lost:
                    if self._on_lost is not None:
                        self._on_lost(live)
                    continue
                live.written(record.version, updates)
                self._on_durable(live)
        commit.done.set()

    def _failed(self, batch: list[T], ready: list[list[Update]], exc: Exception) -> None:
        """Queue again the changes of the tasks the store has; drop the new ones."""
        kept = 0
        for live, updates in zip(batch, ready, strict=True):
            if live.released:
                continue  # another replica wrote it: the event log has what counts
            if not live.stored:
                self._on_failure(live, exc)
                continue
            live.requeue(updates, self._next)
            self._pending.setdefault(live.task_id, live)
            kept += 1
        if self._failure is None:
            self._failing_since = time.monotonic()
            # An unreachable store logs its outage itself, once; anything else is said here,
            # once until a batch is written again.
            level = logging.DEBUG if isinstance(exc, StoreOutageError) else logging.ERROR
            log.log(level, "could not save %d task(s): %s; trying again", len(batch), exc)
        self._failure = exc
        self._pause = retry_pause(self._pause) if kept else None

    def _recovered(self) -> None:
        failure, self._failure, self._pause = self._failure, None, None
        if failure is not None and not isinstance(failure, StoreOutageError):
            lasted = time.monotonic() - self._failing_since
            log.warning("saving tasks works again, after %.1f s", lasted)


def _changes(
    batch: list[T], records: list[TaskRecord], ready: list[list[Update]]
) -> list[TaskChange]:
    """The batch as a shared store writes it: each task with the version it was read at and
    the events that moved it since."""
    return [
        TaskChange(
            record=record, expected=live.durable, events=[update.json() for update in updates]
        )
        for live, record, updates in zip(batch, records, ready, strict=True)
    ]
