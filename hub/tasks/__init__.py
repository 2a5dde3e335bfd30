"""Tasks: the TaskManager, the task state machine and per-task update streams."""

from hub.tasks.kill import KillReport, KillTarget
from hub.tasks.manager import INTERRUPTED_BY_RESTART, TaskManager
from hub.tasks.observer import TaskHook, TaskObserver
from hub.tasks.run import ReplyMode, TaskExecutor, TaskRun
from hub.tasks.state import check_transition
from hub.tasks.stream import TaskStream, Update

__all__ = [
    "INTERRUPTED_BY_RESTART",
    "KillReport",
    "KillTarget",
    "ReplyMode",
    "TaskExecutor",
    "TaskHook",
    "TaskManager",
    "TaskObserver",
    "TaskRun",
    "TaskStream",
    "Update",
    "check_transition",
]
