"""Error codes whose meaning differs between A2A 0.3 and 1.0, and their translation.

Most codes mean the same in both versions (-32001 task not found, -32002 not cancelable, ...;
-32007 only changed its name). These differ:

- A message to a task in a terminal state, or `tasks/resubscribe` to one: 0.3 answers
  -32602 (InvalidParams), 1.0 -32004 (UnsupportedOperation).
- An extension the agent requires, a version it does not support: -32008, -32009 in 1.0;
  0.3 has neither (-32603 then).

0.3 never said which error a terminal task gets; its SDK answered InvalidParams, and 0.3
agents follow it. 1.0 says UnsupportedOperation (§3.1.6, and the SDK's message for both
operations: "Task ... is in terminal state: ..."). A 0.3 agent's -32602 to a resubscribe can
only be this case (its only parameter is the task id, and an unknown one is -32001); to a
message, it is this case when the agent's message says the task is terminal.

The hub's client reads a 0.3 agent's errors in their 1.0 meaning (`code_to_v1`); the gateway
hands a partner's error to a 0.3 caller in its 0.3 meaning (`code_to_v03`). The messages are
kept as the agent wrote them.
"""

from __future__ import annotations

__all__ = ["code_to_v03", "code_to_v1"]

_INVALID_PARAMS = -32602
_UNSUPPORTED_OPERATION = -32004
_NEW_IN_V1 = frozenset({-32008, -32009})
_INTERNAL = -32603

# 0.3 methods whose -32602 may mean "the task is in a terminal state".
_RESUBSCRIBE = "tasks/resubscribe"
_MESSAGE_METHODS = frozenset({"message/send", "message/stream"})


def code_to_v1(code: int, message: str, *, method: str) -> int:
    """The 1.0 code for what a 0.3 agent answered to `method` (its 0.3 method name)."""
    if code != _INVALID_PARAMS:
        return code
    if method == _RESUBSCRIBE or (method in _MESSAGE_METHODS and _says_terminal(message)):
        return _UNSUPPORTED_OPERATION
    return code


def code_to_v03(code: int, message: str) -> int:
    """The 0.3 code for a 1.0 error with `code` and `message`."""
    if code in _NEW_IN_V1:
        return _INTERNAL
    if code == _UNSUPPORTED_OPERATION and _says_terminal(message):
        return _INVALID_PARAMS
    return code


def _says_terminal(message: str) -> bool:
    return "terminal" in message.lower()
