"""A pool of long-lived tasks that run skills, so starting a task costs no task spawn.

Spawning an anyio task costs tens of microseconds; handing a job to an idle worker costs an
event. Workers are started on demand (so a skill that waits for input never starves the
others) and belong to the task manager's task group, which cancels them on shutdown.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

__all__ = ["WorkerPool"]

Job = Callable[[], Awaitable[Any]]


class _Slot:
    __slots__ = ("job", "ready")

    def __init__(self) -> None:
        self.ready = anyio.Event()
        self.job: Job | None = None


class WorkerPool:
    """Runs jobs on reusable tasks of `group`; keeps at most `max_idle` workers waiting."""

    def __init__(self, group: TaskGroup, *, max_idle: int = 64) -> None:
        self._group = group
        self._idle: deque[_Slot] = deque()
        self._max_idle = max_idle

    def submit(self, job: Job) -> None:
        if self._idle:
            slot = self._idle.pop()
            slot.job = job
            slot.ready.set()
        else:
            self._group.start_soon(self._work, job)

    async def _work(self, job: Job) -> None:
        while True:
            await job()
            if len(self._idle) >= self._max_idle:
                return
            slot = _Slot()
            self._idle.append(slot)
            await slot.ready.wait()
            assert slot.job is not None
            job = slot.job
