"""`StreamEnd`: which event of a partner's stream settles it.

A stream for a new message ends at its first terminal or interrupted state (or a direct
message reply). A stream about a task the caller already knows is waiting — a follow-up
message answering its question, or a subscription — may begin by describing the state the
caller already has: the JS SDK 1.3 server opens a follow-up with the stored Task, still
INPUT_REQUIRED, and every subscription opens with the task's snapshot. Such a snapshot
settles nothing; the partner's next state change does (a new question, a terminal state).
Every reader of one stream (the resuming client, the tool folding the task, the delegate
relay, the gateway pump) keeps its own `StreamEnd`, fed the same events in order, so all
agree on where the stream ends.
"""

from __future__ import annotations

from hub.protocol import StreamResponse
from hub.protocol.v03.translate import is_final_v1

__all__ = ["StreamEnd"]


class StreamEnd:
    """Tells, event by event, whether a stream has reached its end.

    Args:
        known_task: the stream is about a task the caller already knows (a follow-up message
            carrying its task id, or SubscribeToTask): until its first change, a Task
            snapshot in an interrupted state only repeats what the caller knows.
    """

    def __init__(self, *, known_task: bool = False) -> None:
        self._repeating = known_task

    def is_repeat(self, event: StreamResponse) -> bool:
        """True when `event` only repeats the waiting state the caller knows (nothing has
        changed since the stream began). Does not record the event."""
        return self._repeating and event.task is not None and event.task.status.state.is_interrupted

    def is_final(self, event: StreamResponse) -> bool:
        """Record `event` (call once per event, in order); True when it ends the stream: a
        direct message, or a terminal or interrupted state that is not a repeat."""
        if self.is_repeat(event):
            return False
        self._repeating = False
        return is_final_v1(event)
