"""What a tool call returns, whichever agent answered and however it answered.

A partner may answer with a direct Message, a Task, or a stream of events; a local skill
with a Task or a Message. `ToolResult` is the one shape a caller (or a language model) sees:
the final state, the answer's text, the artifacts, and the ids that continue the
conversation. A task that stops to ask a question comes back with `needs_input` set; calling
the tool again with its `task_id` answers it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from hub.client.stream_end import StreamEnd
from hub.protocol import (
    Artifact,
    Message,
    Part,
    StateName,
    StreamResponse,
    Task,
    append_chunk,
    parts_text,
    state_name,
)

__all__ = ["ArtifactResult", "TaskFold", "ToolResult"]


class ArtifactResult(BaseModel):
    """One artifact, flattened: its text, its data values and its files."""

    model_config = ConfigDict(frozen=True)

    name: str | None = None
    text: str = ""
    data: list[Any] = []
    files: list[dict[str, str]] = []

    @classmethod
    def from_artifact(cls, artifact: Artifact) -> ArtifactResult:
        return cls(
            name=artifact.name,
            text=parts_text(artifact.parts),
            data=[part.data for part in artifact.parts if part.data is not None],
            files=[_file(part) for part in artifact.parts if part.url or part.raw],
        )


class ToolResult(BaseModel):
    """The outcome of one tool call.

    Attributes:
        tool: the tool's name.
        agent: the agent (or local skill) that answered.
        state: the final state (`completed`, `failed`, `canceled`, `rejected`,
            `input-required`, `auth-required`), lowercase as in 0.3 and in most tool APIs.
        text: the answer's text: the artifacts' text, else the final status message's.
        message: the final status message's text (a question, when `needs_input`).
        artifacts: every artifact of the task.
        task_id: the agent's task (None for a direct message reply).
        context_id: pass it back to continue the conversation.
        needs_input: the agent asks a question; call again with `task_id` and the answer.
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    agent: str
    state: StateName
    text: str
    message: str = ""
    artifacts: list[ArtifactResult] = []
    task_id: str | None = None
    context_id: str | None = None
    needs_input: bool = False

    @property
    def ok(self) -> bool:
        """True when the agent completed the work."""
        return self.state == "completed"

    @classmethod
    def from_reply(cls, tool: str, agent: str, reply: Task | Message) -> ToolResult:
        """The result of a Task (terminal or interrupted) or of a direct Message reply."""
        if isinstance(reply, Message):
            text = reply.text()
            return cls(
                tool=tool,
                agent=agent,
                state="completed",
                text=text,
                message=text,
                context_id=reply.context_id,
            )
        state = reply.status.state
        status_text = reply.status.message.text() if reply.status.message else ""
        artifacts = [ArtifactResult.from_artifact(a) for a in reply.artifacts or []]
        artifact_text = "\n".join(a.text for a in artifacts if a.text)
        return cls(
            tool=tool,
            agent=agent,
            state=state_name(state),
            text=artifact_text or status_text,
            message=status_text,
            artifacts=artifacts,
            task_id=reply.id,
            context_id=reply.context_id,
            needs_input=state.is_interrupted,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what to hand back to a language model)."""
        return self.model_dump(mode="json")


class TaskFold:
    """Builds the task a stream describes, event by event, to end with its final snapshot.

    Args:
        follow_up: the stream answers a task that was waiting: a snapshot of its waiting
            state does not settle it (`StreamEnd`).
    """

    def __init__(self, *, follow_up: bool = False) -> None:
        self.task: Task | None = None
        self.message: Message | None = None
        self.settled = False
        """True once a direct reply arrived, or the task reached a terminal state or an
        interrupted one that is news to the caller."""
        self._artifacts: dict[str, Artifact] = {}
        self._end = StreamEnd(known_task=follow_up)

    def add(self, event: StreamResponse) -> None:
        """Take one event into the picture."""
        if self._end.is_final(event):
            self.settled = True
        if event.message is not None:
            self.message = event.message
        elif event.task is not None:
            self.task = event.task
            self._artifacts = {a.artifact_id: a for a in event.task.artifacts or []}
        elif event.status_update is not None:
            update = event.status_update
            if self.task is None:
                # A stream may open with a status update (the 0.3 SDKs do on a follow-up):
                # the task is built from it.
                self.task = Task(
                    id=update.task_id, context_id=update.context_id, status=update.status
                )
            else:
                self.task = self.task.model_copy(update={"status": update.status})
        elif event.artifact_update is not None:
            chunk = event.artifact_update
            known = self._artifacts.get(chunk.artifact.artifact_id)
            if chunk.append and known is not None:
                self._artifacts[known.artifact_id] = append_chunk(known, chunk.artifact)
            else:
                self._artifacts[chunk.artifact.artifact_id] = chunk.artifact
        if self.task is not None and event.message is None:
            self.task = self.task.model_copy(update={"artifacts": list(self._artifacts.values())})

    def reply(self) -> Task | Message | None:
        """The direct reply, or the task as the events left it."""
        return self.message if self.message is not None else self.task


def _file(part: Part) -> dict[str, str]:
    file = {"url": part.url} if part.url else {"bytes": part.raw or ""}
    if part.filename:
        file["name"] = part.filename
    if part.media_type:
        file["media_type"] = part.media_type
    return file
