"""Running again the tasks a stopped hub (or replica) was running, when their skill can.

A task left SUBMITTED or WORKING by a hub that stopped (a crash, a kill) is failed at the
next start, and one of a replica whose lease expired is failed by the replica that takes it
over: a skill's run cannot go on where it stopped. A resumable skill
(`TaskExecutor.resumable`) keeps what it has done and can: its task is made live again
from its record, gets a WORKING status that says so (`RESUMED_METADATA_KEY` in the update's
and the status message's metadata; the message is not added to history), and the skill runs
again with `TaskRun.resumed` set.

A resumed run has no request to take its call scope from, yet it must act with its
caller's rights: the composition root says, from the auth settings, what the task's owner
may reach (`ResumeScope`). A task whose owner no longer has a credential is failed instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal, TypeAlias

from hub.protocol import Message, TaskState, agent_message
from hub.protocol.trace import CallScope
from hub.store import TaskRecord
from hub.tasks.execution import Execution
from hub.tasks.ledger import DelegationLedger
from hub.tasks.live import LiveTask

__all__ = [
    "RESUMED_AFTER_RESTART",
    "RESUMED_AFTER_TAKEOVER",
    "RESUMED_METADATA_KEY",
    "ResumeScope",
    "Resumption",
    "no_credential",
]

log = logging.getLogger("hub.tasks")

RESUMED_METADATA_KEY = "a2a-hub/resumed"
"""Key, in the metadata of a resumed task's WORKING update (and of its status message), of
why it was resumed: "restart" or "takeover"."""

RESUMED_AFTER_RESTART = "resumed after a restart"
RESUMED_AFTER_TAKEOVER = "resumed: its replica stopped"

ResumeScope: TypeAlias = Callable[[TaskRecord], CallScope | None]
"""The call scope a resumed task's skill runs in: what the task's owner (`TaskRecord.owner`)
may reach now; None when its owner no longer has a credential."""

Why: TypeAlias = Literal["restart", "takeover"]


def no_credential(why: str, owner: str) -> str:
    """The failure message of a task that cannot resume because its owner's credential is
    gone (`why`: how the task was interrupted)."""
    named = f" '{owner}'" if owner else ""
    return f"{why}; its caller's credential{named} is no longer configured, so it cannot resume"


def _nowhere(record: TaskRecord) -> CallScope:
    return CallScope.new()


class Resumption:
    """Resumes the tasks of resumable skills.

    Args:
        execution: runs skills (and says which are resumable).
        ledger: takes back the partner tasks a resumed task had started.
        scope: the call scope a resumed task's skill runs in; None: a scope of its own that
            reaches no partner.
    """

    def __init__(
        self, *, execution: Execution, ledger: DelegationLedger, scope: ResumeScope | None
    ) -> None:
        self._execution = execution
        self._ledger = ledger
        self._scope = scope if scope is not None else _nowhere

    def refusal(self, record: TaskRecord, interrupted: str) -> str | None:
        """Why `record`'s task cannot resume, as its failure message: `interrupted` (how it
        was interrupted) when its skill is not served here or not resumable, or its owner's
        credential is gone; None when it can resume."""
        if not self._execution.resumable(record.skill):
            return interrupted
        if self._scope(record) is None:
            return no_credential(interrupted, record.owner)
        return None

    def mark(self, live: LiveTask, why: Why) -> None:
        """Queue the WORKING update that says the task is resumed (`why`: "restart" or
        "takeover")."""
        text = RESUMED_AFTER_RESTART if why == "restart" else RESUMED_AFTER_TAKEOVER
        metadata = {RESUMED_METADATA_KEY: why}
        message: Message = agent_message(text).model_copy(update={"metadata": metadata})
        live.update_status(TaskState.WORKING, message, dict(metadata), history=False)

    async def start(self, live: LiveTask) -> None:
        """Run `live`'s skill again, resumed, in its owner's scope, its partner tasks taken
        back first (so that they are settled when it ends)."""
        await self._ledger.adopt(live.task_id)
        if live.released:
            return  # another replica wrote it meanwhile: it is theirs
        if live.state.is_terminal:
            await self._ledger.settle(live.task_id)  # canceled before its skill started
            return
        record = live.record()
        scope = self._scope(record)
        if scope is None:
            live.fail(no_credential("could not resume", record.owner))
            return
        self._execution.start(live, live.task.metadata, call_scope=scope, resumed=True)
        log.info("task %s: resumed skill %s", live.task_id, live.skill)
