"""A new message whose skill may answer it with a direct Message: no task exists until the
skill decides.

The skill runs before its task is created. Its first act decides the answer: a reply
(`TaskRun.reply`) answers the request with that Message, and no task is ever created or
stored; anything that changes a task (a status, an artifact, a question, or simply
returning) creates the task, and the request goes on as for any task. The request waits for
that decision, and a request that goes away before it takes the undecided skill with it.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from hub.errors import InternalError
from hub.protocol import Message, new_id
from hub.tasks.live import LiveTask
from hub.tasks.stream import TaskStream

__all__ = ["Opening"]


class Opening:
    """The answer to one new message, while its skill has not decided between a Message and
    a task.

    Args:
        skill: the skill the message goes to.
        message: the request's message, its `contextId` set.
        create: creates the task (with `task_id`) as the task manager does for any new
            message, with the stream the request reads when it streams (subscribed before
            the task's first change, so the stream carries them all); raises when the task
            cannot be created (a limit, a refused push config).
    """

    __slots__ = (
        "_abandoned",
        "_create",
        "_decided",
        "_outcome",
        "_scope",
        "message",
        "skill",
        "task_id",
    )

    def __init__(
        self,
        *,
        skill: str,
        message: Message,
        create: Callable[[str], tuple[LiveTask, TaskStream | None]],
    ) -> None:
        self.skill = skill
        self.message = message
        self.task_id = new_id()
        """The id the task gets if the skill creates it."""
        self._create = create
        self._decided = anyio.Event()
        self._outcome: Message | tuple[LiveTask, TaskStream | None] | Exception | None = None
        self._scope: anyio.CancelScope | None = None
        """The cancel scope of the skill's run (set when the run starts)."""
        self._abandoned = False

    @property
    def context_id(self) -> str:
        return self.message.context_id or ""

    @property
    def abandoned(self) -> bool:
        """True when the request went away before the decision."""
        return self._abandoned

    @property
    def decided(self) -> bool:
        return self._decided.is_set()

    def reply(self, message: Message) -> None:
        """Answer the request with `message`; no task will exist."""
        update = {"context_id": self.context_id, "task_id": None}
        self._decide(message.model_copy(update=update))

    def open(self) -> LiveTask:
        """Create the task; the request is answered with it.

        Raises:
            Exception: whatever refused the task; the request is answered with it too.
        """
        try:
            created = self._create(self.task_id)
        except Exception as exc:
            self._decide(exc)
            raise
        self._decide(created)
        return created[0]

    def run_in(self, scope: anyio.CancelScope) -> None:
        """The skill runs in `scope` from now on: an abandoned request stops it."""
        self._scope = scope

    def end(self) -> None:
        """The skill's run ended (canceled, or the hub stops) without deciding."""
        if not self.decided:
            self._decide(
                InternalError(f"skill '{self.skill}' stopped before it answered the message")
            )

    def abandon(self) -> None:
        """The request went away: an undecided skill is canceled (nobody could see its
        answer)."""
        if self.decided:
            return
        self._abandoned = True
        if self._scope is not None:
            self._scope.cancel()

    async def wait(self) -> Message | tuple[LiveTask, TaskStream | None]:
        """The Message, or the task and its stream, once the skill decided.

        Raises:
            Exception: the task could not be created, or the skill stopped undecided.
        """
        await self._decided.wait()
        outcome = self._outcome
        if isinstance(outcome, Exception):
            raise outcome
        assert outcome is not None
        return outcome

    def _decide(self, outcome: Message | tuple[LiveTask, TaskStream | None] | Exception) -> None:
        if self.decided:
            raise RuntimeError(f"skill '{self.skill}' has already answered this message")
        self._outcome = outcome
        self._decided.set()
