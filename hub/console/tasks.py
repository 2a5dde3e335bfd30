"""The task list: newest first, a page at a time through ListTasks and its page tokens (so it
is the A2A listing, owner scope included), filtered by state, skill, partner, context,
caller, time and text in the messages, each filter kept across pages.

Each row shows what an operator scans for: a short id (the whole one in its link and title),
the state, the skill, the partners its delegations reached (the ledger), the caller when auth
is on, when it last changed (relative, the exact time on hover), how long it has run (created
to last change) and its last message. The skill, caller, creation time and partners are not
on the wire task: they come from the store's `describe_tasks` for the page's tasks, one read.

A filter value the visitor may not use (a state that is none, a skill or partner it cannot
see, another caller, a search too short) is answered with the page and a message saying
which filter to fix, as a 400.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

from litestar import get
from litestar.response import Template

from hub.console.access import (
    AnyRequest,
    Visitor,
    acting_as,
    console_of,
    hub_of,
    partners_of,
    visitor_of,
)
from hub.console.elapsed import ago, exact, span
from hub.console.partners import visible_skills
from hub.console.render import page
from hub.console.task_view import state_label
from hub.errors import InvalidParamsError, ProtocolError
from hub.protocol import ListTasksRequest, ListTasksResponse, Task, TaskState, utc_now
from hub.store import SEARCH_COUNT_LIMIT, TaskDetails

__all__ = ["FILTERS", "TASK_LIST_ROUTES", "TaskRow"]

PAGE_SIZE = 50
SHORT_ID = 8
_SNIPPET = 120
STATES = [state for state in TaskState if state is not TaskState.UNSPECIFIED]
FILTERS = ("state", "skill", "partner", "context", "caller", "q", "after")
"""The query parameters that filter the list, kept in every page link (`page` is the token)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRow:
    task_id: str
    short_id: str
    context_id: str
    state: str
    skill: str
    partners: tuple[str, ...]
    caller: str
    updated: str
    """The last change, ISO 8601 (the `<time>` element's datetime; "" when unknown)."""
    updated_ago: str
    updated_exact: str
    duration: str
    """Created to last change ("" when the creation time is not known)."""
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Filters:
    """The filters as the visitor gave them (trimmed), for the form and the page links."""

    values: Mapping[str, str]
    page: str

    @classmethod
    def of(cls, request: AnyRequest) -> _Filters:
        params = request.query_params
        values = {key: str(params.get(key, "")).strip() for key in FILTERS}
        return cls(values=values, page=str(params.get("page", "")).strip())

    def link(self, **extra: str) -> str:
        """The query string of a page of this list (empty filters left out)."""
        kept = {key: value for key, value in self.values.items() if value}
        return urlencode({**kept, **extra})


def _row(task: Task, details: TaskDetails | None, now: datetime) -> TaskRow:
    text = task.history[-1].text() if task.history else ""
    moment = task.status.timestamp
    created = details.created if details else None
    return TaskRow(
        task_id=task.id,
        short_id=task.id[:SHORT_ID],
        context_id=task.context_id or "",
        state=state_label(task.status.state),
        skill=details.skill if details else "",
        partners=details.partners if details else (),
        caller=details.owner if details else "",
        updated=moment.isoformat() if moment else "",
        updated_ago=ago(moment, now) if moment else "",
        updated_exact=exact(moment) if moment else "",
        duration=(
            span((moment - created).total_seconds()) if moment and created is not None else ""
        ),
        text=text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…",
    )


def _refused(name: str, message: str) -> InvalidParamsError:
    return InvalidParamsError(message, violations=[(name, message)])


def _after(value: str) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise _refused(
            "after",
            f"'Changed after' must be a date and time such as 2026-01-31T12:00, not {value!r}",
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _checked(
    filters: _Filters, visitor: Visitor, skills: list[str], partners: list[str], auth: bool
) -> None:
    """Refuse a filter value that names nothing the visitor may see."""
    values = filters.values
    if values["state"] and values["state"] not in {item.value for item in STATES}:
        raise _refused("state", f"unknown state {values['state']!r}; pick one from the list")
    if values["skill"] and values["skill"] not in skills:
        raise _refused("skill", f"no skill {values['skill']!r} you may use; pick one from the list")
    if values["partner"] and values["partner"] not in partners:
        raise _refused(
            "partner", f"no partner {values['partner']!r} you may reach; pick one from the list"
        )
    if values["caller"] and not auth:
        raise _refused("caller", "auth is off: tasks have no caller to filter on")
    if values["caller"] and values["caller"] != visitor.name:
        raise _refused(
            "caller",
            f"you see only your own tasks (caller {visitor.name!r}), not {values['caller']!r}",
        )


def _request(filters: _Filters) -> ListTasksRequest:
    values = filters.values
    return ListTasksRequest(
        status=TaskState(values["state"]) if values["state"] else None,
        context_id=values["context"] or None,
        status_timestamp_after=_after(values["after"]),
        page_size=PAGE_SIZE,
        page_token=filters.page or None,
        history_length=1,
    )


@get("/tasks")
async def task_list(request: AnyRequest) -> Template:
    visitor = visitor_of(request)
    console = console_of(request)
    filters = _Filters.of(request)
    skills = sorted(visible_skills(request, visitor))
    partners = sorted(partners_of(request, visitor))
    values = filters.values
    listed = ListTasksResponse(tasks=[], next_page_token="", page_size=PAGE_SIZE, total_size=0)
    error = ""
    try:
        _checked(filters, visitor, skills, partners, console.auth_enabled)
        with acting_as(request, visitor):
            listed = await hub_of(request).service.list_tasks(
                _request(filters),
                visitor.name,
                skill=values["skill"] or None,
                partner=values["partner"] or None,
                text=values["q"] or None,
            )
    except ProtocolError as refused:
        error = refused.message
    details = await console.store.describe_tasks([task.id for task in listed.tasks])
    now = utc_now()
    return page(
        request,
        visitor,
        "tasks.html",
        status_code=400 if error else 200,
        error=error,
        rows=[_row(task, details.get(task.id), now) for task in listed.tasks],
        total=(
            f"more than {SEARCH_COUNT_LIMIT:,}"
            if listed.total_size > SEARCH_COUNT_LIMIT
            else f"{listed.total_size:,}"
        ),
        filters=values,
        paged=bool(filters.page),
        states=[(state.value, state_label(state)) for state in STATES],
        skills=skills,
        partners=partners,
        callers=[visitor.name] if console.auth_enabled else [],
        next_query=filters.link(page=listed.next_page_token) if listed.next_page_token else "",
        first_query=filters.link(),
    )


TASK_LIST_ROUTES = [task_list]
