"""How the CLI prints tasks, messages, events and tool results for people."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from hub.protocol import Message, StreamResponse, Task, TaskState, parts_text, state_name

__all__ = [
    "TERMINAL_OR_WAITING",
    "answer_hint",
    "camel_keys",
    "describe",
    "describe_event",
    "state_label",
    "task_row",
]

TERMINAL_OR_WAITING = {
    TaskState.COMPLETED,
    TaskState.FAILED,
    TaskState.CANCELED,
    TaskState.REJECTED,
    TaskState.INPUT_REQUIRED,
    TaskState.AUTH_REQUIRED,
}


_COLOURS = {
    "completed": "32",  # green
    "failed": "31",  # red
    "rejected": "31",
    "canceled": "31",
    "timeout": "31",  # a swarm branch that ran out of time, or could not be called
    "error": "31",
    "input-required": "33",  # yellow
    "auth-required": "33",
}


def colour_on() -> bool:
    """Colours only for a person at a terminal, and never with NO_COLOR set (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def state_label(state: TaskState | str, width: int = 0) -> str:
    """A state as every command prints it (`input-required`), padded to `width`, coloured on
    a terminal; `state` is a TaskState or a name already in that form (a tool result's, a
    swarm branch's)."""
    name = state_name(state) if isinstance(state, TaskState) else state
    code = _COLOURS.get(name)
    padded = name.ljust(width)
    return f"\033[{code}m{padded}\033[0m" if code and colour_on() else padded


def describe(result: Task | Message) -> str:
    if isinstance(result, Message):
        return f"message: {result.text()}"
    lines = [f"task {result.id} (context {result.context_id}): {state_label(result.status.state)}"]
    if result.status.message is not None:
        lines.append(f"  status: {result.status.message.text()}")
    for artifact in result.artifacts or []:
        texts = [text] if (text := parts_text(artifact.parts)) else []
        data = [json.dumps(part.data) for part in artifact.parts if part.data is not None]
        name = artifact.name or artifact.artifact_id
        # Data on a line of its own, as `call` prints it: a swarm's answer is its text, and
        # the branches' JSON beside it on one line read as part of that answer.
        if texts or not data:
            lines.append(f"  artifact {name}: {' '.join(texts)}")
        lines.extend(f"  artifact {name} data: {value}" for value in data)
    return "\n".join(lines)


def describe_event(event: StreamResponse) -> str:
    if event.task is not None:
        return f"[task] {event.task.id} {state_label(event.task.status.state)}"
    if event.message is not None:
        return f"[message] {event.message.text()}"
    if event.status_update is not None:
        plan = (event.status_update.metadata or {}).get("plan")
        if isinstance(plan, dict):
            return describe_plan_event(plan)
        status = event.status_update.status
        text = f" {status.message.text()}" if status.message else ""
        return f"[status] {state_label(status.state)}{text}"
    assert event.artifact_update is not None
    artifact = event.artifact_update.artifact
    return f"[artifact] {artifact.name or artifact.artifact_id}: {parts_text(artifact.parts)}"


def describe_plan_event(plan: dict[str, Any]) -> str:
    """One line for what an orchestrator did (a status update's `plan` metadata): a model
    step with its tokens, a tool call with its arguments, a tool's result."""
    event = plan.get("event")
    seconds = f"{plan.get('durationMs', 0) / 1000:.2f} s"
    if event == "model_step":
        calls = plan.get("toolCalls") or []
        then = f"calls {', '.join(calls)}" if calls else "answers"
        cost = plan.get("costUsd") or 0
        return (
            f"[model] step {plan.get('step')} ({plan.get('model')}): "
            f"{plan.get('inputTokens')} in / {plan.get('outputTokens')} out tokens"
            + (f", ${cost:.4f}" if cost else "")
            + f", {seconds}; {then}"
        )
    if event == "tool_call":
        arguments = ", ".join(
            f"{key}={json.dumps(value)[:80]}"
            for key, value in (plan.get("arguments") or {}).items()
        )
        partner = f" (partner {plan['partner']})" if plan.get("partner") else ""
        return f"[tool] {plan.get('tool')}({arguments}){partner}"
    if event == "tool_result":
        task = f", partner task {plan['partnerTaskId']}" if plan.get("partnerTaskId") else ""
        result = str(plan.get("result") or "").replace("\n", " ")
        if len(result) > 120:
            result = result[:117] + "..."
        return f"[tool] {plan.get('tool')} {plan.get('state')} in {seconds}{task}: {result}"
    return f"[plan] {json.dumps(plan)[:200]}"


def _shortened(value: Any) -> Any:
    """A tool argument as a line shows it: a long text cut to its start."""
    if isinstance(value, str) and len(value) > 80:
        return value[:77] + "..."
    if isinstance(value, dict | list) and len(json.dumps(value)) > 80:
        return "{...}" if isinstance(value, dict) else "[...]"
    return value


_OPAQUE = frozenset({"data", "item", "items", "answer", "answers", "metadata"})


def camel_keys(value: Any) -> Any:
    """`value` with its keys in camelCase, as A2A's JSON has them (`task_id` -> `taskId`), for
    every `--json` output. What an agent sent (`data`, `item`, `answer`, ...) is left as is."""
    if isinstance(value, dict):
        return {
            _camel(key): item if key in _OPAQUE else camel_keys(item) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [camel_keys(item) for item in value]
    return value


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.title() for word in rest)


def task_row(task: Task) -> str:
    """One line of `tasks list`: id, state, when it last changed, skill, context."""
    stamp = task.status.timestamp
    when = stamp.isoformat(timespec="seconds") if stamp else "-"
    skill = (task.metadata or {}).get("skill") or "-"
    return (
        f"{task.id}  {state_label(task.status.state, 14)}  {when:25}  {skill!s:12}  "
        f"context {task.context_id}"
    )


def answer_hint(answer_with: str, task_id: str | None, context_id: str | None = None) -> str:
    """The line that tells how to answer a task waiting for input."""
    context = f" --context-id {context_id}" if context_id else ""
    return f'  answer with: {answer_with} "..." --task-id {task_id}{context}'
