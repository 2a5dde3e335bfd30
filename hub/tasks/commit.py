"""Group commit: changes are written in batches, then published in the order they happened.

A change to a task is applied in memory at once and queued. The writer loop writes every
changed task once per batch, in one transaction, and only then publishes that task's queued
updates, in order. So nothing reaches a subscriber, a waiter or a caller before it is
durable, a skill never waits on the disk to report progress, and several changes of one task
that land in the same batch (working, an artifact, completed) cost one row write.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import anyio.lowlevel

from hub.store import SharedTaskStore, TaskChange, TaskStore
from hub.telemetry import current_telemetry

if TYPE_CHECKING:
    from hub.store import TaskRecord
    from hub.tasks.live import LiveTask
    from hub.tasks.stream import Update

__all__ = ["Commit", "GroupCommit"]

log = logging.getLogger("hub.tasks")


class Commit:
    """One batch: done when it is durable (or has failed)."""

    __slots__ = ("done", "failure")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.failure: Exception | None = None


class GroupCommit:
    """Writes changed tasks in batches from one loop (`run`), publishing after each batch.

    Args:
        store: where batches are written, one transaction each.
        on_durable: called for each task of a written batch, to publish its queued updates.
        on_failure: called for each task of a batch that could not be written.
        on_lost: with a shared store, called for each task of a batch that another replica
            had written meanwhile (its changes here are not written, nor published).
    """

    def __init__(
        self,
        store: TaskStore,
        *,
        on_durable: Callable[[LiveTask], None],
        on_failure: Callable[[LiveTask, Exception], None],
        on_lost: Callable[[LiveTask], None] | None = None,
    ) -> None:
        self._store = store
        self._shared = store if isinstance(store, SharedTaskStore) else None
        self._on_lost = on_lost
        self._on_durable = on_durable
        self._on_failure = on_failure
        self._pending: dict[str, LiveTask] = {}
        self._next = Commit()
        self._wake = anyio.Event()

    def mark(self, live: LiveTask) -> Commit:
        """Queue `live` for the next batch; returns the batch it will be written in."""
        self._pending[live.task_id] = live
        live.commit = self._next
        self._wake.set()
        return self._next

    async def durable(self, live: LiveTask) -> None:
        """Wait until every change applied to `live` so far is written.

        Raises:
            StoreError: the batch could not be written.
        """
        commit = live.commit
        if commit is not None:
            await commit.done.wait()
            if commit.failure is not None:
                raise commit.failure

    async def run(self) -> None:
        """The writer loop; runs in the task manager's task group until cancelled."""
        while True:
            await self._wake.wait()
            # One more turn of the event loop lets changes that are already under way (a
            # skill that has just started, other requests' tasks) join this batch.
            await anyio.lowlevel.checkpoint()
            self._wake = anyio.Event()
            if self._pending:
                await self.flush()

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
            if self._shared is None:
                await self._store.put_many(records)
            else:
                lost = await self._shared.commit(_changes(batch, records, ready))
        except Exception as exc:
            log.error("could not save %d task(s): %s", len(batch), exc)
            commit.failure = exc
            for live in batch:
                self._on_failure(live, exc)
        else:
            metrics = current_telemetry().metrics
            if metrics is not None:
                metrics.store_commit(time.perf_counter() - started)
            for live, record, updates in zip(batch, records, ready, strict=True):
                if live.task_id in lost:
                    if self._on_lost is not None:
                        self._on_lost(live)
                    continue
                live.durable = record.version
                if not live.released:  # else the event log brings them (the replication)
                    live.publish(updates)
                self._on_durable(live)
        commit.done.set()


def _changes(
    batch: list[LiveTask], records: list[TaskRecord], ready: list[list[Update]]
) -> list[TaskChange]:
    """The batch as a shared store writes it: each task with the version it was read at and
    the events that moved it since."""
    return [
        TaskChange(
            record=record, expected=live.durable, events=[update.json() for update in updates]
        )
        for live, record, updates in zip(batch, records, ready, strict=True)
    ]
