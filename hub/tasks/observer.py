"""Observers: code outside the task manager that hears every committed change of every task
(the push notifier is one), without the task manager knowing what they do."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from hub.protocol import Task

__all__ = ["TaskHook", "TaskObserver", "notify_observers"]

log = logging.getLogger("hub.tasks")

TaskObserver = Callable[[Task], None]
"""Called after each commit that changed a task, with the task as it is now.

The task is the live object, not a copy: an observer copies what it keeps. It runs in the
commit loop, so it must return at once (hand the work to a task of its own) and not raise.
"""

TaskHook = Callable[[Task], None]
"""Called with the task a message goes to (new, or the one it continues) once the message is
accepted and before the change it brings is committed. An exception refuses the message."""


def notify_observers(observers: Sequence[TaskObserver], task: Task) -> None:
    """Call every observer; one that raises is logged and cannot stop the others or the
    commit loop."""
    for observer in observers:
        try:
            observer(task)
        except Exception:
            log.exception("task %s: an observer failed", task.id)
