"""The notes the delegation ledger writes beside each partner task it reconciled, worded by
why it looked: a restart of this hub, a takeover from a replica that stopped renewing its
lease, or a cancel made on a replica other than the one running the parent."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AFTER_RESTART",
    "AFTER_TAKEOVER",
    "CANCELED_AFTER_RESTART",
    "ENDED_BEFORE_RESTART",
    "LEFT_AFTER_RESTART",
    "UNREACHABLE_AFTER_RESTART",
    "WITH_CANCELED_PARENT",
    "ReconcileNotes",
]

CANCELED_AFTER_RESTART = "canceled after a hub restart: its parent task had ended"
ENDED_BEFORE_RESTART = "found ended after a hub restart"
LEFT_AFTER_RESTART = "still live after a hub restart; its parent task waits for input"
UNREACHABLE_AFTER_RESTART = "could not be reached after a hub restart: {error}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReconcileNotes:
    """What the ledger notes beside each child it reconciled, worded by why it looked: the
    parent's record is read by people asking what became of its partner tasks."""

    canceled: str
    ended: str
    left: str
    unreachable: str
    """With `{error}`, the fault that kept the partner from being asked."""


AFTER_RESTART = ReconcileNotes(
    canceled=CANCELED_AFTER_RESTART,
    ended=ENDED_BEFORE_RESTART,
    left=LEFT_AFTER_RESTART,
    unreachable=UNREACHABLE_AFTER_RESTART,
)
_TAKEN_OVER = (
    "another replica took over its parent task (the replica running it had stopped renewing "
    "its lease)"
)
AFTER_TAKEOVER = ReconcileNotes(
    canceled=f"canceled when {_TAKEN_OVER}: its parent task had ended",
    ended=f"found ended when {_TAKEN_OVER}",
    left=f"still live when {_TAKEN_OVER}; its parent task waits for input",
    unreachable=f"could not be reached when {_TAKEN_OVER}: {{error}}",
)
"""A replica took over a task whose replica stopped renewing its lease (it died, or lost the
store), not a restart of this hub."""
WITH_CANCELED_PARENT = ReconcileNotes(
    canceled="canceled with its parent task, canceled on a replica other than the one running it",
    ended="found ended when its parent task was canceled",
    left="still live when its parent task was canceled",
    unreachable="could not be reached when its parent task was canceled: {error}",
)
"""The parent was canceled on a replica that did not run it, which then settled its
children from the ledger."""
