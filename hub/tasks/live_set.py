"""The set of live tasks, and the limits on how many tasks and contexts may be live."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from hub.config import LimitSettings
from hub.errors import LimitExceededError
from hub.tasks.live import LiveTask

__all__ = ["LiveSet"]


class LiveSet:
    """Live (not terminal) tasks by id, with a count of live tasks per context."""

    def __init__(self, limits: LimitSettings) -> None:
        self._limits = limits
        self._tasks: dict[str, LiveTask] = {}
        self._contexts: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[LiveTask]:
        return iter(list(self._tasks.values()))

    def get(self, task_id: str) -> LiveTask | None:
        return self._tasks.get(task_id)

    def admit(self, context_id: str) -> None:
        """Refuse a new task that would go over `max_tasks` or open one context too many.

        Raises:
            LimitExceededError: a limit is reached; the message says which setting.
        """
        if len(self._tasks) >= self._limits.max_tasks:
            raise LimitExceededError(
                f"the hub is running {len(self._tasks)} tasks, its limit (limits.max_tasks); "
                "retry when some finish"
            )
        if context_id not in self._contexts and len(self._contexts) >= self._limits.max_contexts:
            raise LimitExceededError(
                f"the hub has {len(self._contexts)} active contexts, its limit "
                "(limits.max_contexts); continue an existing context or retry later"
            )

    def add(self, live: LiveTask) -> None:
        if live.task_id not in self._tasks:
            self._tasks[live.task_id] = live
            self._contexts[live.context_id] += 1

    def discard(self, live: LiveTask) -> None:
        if self._tasks.pop(live.task_id, None) is not None:
            self._contexts[live.context_id] -= 1
            if self._contexts[live.context_id] <= 0:
                del self._contexts[live.context_id]
