"""A resumable skill for the resume tests, loaded by real hub processes.

`journaled` appends a line to `<task id>.starts` in the folder of `MARKS_ENV` at each start
(whether the run is resumed, and the partners it may reach). Its first run calls the partner
its request's metadata names (`partner`), whose task outlives a hub killed meanwhile; a
resumed run (or a first one given no partner) waits at the test's gate "finish" (`Gates`, at
`GATES_ENV`) and completes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hub import SkillContext, skill

from .replica_skills import MARKS_ENV, through_gate

__all__ = ["journaled", "starts"]


@skill(id="journaled", description="records each start; resumes after a crash", resumable=True)
async def journaled(ctx: SkillContext) -> str:
    task_id = ctx.task_id
    assert task_id is not None
    _mark(task_id, {"resumed": ctx.resumed, "agents": sorted(ctx.agents)})
    partner = ctx.metadata.get("partner")
    if isinstance(partner, str) and not ctx.resumed:
        await ctx.agents[partner].call(message=f"child of {task_id}")
    await through_gate(task_id, "finish")
    return f"done after {len(starts(Path(os.environ[MARKS_ENV]), task_id))} start(s)"


def _mark(task_id: str, line: dict[str, Any]) -> None:
    # One short line, appended at once.
    with Path(os.environ[MARKS_ENV], f"{task_id}.starts").open("a", encoding="utf-8") as marks:
        marks.write(json.dumps(line) + "\n")


def starts(marks: Path, task_id: str) -> list[dict[str, Any]]:
    """The lines `journaled` wrote for `task_id`, one per start."""
    path = marks / f"{task_id}.starts"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
