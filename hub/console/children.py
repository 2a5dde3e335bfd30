"""A task's delegations as a tree: while its skill runs, the live tree the hub keeps in
memory (each partner call's state, progress and time as its events arrive, the swarm's
strategy from the start); once it has ended, the partner tasks its skill started (the
delegation ledger's lines) with, for a swarm, each branch's outcome from the swarm's result
artifact."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hub.console.task_view import state_label
from hub.protocol import Task, parts_text
from hub.store import ChildRecord
from hub.tasks.live_tree import LiveBranch, LiveTree

__all__ = ["ChildView", "DelegationView", "delegation_view", "live_view"]

_SWARM_ARTIFACT = "swarm"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildView:
    """One branch: a partner and the task it ran there."""

    agent: str
    task_id: str
    state: str
    """The branch's outcome (`completed`, `canceled`, `timeout`, ...) or, while it runs, the
    partner task's last known state (`pending` before the partner named its task)."""
    seconds: float | None
    """How long it took; while it runs, how long so far."""
    answer: str
    error: str
    note: str
    winner: bool
    started: float | None = None
    """When a branch still running started (epoch seconds), for its time to go on counting."""
    progress: str = ""
    """What the partner has streamed so far (chunks, characters)."""
    said: str = ""
    """The partner's last status text, while the branch runs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DelegationView:
    strategy: str
    """The swarm's strategy, or `delegate` for a single partner."""
    answer: str
    reason: str
    children: list[ChildView]
    live: bool = False
    """True while the skill runs (the tree changes on its own); False once it is stored."""


def _swarm_result(task: Task) -> dict[str, Any] | None:
    for artifact in task.artifacts or []:
        if artifact.name != _SWARM_ARTIFACT:
            continue
        for part in artifact.parts:
            if isinstance(part.data, dict) and isinstance(part.data.get("branches"), list):
                return part.data
    return None


def _answers_by_agent(task: Task) -> dict[str, str]:
    """What each partner answered a `delegate` task, from the artifacts marked with it."""
    answers: dict[str, list[str]] = {}
    for artifact in task.artifacts or []:
        agent = (artifact.metadata or {}).get("agent")
        if isinstance(agent, str):
            answers.setdefault(agent, []).append(parts_text(artifact.parts))
    return {agent: "\n".join(text for text in texts if text) for agent, texts in answers.items()}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def delegation_view(task: Task, lines: Sequence[ChildRecord]) -> DelegationView | None:
    """The tree below `task`, or None when it reached no partner."""
    result = _swarm_result(task)
    if result is None and not lines:
        return None
    by_task = {line.child_id: line for line in lines}
    children: list[ChildView] = []
    seen: set[str] = set()
    if result is not None:
        strategy = _text(result.get("strategy"))
        answer = _text(result.get("answer"))
        for branch in result["branches"]:
            if not isinstance(branch, dict):
                continue
            task_id = _text(branch.get("task_id"))
            line = by_task.get(task_id)
            seen.add(task_id)
            seconds = branch.get("seconds")
            state = _text(branch.get("state"))
            branch_answer = _text(branch.get("answer"))
            won = strategy == "race" and state == "completed" and branch_answer == answer
            children.append(
                ChildView(
                    agent=_text(branch.get("agent")),
                    task_id=task_id,
                    state=state,
                    seconds=float(seconds) if isinstance(seconds, int | float) else None,
                    answer=branch_answer,
                    error=_text(branch.get("error")),
                    note=line.note if line else "",
                    winner=won and not any(child.winner for child in children),
                )
            )
        reason = _text(result.get("reason"))
    else:
        strategy, answer, reason = "delegate", "", ""
    answers = _answers_by_agent(task)
    for line in lines:
        if line.child_id in seen:
            continue
        children.append(
            ChildView(
                agent=line.agent,
                task_id=line.child_id,
                state=state_label(line.state),
                seconds=None,
                answer=answers.get(line.agent, ""),
                error="",
                note=line.note,
                winner=False,
            )
        )
    return DelegationView(strategy=strategy, answer=answer, reason=reason, children=children)


def _progress(branch: LiveBranch) -> str:
    if not branch.chunks:
        return ""
    chunks = "1 chunk" if branch.chunks == 1 else f"{branch.chunks} chunks"
    return f"{chunks}, {branch.characters} characters"


def _live_child(branch: LiveBranch, now: float) -> ChildView:
    running = not branch.ended and branch.started is not None
    seconds = branch.seconds
    if running and branch.started is not None:
        seconds = max(0.0, now - branch.started)
    return ChildView(
        agent=branch.agent,
        task_id=branch.task_id or "",
        state=branch.state,
        seconds=seconds,
        answer=branch.answer or branch.text,
        error=branch.error,
        note="",
        winner=branch.winner,
        started=branch.started if running else None,
        progress=_progress(branch),
        said="" if branch.ended else branch.said,
    )


def live_view(tree: LiveTree) -> DelegationView:
    """The tree of a task whose skill runs, as the hub knows it now."""
    now = time.time()
    return DelegationView(
        strategy=tree.strategy,
        answer="",
        reason="",
        children=[_live_child(branch, now) for branch in tree.branches],
        live=True,
    )
