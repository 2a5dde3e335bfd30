"""Streams that survive a cut: reconnect through SubscribeToTask, drop repeats, fill gaps.

A partner's stream can end before the task reaches a terminal or interrupted state (a reset
connection, a proxy timing out, a clean close without a final event). The task goes on at
the partner, so the stream is reopened with SubscribeToTask, with back-off. The first event of
a subscription is the task snapshot: compared with what the caller has already seen, it
yields the status change and artifact parts the cut swallowed (the text a joined text part
has more counts as its own chunk). Events seen before are dropped, so the caller reads one
uninterrupted sequence; an appended chunk is never taken for a repeat, as a model's tokens
repeat (two line breaks, "the").
"""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from hub.client.stream_end import StreamEnd
from hub.client.transport import EventStream
from hub.errors import (
    AgentTimeoutError,
    AgentUnreachableError,
    ClientError,
    ConnectionLostError,
    RemoteRpcError,
)
from hub.protocol import (
    Artifact,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    append_parts,
    continues_text,
    joined_parts,
)

__all__ = ["ResumePolicy", "resumable_stream"]

_RESUMABLE = (ConnectionLostError, AgentTimeoutError, AgentUnreachableError)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumePolicy:
    """How hard to try to resume a cut stream.

    Attributes:
        attempts: reconnects in a row without a new event before giving up.
        base_delay: first back-off in seconds, doubled per failed reconnect (with jitter).
        max_delay: cap on one back-off.
    """

    attempts: int = 5
    base_delay: float = 0.1
    max_delay: float = 5.0

    def delay(self, failures: int) -> float:
        """Seconds to wait before reconnect number `failures` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (failures - 1))
        return random.uniform(ceiling / 2, ceiling)


@dataclass(slots=True)
class _Progress:
    """What the caller has been given so far."""

    task_id: str | None = None
    context_id: str | None = None
    state: TaskState | None = None
    status_message_id: str | None = None
    """The id of the last status message seen: a task found still waiting after a cut may
    be waiting on a new question."""
    given: bool = False
    """Some event has been given."""
    seen: set[bytes] = field(default_factory=set)
    """Events given already (appended chunks aside: a chunk repeated is more text)."""
    parts: dict[str, list[Part]] = field(default_factory=dict)
    """Each artifact's parts as given, text chunks joined as the partner keeps them."""

    def admit(self, event: StreamResponse) -> bool:
        """Record `event`; False when the caller has had it already."""
        chunk = event.artifact_update
        # A resumed stream starts from a snapshot, which `reconcile` compares with the parts
        # given; the chunks after it are new even when their text repeats ("\n", "the").
        if chunk is None or not chunk.append:
            key = event.to_json()
            if key in self.seen:
                return False
            self.seen.add(key)
        self.given = True
        if event.task is not None:
            task = event.task
            self.task_id, self.context_id, self.state = task.id, task.context_id, task.status.state
            self.status_message_id = _message_id(task.status)
            for artifact in task.artifacts or []:
                self.parts[artifact.artifact_id] = list(artifact.parts)
        elif event.status_update is not None:
            update = event.status_update
            self.task_id, self.context_id = update.task_id, update.context_id
            self.state = update.status.state
            self.status_message_id = _message_id(update.status)
        elif chunk is not None:
            self.task_id, self.context_id = chunk.task_id, chunk.context_id
            artifact_id = chunk.artifact.artifact_id
            if chunk.append:
                have = self.parts.get(artifact_id, [])
                self.parts[artifact_id] = append_parts(have, chunk.artifact.parts)
            else:
                self.parts[artifact_id] = list(chunk.artifact.parts)
        elif event.message is not None and event.message.task_id:
            self.task_id = event.message.task_id
        return True

    def reconcile(self, snapshot: Task) -> list[StreamResponse]:
        """The events that take the caller from what it saw to `snapshot`."""
        context_id = snapshot.context_id or self.context_id or ""
        final = snapshot.status.state.is_terminal
        missing: list[StreamResponse] = []
        for artifact in snapshot.artifacts or []:
            have = self.parts.get(artifact.artifact_id)
            rest = _rest(joined_parts(have), joined_parts(artifact.parts)) if have else None
            if rest == []:
                continue
            chunk = Artifact(
                artifact_id=artifact.artifact_id,
                name=artifact.name,
                description=artifact.description,
                parts=rest or artifact.parts,
                metadata=artifact.metadata,
                extensions=artifact.extensions,
            )
            missing.append(
                StreamResponse(
                    artifact_update=TaskArtifactUpdateEvent(
                        task_id=snapshot.id,
                        context_id=context_id,
                        artifact=chunk,
                        append=rest is not None,
                        last_chunk=final,
                    )
                )
            )
        status = snapshot.status
        if status.state != self.state or _message_id(status) != self.status_message_id:
            missing.append(
                StreamResponse(
                    status_update=TaskStatusUpdateEvent(
                        task_id=snapshot.id, context_id=context_id, status=snapshot.status
                    )
                )
            )
        return missing


def _rest(have: list[Part], now: list[Part]) -> list[Part] | None:
    """The parts that, appended, take `have` to `now`: [] when they are the same, None when
    `now` does not begin with `have`. Both are read with their text runs joined, so a text
    part given in chunks and kept whole (or the other way round) compares by its text."""
    if not have or len(now) < len(have) or now[: len(have) - 1] != have[:-1]:
        return None
    last, there = have[-1], now[len(have) - 1]
    rest = now[len(have) :]
    if there == last:
        return rest
    if continues_text(last, there) and (there.text or "").startswith(last.text or ""):
        more = (there.text or "")[len(last.text or "") :]
        return [there.model_copy(update={"text": more}), *rest]
    return None


def _message_id(status: TaskStatus) -> str | None:
    return status.message.message_id if status.message is not None else None


async def resumable_stream(
    first: EventStream,
    *,
    subscribe: Callable[[str], EventStream],
    get_task: Callable[[str], Awaitable[Task]],
    policy: ResumePolicy,
    agent_name: str,
    task_id: str | None = None,
    known_task: bool = False,
) -> AsyncGenerator[StreamResponse, None]:
    """Yield the events of `first`, resuming through `subscribe` until a final event.

    Args:
        first: the stream to read first (SendStreamingMessage or SubscribeToTask).
        subscribe: opens SubscribeToTask for a task id.
        get_task: reads the task, used when the partner refuses to subscribe (the task ended
            while the stream was down).
        policy: reconnect attempts and back-off.
        agent_name: the partner, for error messages.
        task_id: the task, when known before the first event.
        known_task: the caller knows the task is waiting (a follow-up, a subscription): a
            snapshot of its waiting state does not end the stream (`StreamEnd`).

    Raises:
        ConnectionLostError: the stream was cut before a task was named, or could not be
            resumed within the policy's attempts.
    """
    progress = _Progress(task_id=task_id)
    end = StreamEnd(known_task=known_task)
    stream: EventStream = first
    resuming = False
    failures = 0
    while True:
        error: ClientError | None = None
        try:
            async with stream as events:
                async for event in events:
                    # A snapshot before anything was seen is the stream's own first event.
                    if resuming and event.task is not None and progress.given:
                        batch = progress.reconcile(event.task)
                    else:
                        batch = [event]
                    resuming = False
                    for item in batch:
                        if progress.admit(item):
                            failures = 0
                            yield item
                            if end.is_final(item):
                                return
        except _RESUMABLE as exc:
            error = exc
        except RemoteRpcError as exc:
            if not resuming or progress.task_id is None:
                raise
            # SubscribeToTask is refused for a task that already ended: read it instead.
            error = exc
            for item in progress.reconcile(await get_task(progress.task_id)):
                if progress.admit(item):
                    yield item
                    if end.is_final(item):
                        return
        if progress.task_id is None:
            raise error or ConnectionLostError(
                f"agent '{agent_name}' ended the stream before naming a task, so it cannot be "
                "resumed"
            )
        failures += 1
        if failures > policy.attempts:
            raise ConnectionLostError(
                f"agent '{agent_name}' stream for task {progress.task_id} could not be resumed "
                f"after {policy.attempts} attempts"
                + (f" (last error: {error})" if error is not None else "")
            )
        await anyio.sleep(policy.delay(failures))
        stream = subscribe(progress.task_id)
        resuming = True
