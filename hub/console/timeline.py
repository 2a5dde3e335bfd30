"""A task's work as a waterfall: each model step, tool call and delegation as a bar placed by
when it started and sized by how long it took, relative to the task's start.

Bars come from the plan's record (`hub.orchestrator.plan_record`: every step and call with
its start and duration, the calls in flight from the journal) and, for a task that delegated
or swarmed, from its delegation tree: a branch's duration is the swarm's, and its start the
task's (the branches of a swarm start together). The page draws each bar as an SVG rectangle
whose `x` and `width` are per mille of the axis, so no style is computed in the browser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hub.console.children import ChildView
from hub.orchestrator import Journal

__all__ = ["AXIS", "Bar", "Timeline", "timeline"]

AXIS = 1000
"""The width of the axis in the bars' SVG units."""

_THINNEST = 3
"""A bar is at least this wide, so that a call of a millisecond still shows."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Bar:
    kind: str
    """`model`, `tool`, `partner` or `branch`: the bar's class."""
    label: str
    detail: str
    agent: str
    task_id: str
    """The partner's task, for a link to it through the gateway ("" when none)."""
    start: float
    """Seconds after the task's start."""
    seconds: float
    running: bool
    state: str
    x: int
    width: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeline:
    bars: list[Bar]
    total: float
    """Seconds the axis spans."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Span:
    kind: str
    label: str
    detail: str
    agent: str
    task_id: str
    start: float
    seconds: float
    running: bool
    state: str


def _plan_spans(plan: Journal, origin: datetime, now: datetime) -> list[_Span]:
    spans: list[_Span] = []
    number = 0
    for step in plan.steps:
        start = (step.started - origin).total_seconds()
        if step.kind == "model_step":
            number += 1
            spans.append(
                _Span(
                    kind="model",
                    label=f"model step {number}",
                    detail=f"{step.model} · {step.tokens:,} tokens",
                    agent="",
                    task_id="",
                    start=start,
                    seconds=step.seconds,
                    running=False,
                    state="completed",
                )
            )
        else:
            spans.append(
                _Span(
                    kind="partner" if step.partner else "tool",
                    label=step.tool,
                    detail=step.state,
                    agent=step.partner or "",
                    task_id=step.partner_task or "",
                    start=start,
                    seconds=step.seconds,
                    running=False,
                    state=step.state,
                )
            )
    if not plan.ended:
        last_end = max((s.start + s.seconds for s in spans), default=0.0)
        for call in plan.calls:
            if call.state == "done":
                continue
            start = (call.started - origin).total_seconds() if call.started else last_end
            spans.append(
                _Span(
                    kind="partner" if call.partner else "tool",
                    label=call.call.tool,
                    detail=call.state,
                    agent=call.partner or "",
                    task_id=call.partner_task or "",
                    start=start,
                    seconds=max((now - origin).total_seconds() - start, 0.0),
                    running=True,
                    state="working",
                )
            )
    return spans


def _branch_spans(children: Sequence[ChildView], shown: set[str]) -> list[_Span]:
    return [
        _Span(
            kind="branch",
            label=child.agent,
            detail=child.state,
            agent=child.agent,
            task_id=child.task_id,
            start=0.0,
            seconds=child.seconds,
            running=False,
            state=child.state,
        )
        for child in children
        if child.seconds is not None and child.task_id not in shown
    ]


def timeline(
    *,
    started: datetime | None,
    ended: datetime | None,
    now: datetime,
    plan: Journal | None,
    children: Sequence[ChildView],
) -> Timeline | None:
    """The waterfall of a task that started at `started` (the plan's start when unknown)
    and ended at `ended` (None while it runs), or None when it has nothing timed to show."""
    origin = started or (plan.started if plan is not None else None)
    spans = _plan_spans(plan, origin or plan.started, now) if plan is not None else []
    shown = {span.task_id for span in spans if span.task_id}
    # Partner calls of a plan are children too: shown once, as the plan's calls.
    spans += _branch_spans(children, shown)
    if not spans:
        return None
    until = ended or now
    elapsed = (until - origin).total_seconds() if origin is not None else 0.0
    total = max([elapsed, *(span.start + span.seconds for span in spans)])
    total = total if total > 0 else 1.0
    bars = []
    for span in spans:
        x = min(round(max(span.start, 0.0) / total * AXIS), AXIS - _THINNEST)
        width = max(round(span.seconds / total * AXIS), _THINNEST)
        bars.append(
            Bar(
                kind=span.kind,
                label=span.label,
                detail=span.detail,
                agent=span.agent,
                task_id=span.task_id,
                start=span.start,
                seconds=span.seconds,
                running=span.running,
                state=span.state,
                x=x,
                width=min(width, AXIS - x),
            )
        )
    return Timeline(bars=bars, total=total)
