"""The plan journal: what one turn of a plan has done, written after every step so that a
plan survives its hub.

It holds the transcript (the conversation before this turn and the turn so far), the tool
calls of the step that is running (each pending, running on a partner's task, or done with its
result), the budget spent, and how many of the caller's answers the plan has used. A plan that
starts again (its hub restarted, its replica stopped, or an answer came after a restart) reads
it: finished calls are not made again, a partner task that was running is followed again, and
only the model step in flight when the hub stopped is asked again.

The conversation of a context outlives its turns: once a turn answers, its transcript is kept
(bounded to `transcript.max_bytes`, the oldest turns dropped first) for the next message in
the same context.

Each model step and each tool call, once it ends, is logged in the journal with when it
started, how long it took and what it spent (`StepRecord`). When the task ends, however it
ends, the turn's part of the journal is kept as the plan's record for as long as the
conversation (`transcript.ttl`): `plan_record` reads it, or the journal while the plan runs,
for whoever shows what a plan did (the console's task page).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from hub.llm import Entry, ToolCall
from hub.llm.transcript import TRANSCRIPT
from hub.store import SkillStateStore

__all__ = [
    "CallRecord",
    "Journal",
    "Spent",
    "StepRecord",
    "load_conversation",
    "plan_record",
    "save_conversation",
]


JOURNAL_KEPT = timedelta(days=7)
"""How long a journal outlives its last write (a plan whose task ended drops it at once)."""


class CallRecord(BaseModel):
    """One tool call of the running step."""

    call: ToolCall
    state: Literal["pending", "running", "done"] = "pending"
    partner: str | None = None
    partner_task: str | None = None
    partner_context: str | None = None
    result: str | None = None
    """What goes back to the model, once done."""
    started: datetime | None = None
    """When the call started (None before it does)."""


class StepRecord(BaseModel):
    """A model step or a tool call of the turn, once it ended."""

    kind: Literal["model_step", "tool_call"]
    started: datetime
    seconds: float
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    call_id: str = ""
    tool: str = ""
    partner: str | None = None
    partner_task: str | None = None
    state: str = ""
    """A tool call's outcome: completed, failed, unknown (no such tool), invalid, ..."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Spent(BaseModel):
    """What one turn has used so far."""

    steps: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0
    """Working time, the time parked on a question not counted."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def describe(self) -> str:
        return (
            f"{self.steps} model step(s), {self.tool_calls} tool call(s), {self.tokens} tokens, "
            f"${self.cost:.4f}, {self.seconds:.1f} s"
        )


class Journal(BaseModel):
    """One turn of a plan, as far as it has gone."""

    transcript: list[Entry] = Field(default_factory=list)
    turn_start: int = 0
    """Where this turn's entries begin in the transcript."""
    calls: list[CallRecord] = Field(default_factory=list)
    spent: Spent = Field(default_factory=Spent)
    answers_used: int = 0
    """How many of the caller's answers (to partners' and the model's questions) the plan
    has taken; a run that starts again skips that many before it asks anything."""
    answer_artifact: str = ""
    """The id of the artifact the model's text streams into."""
    started: datetime = Field(default_factory=lambda: datetime.now(UTC))
    """When the turn started."""
    steps: list[StepRecord] = Field(default_factory=list)
    """The model steps and tool calls that ended, in the order they did."""
    ended: bool = False
    """The task has ended: this is the plan's record, no longer a journal to go on from."""

    @staticmethod
    def key(task_id: str) -> str:
        return f"plan/{task_id}"

    @staticmethod
    def record_key(task_id: str) -> str:
        return f"plan/{task_id}/ended"

    @classmethod
    async def load(cls, store: SkillStateStore, task_id: str) -> Journal | None:
        raw = await store.load_state(cls.key(task_id))
        return None if raw is None else cls.model_validate_json(raw)

    async def save(self, store: SkillStateStore, task_id: str) -> None:
        """Write the journal, kept at most `JOURNAL_KEPT` (a task that ends drops it)."""
        raw = self.model_dump_json().encode()
        await store.save_state(self.key(task_id), raw, expires_at=datetime.now(UTC) + JOURNAL_KEPT)

    @classmethod
    async def drop(cls, store: SkillStateStore, task_id: str) -> None:
        await store.drop_state(cls.key(task_id))

    async def end(self, store: SkillStateStore, task_id: str, *, ttl: float) -> None:
        """The task has ended: keep this turn (its transcript, steps and spending) as the
        plan's record for `ttl` seconds, and drop the journal."""
        record = self.model_copy(
            update={
                "transcript": self.transcript[self.turn_start :],
                "turn_start": 0,
                "calls": [],
                "ended": True,
            }
        )
        expires = datetime.now(UTC) + timedelta(seconds=ttl)
        raw = record.model_dump_json().encode()
        await store.save_state(self.record_key(task_id), raw, expires_at=expires)
        await self.drop(store, task_id)

    def turn_text(self) -> str:
        """The model's text of this turn so far, as the caller has seen it stream."""
        return "\n\n".join(
            entry.text
            for entry in self.transcript[self.turn_start :]
            if entry.role == "assistant" and entry.text
        )


async def plan_record(store: SkillStateStore, task_id: str) -> Journal | None:
    """What the plan of task `task_id` has done: its journal while it runs, its record once
    the task ended (this turn only, `turn_start` 0), or None (no orchestrator ran the task,
    it has not finished a step yet, or its record expired)."""
    journal = await Journal.load(store, task_id)
    if journal is not None:
        return journal
    raw = await store.load_state(Journal.record_key(task_id))
    return None if raw is None else Journal.model_validate_json(raw)


def conversation_key(owner: str, context_id: str, skill_id: str) -> str:
    return f"transcript/{owner}/{context_id}/{skill_id}"


async def load_conversation(
    store: SkillStateStore, owner: str, context_id: str, skill_id: str
) -> list[Entry]:
    """The transcript earlier turns of this context left (none for a new context)."""
    raw = await store.load_state(conversation_key(owner, context_id, skill_id))
    return [] if raw is None else TRANSCRIPT.validate_json(raw)


async def save_conversation(
    store: SkillStateStore,
    owner: str,
    context_id: str,
    skill_id: str,
    transcript: list[Entry],
    *,
    max_bytes: int,
    ttl: float,
) -> None:
    """Keep `transcript` for the context's next message: whole turns, the oldest dropped
    until it fits `max_bytes` (the last turn is kept whatever its size, cut to the bound)."""
    raw = TRANSCRIPT.dump_json(transcript)
    while len(raw) > max_bytes:
        starts = [i for i, entry in enumerate(transcript) if entry.role == "user"]
        if len(starts) < 2:
            break
        transcript = transcript[starts[1] :]
        raw = TRANSCRIPT.dump_json(transcript)
    if len(raw) > max_bytes:
        transcript = [
            entry.model_copy(update={"text": entry.text[: max_bytes // 4]}) for entry in transcript
        ]
        raw = TRANSCRIPT.dump_json(transcript)
    expires = datetime.now(UTC) + timedelta(seconds=ttl)
    await store.save_state(conversation_key(owner, context_id, skill_id), raw, expires_at=expires)
