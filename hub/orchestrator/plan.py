"""One turn of a plan: the model and the tools, step by step, until the model answers.

Each step asks the model for its next move with the transcript so far; its text streams into
the task's `response` artifact as it comes; the tool calls it asks for run concurrently
(`hub.orchestrator.calls`: each partner call is the same partner call `delegate` makes, a
child of the task in the delegation ledger), and their results go back to the model as tool
results, never as instructions. Every step, call and result is a WORKING status update of
the task whose metadata (`plan`) says what happened. The journal
is written after every step, when a partner names its task and when a call ends, so a plan
that starts again goes on from there (`hub.orchestrator.journal`).

A partner's question, or the model's own (`ask_user`), parks the task in input-required; the
caller's answer resumes the partner's task, or is the tool's result. A plan that passes a
limit ends failed, naming the limit and what was spent; canceling the task aborts the model
call and cancels every partner task the plan started.
"""

from __future__ import annotations

import contextlib
import json
import time
from datetime import UTC, datetime

import anyio

from hub.config import OrchestratorSettings
from hub.errors import HubError, SkillError
from hub.llm import ChatModel, Entry, Step
from hub.orchestrator.calls import ToolCalls
from hub.orchestrator.journal import (
    CallRecord,
    Journal,
    StepRecord,
    load_conversation,
    save_conversation,
)
from hub.orchestrator.toolset import Toolset
from hub.partners.conversations import hub_conversation
from hub.protocol import (
    Artifact,
    JsonObject,
    Message,
    Part,
    TaskState,
    agent_message,
    new_id,
)
from hub.protocol.trace import current_scope
from hub.store import SkillStateStore
from hub.tasks import TaskRun
from hub.telemetry import current_telemetry, span
from hub.telemetry.budgets import check_model_budget, note_model_spend

__all__ = ["PLAN_KEY", "LimitReached", "Plan"]

PLAN_KEY = "plan"
"""Key, in a status update's metadata, of what the plan did (`event`: model_step, tool_call,
tool_result)."""


class LimitReached(SkillError):
    """The plan passed one of its limits."""


class Plan:
    """One turn of an orchestrator skill on one task.

    Args:
        run: the task.
        settings: the orchestrator's settings (instructions, limits, transcript bound).
        model: its model.
        tools: its tools, within the caller's reach.
        store: where the journal and the conversation are kept.
    """

    def __init__(
        self,
        run: TaskRun,
        settings: OrchestratorSettings,
        model: ChatModel,
        tools: Toolset,
        store: SkillStateStore,
    ) -> None:
        self.run = run
        self.settings = settings
        self.model = model
        self.tools = tools
        self.store = store
        scope = current_scope()
        self.caller = scope.caller if scope is not None else ""
        self.depth = len(scope.trail) if scope is not None else 1
        self.journal = Journal()
        self._asking = anyio.Lock()
        self._streamed = False
        self._held: str | None = None
        self._mark = time.monotonic()
        self._budget: anyio.CancelScope | None = None
        self._calls = ToolCalls(tools, self, hub_conversation(self.caller, run.context_id))

    @property
    def ended(self) -> bool:
        """The task has ended (canceled while the plan ran)."""
        return self.run.state.is_terminal

    # -- the turn --------------------------------------------------------------------------

    async def execute(self) -> None:
        limits = self.settings.limits
        if self.depth > limits.depth:
            raise LimitReached(
                f"plan refused: it would be {self.depth} hubs deep, past its limit depth "
                f"({limits.depth})"
            )
        await self._open()
        try:
            with anyio.CancelScope(
                deadline=anyio.current_time() + limits.wall_time - self.journal.spent.seconds
            ) as budget:
                self._budget = budget
                await self._turn()
            if budget.cancelled_caught:
                self._tick()
                raise LimitReached(self._limit_message("wall_time", f"{limits.wall_time:g} s"))
        except anyio.get_cancelled_exc_class():
            if self.run.state is TaskState.CANCELED:
                await self._forget()
            raise
        except HubError:
            await self._forget()
            raise

    async def _open(self) -> None:
        run = self.run
        journal = await Journal.load(self.store, run.task_id)
        if journal is None:
            earlier = await load_conversation(
                self.store, self.caller, run.context_id, self.settings.id
            )
            self.journal = Journal(
                transcript=[*earlier, Entry(role="user", text=_latest_text(run))],
                turn_start=len(earlier),
                answer_artifact=new_id(),
            )
            # Not written yet: a run that starts again before its first step would find
            # nothing more in it than in the task.
            return
        self.journal = journal
        # Answers the plan already took were asked before it started again: take them
        # again, in order, so the next question gets the next answer.
        for _ in range(journal.answers_used):
            if not run.replaying:
                break
            await run.ask(agent_message("(answered before the plan started again)"))
        text = journal.turn_text()
        if text:
            await self._emit(text)

    async def _turn(self) -> None:
        journal = self.journal
        while True:
            if journal.calls:
                await self._run_calls()
            self._check_before_step()
            step = await self._step()
            journal.transcript.append(Entry(role="assistant", text=step.text, calls=step.calls))
            if not step.calls:
                await self._answer()
                return
            limit = self.settings.limits.tool_calls
            if journal.spent.tool_calls + len(step.calls) > limit:
                raise LimitReached(self._limit_message("tool_calls", str(limit)))
            journal.spent.tool_calls += len(step.calls)
            journal.calls = [CallRecord(call=call) for call in step.calls]
            await self._flush()
            await self.save()

    async def _step(self) -> Step:
        journal = self.journal
        model = self.model
        started = time.perf_counter()
        started_at = datetime.now(UTC)
        first_text = not journal.turn_text()
        pieces: list[str] = []

        async def on_text(delta: str) -> None:
            if not pieces and not first_text:
                delta = "\n\n" + delta
            pieces.append(delta)
            await self._emit(delta)

        with span(
            f"chat {model.settings.model}",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": model.settings.provider,
                "gen_ai.request.model": model.settings.model,
            },
        ) as chat:
            # A turn whose tools must be used first asks for a call until one has answered.
            required = self.settings.tools.required and not any(
                entry.role == "tool" for entry in journal.transcript[journal.turn_start :]
            )
            check_model_budget()
            step = await model.step(
                self.settings.instructions,
                journal.transcript,
                self.tools.specs,
                on_text,
                call_required=required,
            )
            if chat is not None:
                chat.set_attribute("gen_ai.usage.input_tokens", step.input_tokens)
                chat.set_attribute("gen_ai.usage.output_tokens", step.output_tokens)
        if step.text and not pieces:
            await on_text(step.text)  # json mode: no deltas, the step's text at once
        cost = model.cost(step.input_tokens, step.output_tokens)
        spent = journal.spent
        spent.steps += 1
        spent.input_tokens += step.input_tokens
        spent.output_tokens += step.output_tokens
        spent.cost += cost
        seconds = time.perf_counter() - started
        journal.steps.append(
            StepRecord(
                kind="model_step",
                started=started_at,
                seconds=seconds,
                model=model.name,
                input_tokens=step.input_tokens,
                output_tokens=step.output_tokens,
                cost=cost,
            )
        )
        note_model_spend(tokens=step.input_tokens + step.output_tokens, cost=cost)
        metrics = current_telemetry().metrics
        if metrics is not None:
            metrics.model_call(
                model.name,
                input_tokens=step.input_tokens,
                output_tokens=step.output_tokens,
                cost=cost,
            )
        await self.report(
            f"model step {spent.steps}: "
            + (f"{len(step.calls)} tool call(s)" if step.calls else "answer"),
            {
                "event": "model_step",
                "step": spent.steps,
                "model": model.name,
                "inputTokens": step.input_tokens,
                "outputTokens": step.output_tokens,
                "costUsd": round(cost, 6),
                "durationMs": round(seconds * 1000, 1),
                "toolCalls": [call.tool for call in step.calls],
            },
        )
        limits = self.settings.limits
        if limits.tokens is not None and spent.tokens > limits.tokens:
            raise LimitReached(self._limit_message("tokens", str(limits.tokens)))
        if limits.cost is not None and spent.cost > limits.cost:
            raise LimitReached(self._limit_message("cost", f"${limits.cost:g}"))
        return step

    def _check_before_step(self) -> None:
        limits = self.settings.limits
        if self.journal.spent.steps >= limits.steps:
            raise LimitReached(self._limit_message("steps", str(limits.steps)))

    def _limit_message(self, limit: str, value: str) -> str:
        self._tick()
        return (
            f"plan stopped: it reached its limit {limit} ({value}); spent "
            f"{self.journal.spent.describe()}"
        )

    async def _answer(self) -> None:
        """The model answered: close the answer artifact, keep the conversation for the
        context's next message, and forget the journal."""
        journal = self.journal
        held, self._held = self._held, None
        await self._chunk(held or "", last=True)
        await save_conversation(
            self.store,
            self.caller,
            self.run.context_id,
            self.settings.id,
            journal.transcript,
            max_bytes=self.settings.transcript.max_bytes,
            ttl=self.settings.transcript.ttl,
        )
        await self._end()

    async def _forget(self) -> None:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(HubError):
                await self._end()

    async def _end(self) -> None:
        """Keep what the turn did as the plan's record, and drop its journal."""
        self._tick()
        await self.journal.end(self.store, self.run.task_id, ttl=self.settings.transcript.ttl)

    def log(self, step: StepRecord) -> None:
        self.journal.steps.append(step)

    # -- tool calls ------------------------------------------------------------------------

    async def _run_calls(self) -> None:
        journal = self.journal
        await self._calls.run(journal.calls)
        for record in journal.calls:
            journal.transcript.append(
                Entry(
                    role="tool",
                    call_id=record.call.id,
                    tool=record.call.tool,
                    text=record.result or "",
                )
            )
        # Not written here: every call's end is, and the step after writes the rest (a run
        # that starts again meanwhile finds the calls done and adds their results itself).
        journal.calls = []

    async def ask(self, question: str, metadata: JsonObject) -> str:
        """Park the task on `question` (one question at a time) and return the answer; the
        time parked does not count against the plan's wall time."""
        async with self._asking:
            self._tick()
            asked = anyio.current_time()
            message = agent_message(question).model_copy(update={"metadata": metadata})
            answer = await self.run.ask(message)
            if self._budget is not None:
                self._budget.deadline += anyio.current_time() - asked
            self._mark = time.monotonic()
            self.journal.answers_used += 1
            await self.save()
            return answer.text()

    # -- reporting -------------------------------------------------------------------------

    async def _emit(self, text: str) -> None:
        """Stream `text` into the answer artifact. The latest piece is held back until the
        next one comes, so that the answer's last piece is its last chunk."""
        if self._held is not None:
            await self._chunk(self._held, last=False)
        self._held = text

    async def _flush(self) -> None:
        """Send the piece held back: the step goes on to its tool calls."""
        held, self._held = self._held, None
        if held is not None:
            await self._chunk(held, last=False)

    async def _chunk(self, text: str, *, last: bool) -> None:
        first = not self._streamed
        self._streamed = True
        await self.run.artifact(
            Artifact(
                artifact_id=self.journal.answer_artifact, name="response", parts=[Part(text=text)]
            ),
            append=not first,
            last_chunk=last,
        )

    async def report(self, text: str, event: JsonObject) -> None:
        await self.run.status(
            TaskState.WORKING,
            agent_message(text),
            metadata={PLAN_KEY: event},
            history=False,
        )

    def _tick(self) -> None:
        now = time.monotonic()
        self.journal.spent.seconds += now - self._mark
        self._mark = now

    async def save(self) -> None:
        self._tick()
        await self.journal.save(self.store, self.run.task_id)


def _latest_text(run: TaskRun) -> str:
    """The caller's message this turn answers, as the model reads it: the text of the task's
    first message, then each of its data parts as JSON (files are not passed on)."""
    message: Message = run.message
    pieces = [message.text()] if message.text() else []
    pieces += [
        json.dumps(part.data, ensure_ascii=False) for part in message.parts if part.data is not None
    ]
    return "\n\n".join(pieces) or "(no text)"
