"""Where a message sent to the hub goes: a new task, a skill that may answer it with a
direct Message (an `Opening`), or the parked task it answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from hub.config import LimitSettings
from hub.errors import InvalidParamsError
from hub.protocol import (
    Message,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatus,
    new_id,
    utc_now,
)
from hub.protocol.trace import current_scope
from hub.store import TaskRecord
from hub.tasks.choice import choose_skill
from hub.tasks.commit import GroupCommit
from hub.tasks.execution import Execution
from hub.tasks.intake import check_follow_up, check_parts
from hub.tasks.live import LiveTask
from hub.tasks.live_set import LiveSet
from hub.tasks.observer import TaskHook
from hub.tasks.opening import Opening
from hub.tasks.stream import TaskStream

__all__ = ["Delivery"]


class Delivery:
    """Takes each message sent to the hub to its task, creating the task or starting the
    skill as the message needs.

    Args:
        execution: starts skills.
        live: the live tasks, and the limits on new ones.
        commits: where a new task is queued for its first write.
        limits: the part and history limits a message must keep.
        default_skill: the skill a message goes to when it names none.
        admit_skill: called with the skill a message is about to reach; raises to refuse it
            (see `TaskManager`).
        materialize: the live task a message continues, loaded from the store if need be
            (the task manager's; raises when it is not the caller's).
    """

    def __init__(
        self,
        *,
        execution: Execution,
        live: LiveSet,
        commits: GroupCommit[LiveTask],
        limits: LimitSettings,
        default_skill: str,
        admit_skill: Callable[[str], None] | None,
        materialize: Callable[[str, str], Awaitable[LiveTask]],
    ) -> None:
        self._execution = execution
        self._live = live
        self._commits = commits
        self._limits = limits
        self._default_skill = default_skill
        self._admit_skill = admit_skill
        self._materialize = materialize

    async def accept(
        self,
        request: SendMessageRequest,
        owner: str,
        *,
        subscribe: bool,
        on_task: TaskHook | None = None,
    ) -> Message | tuple[LiveTask, TaskStream | None]:
        """The skill's direct Message, or the task the message went to (and a stream of it
        when `subscribe`); `on_task` as for `TaskManager.send`."""
        message = request.message
        check_parts(message, self._limits)
        if message.role is not Role.USER:
            raise InvalidParamsError(
                "message.role must be ROLE_USER for a message sent to the hub",
                violations=[("message.role", "must be ROLE_USER")],
            )
        if message.task_id:
            return await self._continue(message, owner, subscribe=subscribe, on_task=on_task)
        skill = choose_skill(request, self._execution.executors, self._default_skill)
        if self._admit_skill is not None:
            self._admit_skill(skill)
        context_id = message.context_id or new_id()
        mode = self._execution.executors[skill].reply_mode
        # An "either" skill decides before the answer goes out, unless the caller asked for
        # the answer at once: its task is then created now, like any other.
        if mode == "message" or (mode == "either" and (subscribe or not _returns_at_once(request))):
            return await self._open(
                request, skill, context_id, owner, subscribe=subscribe, on_task=on_task
            )
        live, stream = self._new_task(
            request, skill, context_id, owner, new_id(), on_task, subscribe=subscribe
        )
        # The skill starts at once; its first changes ride in the same commit as the task.
        self._execution.start(live, request.metadata)
        return live, stream

    async def _open(
        self,
        request: SendMessageRequest,
        skill: str,
        context_id: str,
        owner: str,
        *,
        subscribe: bool,
        on_task: TaskHook | None,
    ) -> Message | tuple[LiveTask, TaskStream | None]:
        """A new message to a skill that may answer with a direct Message: the skill runs
        first, and the answer is its Message or the task its first change creates."""
        opening = Opening(
            skill=skill,
            message=request.message.model_copy(update={"context_id": context_id}),
            create=lambda task_id: self._new_task(
                request, skill, context_id, owner, task_id, on_task, subscribe=subscribe
            ),
        )
        self._execution.start(opening, request.metadata)
        try:
            return await opening.wait()
        except BaseException:
            opening.abandon()  # the request is gone: nobody would see the answer
            raise

    def _new_task(
        self,
        request: SendMessageRequest,
        skill: str,
        context_id: str,
        owner: str,
        task_id: str,
        on_task: TaskHook | None,
        *,
        subscribe: bool,
    ) -> tuple[LiveTask, TaskStream | None]:
        """A new task, SUBMITTED, live and queued for its first commit (its skill not
        started), and a stream of it from there when `subscribe`."""
        self._live.admit(context_id)
        first = request.message.model_copy(update={"task_id": task_id, "context_id": context_id})
        task = Task(
            id=task_id,
            context_id=context_id,
            status=TaskStatus(state=TaskState.SUBMITTED, timestamp=utc_now()),
            history=[first],
            # Which skill took the task, whether the caller named it or it is the default:
            # `tasks list` and any client reading the task see what ran it.
            metadata={**(request.metadata or {}), "skill": skill},
        )
        if on_task is not None:
            on_task(task)
        # The request's trace, kept for the console's link to it (never sent to clients).
        scope = current_scope()
        trace_id = scope.trace_id if scope is not None else ""
        record = TaskRecord(task=task, skill=skill, owner=owner, trace_id=trace_id)
        live = LiveTask(record, commits=self._commits, stored=False)
        self._live.add(live)
        return live, live.subscribe() if subscribe else None

    async def _continue(
        self, message: Message, owner: str, *, subscribe: bool, on_task: TaskHook | None = None
    ) -> tuple[LiveTask, TaskStream | None]:
        live = await self._materialize(message.task_id or "", owner)
        if self._admit_skill is not None:
            self._admit_skill(live.skill)
        check_follow_up(message, live.task, self._limits)
        if on_task is not None:
            on_task(live.task)
        answered = live.answer(message)
        stream = live.subscribe() if subscribe else None
        if not answered:
            # The skill's run ended while parked (or the hub restarted): run it again; it
            # replays the answers it already had.
            self._execution.start(live, live.task.metadata)
        return live, stream


def _returns_at_once(request: SendMessageRequest) -> bool:
    configuration = request.configuration
    return configuration is not None and bool(configuration.return_immediately)
