"""The task list: newest first, filtered by state, skill, context and time, a page at a time
through ListTasks and its page tokens (so it is the A2A listing, owner scope included)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

from litestar import get
from litestar.response import Template

from hub.console.access import AnyRequest, acting_as, hub_of, visitor_of
from hub.console.partners import visible_skills
from hub.console.render import page, problem
from hub.console.task_view import state_label
from hub.errors import InvalidParamsError, ProtocolError
from hub.protocol import ListTasksRequest, Task, TaskState

__all__ = ["TASK_LIST_ROUTES", "TaskRow"]

PAGE_SIZE = 50
_SNIPPET = 120
STATES = [state for state in TaskState if state is not TaskState.UNSPECIFIED]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRow:
    task_id: str
    context_id: str
    state: str
    updated: str
    text: str


def _row(task: Task) -> TaskRow:
    text = task.history[-1].text() if task.history else ""
    return TaskRow(
        task_id=task.id,
        context_id=task.context_id or "",
        state=state_label(task.status.state),
        updated=(
            task.status.timestamp.isoformat(timespec="seconds") if task.status.timestamp else ""
        ),
        text=text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…",
    )


def _after(value: str) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidParamsError(
            f"'after' must be a date and time such as 2026-01-31T12:00, not {value!r}",
            violations=[("after", "not a date and time")],
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _query(filters: dict[str, str]) -> ListTasksRequest:
    state = filters["state"]
    if state and state not in {item.value for item in STATES}:
        raise InvalidParamsError(
            f"unknown state {state!r}", violations=[("state", "not a task state")]
        )
    return ListTasksRequest(
        status=TaskState(state) if state else None,
        context_id=filters["context"] or None,
        status_timestamp_after=_after(filters["after"]),
        page_size=PAGE_SIZE,
        page_token=filters["page"] or None,
        history_length=1,
    )


@get("/tasks")
async def task_list(request: AnyRequest) -> Template:
    visitor = visitor_of(request)
    params = request.query_params
    keys = ("state", "skill", "context", "after", "page")
    filters = {key: str(params.get(key, "")).strip() for key in keys}
    try:
        with acting_as(request, visitor):
            listed = await hub_of(request).service.list_tasks(
                _query(filters), visitor.name, skill=filters["skill"] or None
            )
    except ProtocolError as error:
        return problem(request, visitor, error)
    kept = {key: value for key, value in filters.items() if value and key != "page"}
    next_query = urlencode({**kept, "page": listed.next_page_token})
    return page(
        request,
        visitor,
        "tasks.html",
        rows=[_row(task) for task in listed.tasks],
        total=listed.total_size,
        filters=filters,
        states=[(state.value, state_label(state)) for state in STATES],
        skills=sorted(visible_skills(request, visitor)),
        next_query=next_query if listed.next_page_token else "",
        first_query=urlencode(kept),
    )


TASK_LIST_ROUTES = [task_list]
