"""The task state machine: which state changes are allowed."""

from __future__ import annotations

from hub.errors import InvalidTransitionError
from hub.protocol import TaskState, state_name

__all__ = ["check_transition"]

_S = TaskState
_ACTIVE_TARGETS = frozenset(
    {
        _S.WORKING,
        _S.INPUT_REQUIRED,
        _S.AUTH_REQUIRED,
        _S.COMPLETED,
        _S.FAILED,
        _S.CANCELED,
        _S.REJECTED,
    }
)
_ALLOWED: dict[TaskState, frozenset[TaskState]] = {
    _S.SUBMITTED: _ACTIVE_TARGETS,
    # WORKING -> WORKING is a progress update with a new status message.
    _S.WORKING: _ACTIVE_TARGETS,
    # An interrupted task resumes (WORKING) when answered, or ends.
    _S.INPUT_REQUIRED: frozenset({_S.WORKING, _S.COMPLETED, _S.FAILED, _S.CANCELED, _S.REJECTED}),
    _S.AUTH_REQUIRED: frozenset({_S.WORKING, _S.COMPLETED, _S.FAILED, _S.CANCELED, _S.REJECTED}),
}


def check_transition(current: TaskState, new: TaskState) -> None:
    """Raise unless a task in `current` may move to `new`.

    Raises:
        InvalidTransitionError: terminal states are final; SUBMITTED and UNSPECIFIED cannot be
            entered again.
    """
    if new not in _ALLOWED.get(current, frozenset()):
        was, becomes = state_name(current), state_name(new)
        if current.is_terminal:
            raise InvalidTransitionError(
                f"task is {was}, a terminal state; it cannot become {becomes}"
            )
        raise InvalidTransitionError(f"a task cannot go from {was} to {becomes}")
