"""A plan's transcript as the task page shows it: the caller's message, each model turn (its
text, the tool calls it asked for with their arguments, the tokens and cost of its step) and
each tool's result, with what the turn spent in all.

It reads the plan through `hub.orchestrator.plan_record`, the journal the plan itself goes on
from, so the page shows what the plan holds, not a second account of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from hub.console.task_view import pretty_json
from hub.orchestrator import Journal, StepRecord

__all__ = ["CallView", "PlanView", "TurnView", "plan_view"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallView:
    """A tool call the model asked for."""

    call_id: str
    tool: str
    arguments: str
    """The arguments as formatted JSON."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnView:
    """One entry of the transcript."""

    role: str
    """`user` (the caller's message), `assistant` (a model step) or `tool` (a result)."""
    text: str
    calls: list[CallView]
    step: int
    """The model step's number (assistant turns), else 0."""
    tokens: str
    """The step's tokens (`1,200 in · 85 out`), or a tool call's outcome and duration."""
    cost: str
    tool: str
    partner: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanView:
    turns: list[TurnView]
    steps: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost: str
    """The turn's cost (`$0.0123`) when the model is priced, else ""."""
    seconds: float
    running: bool


def _cost(value: float) -> str:
    return f"${value:.4f}" if value else ""


def _tokens(step: StepRecord) -> str:
    return f"{step.input_tokens:,} in · {step.output_tokens:,} out"


def plan_view(plan: Journal) -> PlanView:
    """The transcript of the plan's turn (`plan` as `plan_record` gives it)."""
    model_steps = [step for step in plan.steps if step.kind == "model_step"]
    calls = {step.call_id: step for step in plan.steps if step.kind == "tool_call"}
    turns: list[TurnView] = []
    number = 0
    for entry in plan.transcript[plan.turn_start :]:
        step: StepRecord | None = None
        call: StepRecord | None = None
        if entry.role == "assistant":
            number += 1
            step = model_steps[number - 1] if number <= len(model_steps) else None
        elif entry.role == "tool":
            call = calls.get(entry.call_id or "")
        if call is not None:
            tokens = f"{call.state} · {call.seconds:.2f} s"
        else:
            tokens = _tokens(step) if step is not None else ""
        turns.append(
            TurnView(
                role=entry.role,
                text=entry.text,
                calls=[
                    CallView(call_id=c.id, tool=c.tool, arguments=pretty_json(c.arguments))
                    for c in entry.calls
                ],
                step=number if entry.role == "assistant" else 0,
                tokens=tokens,
                cost=_cost(step.cost) if step is not None else "",
                tool=entry.tool or "",
                partner=(call.partner or "") if call is not None else "",
            )
        )
    spent = plan.spent
    return PlanView(
        turns=turns,
        steps=spent.steps,
        tool_calls=spent.tool_calls,
        input_tokens=spent.input_tokens,
        output_tokens=spent.output_tokens,
        cost=_cost(spent.cost),
        seconds=spent.seconds,
        running=not plan.ended,
    )
