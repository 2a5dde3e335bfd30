"""The task manager's part when its store is shared by several hub processes (replicas).

Each replica runs the tasks it wrote last and holds a lease on them, renewed every third of
a lease. What ties the replicas into one hub is the store:

- every change is a versioned write with its events (`GroupCommit` on a `SharedTaskStore`):
  of two replicas that move one task from the same version, exactly one wins;
- every replica hears of every change (`SharedTaskStore.notices`, LISTEN/NOTIFY on
  PostgreSQL). A replica whose live task another one wrote (a cancel or a follow-up that
  arrived there, a takeover) lets go of it: its skill is stopped, it writes nothing more,
  and whoever was following it here goes on reading the task's event log;
- a subscriber of a task that runs elsewhere reads the event log from the version of the
  snapshot it started with, woken by the notices (`follow`);
- running tasks whose holder stopped renewing its lease are taken over by the first
  replica to see it: failed as interrupted, their partner children reconciled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from anyio.abc import TaskGroup

from hub.errors import HubError, StoreOutageError
from hub.protocol import StreamResponse, TaskState
from hub.store import SharedTaskRecords, TaskNotice, TaskRecord
from hub.tasks.live import LiveTask
from hub.tasks.live_set import LiveSet
from hub.tasks.stream import TaskStream, Update

__all__ = ["INTERRUPTED_REPLICA_STOPPED", "Replication"]

log = logging.getLogger("hub.tasks")

INTERRUPTED_REPLICA_STOPPED = "interrupted: its replica stopped"

# A follower re-reads the log this often even without a notice (a notice lost while the
# listening connection was being remade is made up for by the reconnection notice; this is
# the last line).
_BACKSTOP = 2.0


class Replication:
    """Notices, leases and followers of the tasks of one replica.

    Args:
        store: the shared store.
        live: the task manager's live tasks (a live task another replica writes leaves it).
        take_over: called with a running task whose holder's lease expired; it fails the
            task as interrupted (the task manager's).
    """

    def __init__(
        self,
        store: SharedTaskRecords,
        *,
        live: LiveSet,
        take_over: Callable[[TaskRecord], Coroutine[Any, Any, None]],
    ) -> None:
        self._store = store
        self._live = live
        self._take_over = take_over
        self._wakers: dict[str, list[anyio.Event]] = {}
        self._group: TaskGroup | None = None

    async def run(self) -> None:
        """Listen for changes and keep the leases, until cancelled."""
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._store.notices, self._heard)
            try:
                while True:
                    # Timed from the start of a round: on busy cores a round (a wait for a
                    # pooled connection, the scan for expired leases) can take a good part of
                    # a lease, and adding it to the pause let live tasks' leases run out.
                    due = anyio.current_time() + self._store.lease / 3
                    await self._keep_leases()
                    await anyio.sleep_until(due)
            finally:
                self._group = None

    async def _keep_leases(self) -> None:
        # Only what runs here: a row this replica holds but no longer runs (a task dropped
        # after its first write failed, yet written after all) expires and is taken over.
        running = [live.task_id for live in self._live if live.state in _RUNNING]
        try:
            held = await self._store.renew_leases(running)
            expired = await self._store.expired_leases()
        except StoreOutageError:
            return  # the store logs its outage; tried again at the next turn
        except HubError as exc:
            log.warning("could not keep the task leases: %s", exc)
            return
        for live in self._live:
            if live.state in _RUNNING and live.task_id not in held and live.idle:
                # Running here, yet not held here in the store: another replica wrote it
                # (a notice lost while the listener reconnected, say). Look before letting go.
                await self._release_if_moved(live)
        for record in expired:
            if self._live.get(record.task.id) is None and self._group is not None:
                # In the background: reconciling its partner children may take a while,
                # and this loop renews this replica's own leases.
                self._group.start_soon(self._take_over, record)

    async def _release_if_moved(self, live: LiveTask) -> None:
        try:
            stored = await self._store.get(live.task_id)
        except HubError:
            return
        if stored is not None and stored.version > live.durable and live.idle:
            self.release(live)

    def follow(self, live: LiveTask, *, for_subscribers: bool = False) -> None:
        """Publish to `live`'s subscribers and waiters what the event log holds after its
        version, until a change closes its streams, or nobody reads any more and nobody
        waits (`for_subscribers`: nobody reads)."""
        if self._group is None:
            live.close_streams()
            return
        self._group.start_soon(self._pump, live, for_subscribers)

    def subscribe(self, record: TaskRecord) -> TaskStream:
        """A stream of a task that runs on another replica: its snapshot now, then what the
        event log holds after it."""
        mirror = LiveTask(record)
        stream = mirror.subscribe()
        self.follow(mirror, for_subscribers=True)
        return stream

    def release(self, live: LiveTask) -> None:
        """Let go of a live task another replica has written: stop its skill, take no more
        changes, and follow it through the event log from what was written here last."""
        if live.release():
            self._live.discard(live)
            self.follow(live)

    def _heard(self, notice: TaskNotice) -> None:
        if not notice.task_id:
            # Reconnected: any followed task may have changed meanwhile. A live task written
            # elsewhere meanwhile is let go at this replica's next write of it (refused) or
            # its next lease renewal, whichever comes first.
            wakers, self._wakers = self._wakers, {}
            for events in wakers.values():
                for event in events:
                    event.set()
            return
        for event in self._wakers.pop(notice.task_id, ()):
            event.set()
        if notice.replica != self._store.replica:
            live = self._live.get(notice.task_id)
            if live is not None and notice.version > live.durable:
                self.release(live)

    def _waker(self, task_id: str) -> anyio.Event:
        event = anyio.Event()
        self._wakers.setdefault(task_id, []).append(event)
        return event

    async def _pump(self, live: LiveTask, for_subscribers: bool) -> None:
        while True:
            woken = self._waker(live.task_id)
            try:
                events = await self._store.events_after(live.task_id, live.seq)
                if events and await self._publish(live, events):
                    return
            except StoreOutageError:
                pass  # the store logs its outage; read again when woken or at the backstop
            except HubError as exc:
                log.warning("task %s: could not read its events: %s", live.task_id, exc)
            unwatched = live.subscriber_count == 0
            if unwatched and (for_subscribers or live.settled):
                return
            with anyio.move_on_after(_BACKSTOP):
                await woken.wait()

    async def _publish(self, live: LiveTask, events: list[tuple[int, bytes]]) -> bool:
        """Publish `events`; True when one of them closes the task's streams."""
        updates = [_update(seq, body) for seq, body in events]
        closing = any(update.closes_stream for update in updates)
        record = await self._store.get(live.task_id) if closing else None
        live.catch_up(updates, closing=closing, task=record.task if record is not None else None)
        return closing


_RUNNING = frozenset({TaskState.SUBMITTED, TaskState.WORKING})


def _update(seq: int, body: bytes) -> Update:
    event = StreamResponse.model_validate_json(body)
    status = event.status_update
    closes = status is not None and (
        status.status.state.is_terminal or status.status.state.is_interrupted
    )
    update = Update(event, closes_stream=closes)
    update.seq = seq
    return update
