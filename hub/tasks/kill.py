"""The kill switch's reach in the task manager: which tasks a kill of a context or of a
caller ends (`KillTarget`), and what it ended (`KillReport`).

A kill ends every task of its target that is not terminal: the running ones (here, or on
another replica through the shared store) and those waiting for input. Each is canceled the
way CancelTask cancels it, so the delegation ledger cancels the partner tasks it started: a
running skill's end settles its children, a parked task's are settled at once. The partner
tasks a caller started through the gateway are the kill switch's to cancel
(`hub.server.kill`), above the partners; the report has room for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from hub.protocol import TaskState

__all__ = ["OPEN_STATES", "KillReport", "KillTarget"]

OPEN_STATES = (
    TaskState.SUBMITTED,
    TaskState.WORKING,
    TaskState.INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED,
)
"""The states of a task a kill ends."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KillTarget:
    """What a kill ends: the tasks of one context, or those one caller (a credential's
    name) owns. Exactly one is given."""

    context_id: str | None = None
    caller: str | None = None

    def __post_init__(self) -> None:
        if (self.context_id is None) == (self.caller is None):
            raise ValueError("a kill names exactly one of a context id or a caller")
        if not (self.context_id or self.caller):
            raise ValueError("a kill's context id or caller is empty")

    def describe(self) -> str:
        """The target as the audit line and the answer name it."""
        if self.context_id is not None:
            return f"context {self.context_id}"
        return f"caller '{self.caller}'"


@dataclass(frozen=True, slots=True, kw_only=True)
class KillReport:
    """What a kill ended.

    Attributes:
        tasks: the ids of the hub's tasks it canceled.
        partner_tasks: how many partner tasks those tasks had started and left live, which
            the delegation ledger cancels with them.
        gateway_tasks: how many partner tasks the caller had started through the gateway
            the partners answered as canceled (a kill of a caller, by the kill switch; the
            task manager knows nothing of them and leaves 0).
        gateway_failed: how many of those could not be canceled (the partner unreachable,
            refusing or late); one that had ended already is counted in neither.
    """

    tasks: tuple[str, ...]
    partner_tasks: int
    gateway_tasks: int = 0
    gateway_failed: int = 0
