"""The push sender: one queue per task, throttled, delivered in the background.

`notify()` never waits: it records the task's newest state in the task's feed and, if no
worker is running for that task, starts one in the sender's task group. A worker sends one
notification at a time, so a webhook sees a task's states in order:

- a non-final state goes at once if the task sent nothing for `throttle` seconds, else when
  that time is up; states that arrive meanwhile replace it, so what goes is the latest;
- a final (terminal) state goes as soon as the notification in flight, if any, is done; a
  non-final state still waiting is dropped, and a retry of an older state stops waiting;
- every target of a notification is delivered to concurrently, each with its own retries
  (`WebhookDelivery`);
- once `stop()` is called (the hub is stopping), nothing waits any more: a final state
  still queued gets one attempt, retries and throttled states are dropped.

A slow or failing webhook therefore delays only that task's later notifications, never the
task itself or other tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup

from hub.protocol import Task
from hub.push.config import PushTarget, notification_body
from hub.push.delivery import WebhookDelivery
from hub.telemetry import current_telemetry

__all__ = ["PushSender"]


@dataclass(slots=True)
class _Notification:
    task: Task
    targets: Sequence[PushTarget]
    final: bool
    bodies: dict[str, bytes] = field(default_factory=dict)

    def body(self, protocol: str) -> bytes:
        """Serialised once per protocol version, whatever the number of targets."""
        body = self.bodies.get(protocol)
        if body is None:
            body = self.bodies[protocol] = notification_body(self.task, protocol)
        return body


@dataclass(slots=True)
class _Feed:
    """The notifications of one task that are not sent yet, and when the next may go."""

    waiting: _Notification | None = None
    final: _Notification | None = None
    next_at: float = -math.inf
    running: bool = False
    forgotten: bool = False
    newer: anyio.Event = field(default_factory=anyio.Event)
    """Set when a notification arrives while one is being sent or waited for."""


class PushSender:
    """Sends task notifications to their targets from a task group it is given.

    Args:
        delivery: posts one body to one target, with retries.
        throttle: least seconds between two non-final notifications of one task.
    """

    def __init__(self, delivery: WebhookDelivery, *, throttle: float) -> None:
        self._delivery = delivery
        self._throttle = throttle
        self._feeds: dict[str, _Feed] = {}
        self._group: TaskGroup | None = None
        self._idle = anyio.Event()
        self._idle.set()
        self._stopping = anyio.Event()

    def bind(self, group: TaskGroup | None) -> None:
        """Run workers in `group` from now on (None: stop starting them)."""
        self._group = group

    def notify(self, task: Task, targets: Sequence[PushTarget], *, final: bool) -> None:
        """Queue `task` (a copy the caller no longer changes) for `targets`; never waits."""
        feed = self._feeds.get(task.id)
        if feed is None:
            feed = self._feeds[task.id] = _Feed()
        feed.forgotten = False
        notification = _Notification(task=task, targets=targets, final=final)
        if final:
            feed.final, feed.waiting = notification, None
        else:
            feed.waiting = notification
        feed.newer.set()
        if not feed.running and self._group is not None:
            feed.running = True
            if self._idle.is_set():
                self._idle = anyio.Event()
            self._group.start_soon(self._work, task.id, feed)

    def stop(self) -> None:
        """Stop waiting: cut retries and throttle waits short (at shutdown)."""
        self._stopping.set()
        for feed in self._feeds.values():
            feed.newer.set()

    def forget(self, task_id: str) -> None:
        """Drop a task's throttle state (its last config was deleted)."""
        feed = self._feeds.get(task_id)
        if feed is None:
            return
        if feed.running:
            feed.forgotten = True  # its worker drops it when it stops
        else:
            del self._feeds[task_id]

    async def wait_idle(self) -> None:
        """Return once no worker is running: nothing is being sent, retried or held back by
        the throttle."""
        while any(feed.running for feed in self._feeds.values()):
            await self._idle.wait()

    async def _work(self, task_id: str, feed: _Feed) -> None:
        try:
            while True:
                if self._stopping.is_set() and feed.final is None:
                    return
                if feed.final is not None:
                    notification, feed.final = feed.final, None
                    await self._send(notification, feed)
                    if feed.final is None and feed.waiting is None:
                        self._feeds.pop(task_id, None)
                        return
                    continue
                if feed.waiting is None:
                    return
                delay = feed.next_at - anyio.current_time()
                if delay > 0:
                    # Wait out the throttle, unless a final state arrives first.
                    feed.newer = anyio.Event()
                    with anyio.move_on_after(delay):
                        while feed.final is None and not self._stopping.is_set():
                            await feed.newer.wait()
                            feed.newer = anyio.Event()
                    continue
                notification, feed.waiting = feed.waiting, None
                feed.next_at = anyio.current_time() + self._throttle
                await self._send(notification, feed)
        finally:
            feed.running = False
            if feed.forgotten and self._feeds.get(task_id) is feed:
                del self._feeds[task_id]
            if not any(other.running for other in self._feeds.values()):
                self._idle.set()

    async def _send(self, notification: _Notification, feed: _Feed) -> None:
        # A newer state supersedes this one, unless this one is final; stopping ends both.
        feed.newer = anyio.Event()
        superseded = self._stopping if notification.final else feed.newer
        if self._stopping.is_set():
            feed.newer.set()
        async with anyio.create_task_group() as group:
            for target in notification.targets:
                if target.active:
                    body = notification.body(target.record.protocol)
                    group.start_soon(self._deliver, target, body, superseded)

    async def _deliver(
        self, target: PushTarget, body: bytes, superseded: anyio.Event | None
    ) -> None:
        delivered = await self._delivery.deliver(target, body, superseded=superseded)
        metrics = current_telemetry().metrics
        if metrics is not None:
            metrics.push_deliveries.labels("delivered" if delivered else "undelivered").inc()
