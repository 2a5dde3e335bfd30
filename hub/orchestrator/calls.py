"""The tool calls of one step of a plan, run at once.

Each call is reported before and after it runs (a `tool_call` and a `tool_result` status
update), inside an `execute_tool` span, and its end is written to the journal. What a tool
says, an error included, is its result for the model: a name outside the plan's tools, or
arguments that are not an object, never reach a tool. A partner call is the partner tool's
stream (the same call `delegate` makes); one the plan had started before it stopped follows
the partner's task again; a partner's question is asked of the caller and its answer sent
back to the partner's task.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any, Protocol

import anyio

from hub.errors import HubError
from hub.orchestrator.journal import CallRecord, StepRecord
from hub.orchestrator.toolset import PlanTool, Toolset
from hub.protocol import JsonObject
from hub.swarm import SwarmSpec, run_swarm
from hub.telemetry import current_telemetry, span
from hub.tools import RemoteAgentTool, ToolResult
from hub.tools.result import TaskFold

__all__ = ["PlanSide", "ToolCalls"]

_RESULT_SHOWN = 500
"""Characters of a tool's result shown in its status update (the model gets it whole)."""


class PlanSide(Protocol):
    """What the calls need of the plan they are part of."""

    @property
    def ended(self) -> bool:
        """The plan's task has ended (it was canceled)."""
        ...

    async def ask(self, question: str, metadata: JsonObject) -> str: ...

    async def save(self) -> None: ...

    async def report(self, text: str, event: JsonObject) -> None: ...

    def log(self, step: StepRecord) -> None:
        """Keep an ended call in the journal's steps."""
        ...


class ToolCalls:
    """Runs tool calls for one plan.

    Args:
        tools: the plan's tools.
        plan: the plan (its questions, its journal, its reports).
        conversation: the key of the caller's conversation, under which each partner's
            context is remembered (the map `delegate` keeps too).
    """

    def __init__(self, tools: Toolset, plan: PlanSide, conversation: str) -> None:
        self.tools = tools
        self.plan = plan
        self.conversation = conversation

    async def run(self, records: list[CallRecord]) -> None:
        """Run the calls not done yet, all at once."""
        async with anyio.create_task_group() as group:
            for record in records:
                if record.state != "done":
                    group.start_soon(self._call, record)

    async def _call(self, record: CallRecord) -> None:
        """Run one call (never raising for what the tool says: an error is its result),
        report it, and write its end to the journal."""
        call = record.call
        tool = self.tools.get(call.tool)
        started = time.perf_counter()
        if record.started is None:
            record.started = datetime.now(UTC)
        partner = tool.partner if tool is not None else None
        await self.plan.report(
            f"calling {call.tool}",
            {
                "event": "tool_call",
                "callId": call.id,
                "tool": call.tool,
                "partner": partner,
                "arguments": call.arguments,
            },
        )
        outcome = "completed"
        with span(
            f"execute_tool {call.tool}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.tool,
                "gen_ai.tool.call.id": call.id,
            },
        ):
            if tool is None:
                known = ", ".join(self.tools) or "none"
                text, outcome = (
                    f"error: there is no tool named '{call.tool}' (tools: {known})",
                    "unknown",
                )
            elif "_unreadable" in call.arguments:
                text, outcome = "error: the arguments are not a JSON object", "invalid"
            else:
                try:
                    text, outcome = await self._dispatch(record, tool)
                except (HubError, ValueError, KeyError) as exc:
                    text, outcome = f"error: {_reason(exc)}", "failed"
        record.state = "done"
        record.result = text
        seconds = time.perf_counter() - started
        self.plan.log(
            StepRecord(
                kind="tool_call",
                started=record.started,
                seconds=seconds,
                call_id=call.id,
                tool=call.tool,
                partner=record.partner or partner,
                partner_task=record.partner_task,
                state=outcome,
            )
        )
        metrics = current_telemetry().metrics
        if metrics is not None:
            metrics.plan_tool_call(call.tool, partner or "", outcome=outcome)
        await self.plan.report(
            f"{call.tool}: {outcome}",
            {
                "event": "tool_result",
                "callId": call.id,
                "tool": call.tool,
                "partner": partner,
                "partnerTaskId": record.partner_task,
                "state": outcome,
                "durationMs": round(seconds * 1000, 1),
                "result": text[:_RESULT_SHOWN],
            },
        )
        await self.plan.save()

    async def _dispatch(self, record: CallRecord, tool: PlanTool) -> tuple[str, str]:
        arguments = dict(record.call.arguments)
        if tool.kind == "ask":
            question = str(arguments.get("question") or "").strip()
            if not question:
                return "error: ask_user needs a question", "invalid"
            return await self.plan.ask(question, {"tool": "ask_user"}), "completed"
        if tool.kind == "swarm":
            return await self._swarm(tool, arguments)
        if tool.kind == "skill":
            assert tool.tool is not None
            result = await tool.tool.call(**arguments)
            while result.needs_input and result.task_id:
                answer = await self.plan.ask(
                    result.message or "the skill asks for input", {"tool": tool.spec.name}
                )
                result = await tool.tool.call(message=answer, task_id=result.task_id)
            return _result_text(result), result.state
        assert isinstance(tool.tool, RemoteAgentTool)
        assert tool.partner is not None
        return await self._partner(record, tool.tool, tool.partner, arguments)

    async def _partner(
        self, record: CallRecord, tool: RemoteAgentTool, partner: str, arguments: dict[str, Any]
    ) -> tuple[str, str]:
        record.partner = partner
        conversations = self.tools.toolbox.conversations
        conversation = self.conversation
        known = conversations.get(conversation, partner)
        if record.partner_task is None and known:
            arguments["context_id"] = known
        # A call that had started when the plan stopped follows the partner's task again.
        following = record.partner_task
        follow_up = False
        while True:
            fold = TaskFold(follow_up=follow_up)
            opened = tool.follow(following) if following else tool.stream(**arguments)
            try:
                async with opened as stream:
                    async for event in stream:
                        fold.add(event)
                        task = fold.task
                        if task is not None and record.partner_task != task.id:
                            record.partner_task = task.id
                            record.partner_context = task.context_id
                            record.state = "running"
                            await self.plan.save()
                        if fold.settled:
                            break
            except anyio.get_cancelled_exc_class():
                # The task canceled: its partner task too. The hub stopping: the partner
                # task goes on, and the plan follows it again when it resumes.
                if self.plan.ended and record.partner_task is not None and not fold.settled:
                    await tool.cancel(record.partner_task)
                raise
            reply = fold.reply()
            if reply is None:
                return f"error: partner '{partner}' ended its stream without an answer", "failed"
            result = ToolResult.from_reply(tool.name, partner, reply)
            if result.context_id:
                conversations.remember(conversation, partner, result.context_id)
            if not (result.needs_input and result.task_id):
                return _result_text(result), result.state
            answer = await self.plan.ask(
                result.message or f"partner '{partner}' asks for input",
                {"agent": partner, "tool": tool.name, "partnerTaskId": result.task_id},
            )
            arguments = {
                "message": answer or "(no text)",
                "task_id": result.task_id,
                "context_id": result.context_id,
            }
            following = None
            follow_up = True

    async def _swarm(self, tool: PlanTool, arguments: dict[str, Any]) -> tuple[str, str]:
        toolbox = self.tools.toolbox
        message = str(arguments.get("message") or "")
        agents = [a for a in arguments.get("agents") or [] if a in self.tools.partners]
        options: dict[str, Any] = {
            "strategy": tool.strategy,
            "agents": agents or list(self.tools.partners),
        }
        if arguments.get("items"):
            options["items"] = arguments["items"]
        result = await run_swarm(
            toolbox.partners,
            message,
            SwarmSpec.parse(options),
            limits=toolbox.swarm,
            stats=toolbox.stats,
        )
        if result.ok:
            answer = result.answer if result.answer is not None else "\n".join(result.answers)
            return answer, "completed"
        return f"error: the swarm reached no answer ({result.reason})", "failed"


def _result_text(result: ToolResult) -> str:
    if result.ok:
        return result.text or "(the agent answered with no text)"
    return f"error: the agent ended its task {result.state}" + (
        f": {result.text}" if result.text else ""
    )


def _reason(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    return str(message if isinstance(message, str) else exc) or type(exc).__name__
