"""A task's page: status, the conversation (messages, artifacts), its work as a waterfall,
the orchestrator's transcript when a plan ran it, delegations, metadata and a link to its
trace; live while the task runs; cancel it, answer its question, download its files.

The same handlers serve the hub's own tasks (`/tasks/{id}`) and a partner's task reached
through the gateway (`/agents/{name}/tasks/{id}`): the operations come from
`HubState.service_for`, as for the A2A endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote

from litestar import get, post
from litestar.response import Redirect, Response, Template

from hub.console.access import (
    AnyRequest,
    Visitor,
    acting_as,
    console_of,
    form_of,
    hub_of,
    task_of_page,
    visitor_of,
)
from hub.console.children import delegation_view
from hub.console.live import task_stream
from hub.console.plan_view import PlanView, plan_view
from hub.console.render import page, problem
from hub.console.sending import send, task_path
from hub.console.task_view import TaskView, file_content, task_view
from hub.console.timeline import Timeline, timeline
from hub.console.tree import delegation_of
from hub.errors import ProtocolError
from hub.orchestrator import plan_record
from hub.protocol import (
    CancelTaskRequest,
    SubscribeToTaskRequest,
    id_time,
    user_message,
)
from hub.tasks import TaskStream

__all__ = ["TASK_ROUTES"]

_PATHS = ("/tasks/{task_id:str}", "/agents/{agent_name:str}/tasks/{task_id:str}")


def _paths(suffix: str) -> list[str]:
    return [path + suffix for path in _PATHS]


def _target(request: AnyRequest) -> tuple[str | None, str]:
    agent: str | None = request.path_params.get("agent_name")
    task_id: str = request.path_params["task_id"]
    return agent, task_id


@dataclass(frozen=True, slots=True, kw_only=True)
class _Page:
    """What the task page shows: the task, and for the hub's own tasks its plan and its
    waterfall."""

    task: TaskView
    plan: PlanView | None = None
    timeline: Timeline | None = None


async def _view(request: AnyRequest, visitor: Visitor) -> _Page:
    agent, task_id = _target(request)
    task = await task_of_page(request, visitor)
    base = task_path(console_of(request).path, task_id, agent)
    if agent is not None:
        # The ledger, the plans and the trace ids are the hub's own: a partner's task shows
        # its conversation only.
        return _Page(task=task_view(task, base=base, delegation=delegation_view(task, [])))
    # The task was read through the visitor's operations above: what follows is of a task
    # the visitor may see.
    store = console_of(request).store
    record = await store.get(task.id)
    journal = await plan_record(store, task.id)
    # The live tree while the skill runs here, the stored one after.
    delegation = await delegation_of(request, task)
    started = id_time(task.id)
    status = task.status
    view = task_view(
        task,
        base=base,
        delegation=delegation,
        caller=record.owner if record is not None else "",
        trace_url=hub_of(request).settings.ui.trace_link(record.trace_id if record else ""),
        started=started,
    )
    return _Page(
        task=view,
        plan=plan_view(journal) if journal is not None else None,
        timeline=timeline(
            started=started,
            ended=status.timestamp if status.state.is_terminal else None,
            now=datetime.now(UTC),
            plan=journal,
            children=delegation.children if delegation is not None else [],
        ),
    )


async def _render(request: AnyRequest, template: str) -> Template:
    visitor = visitor_of(request)
    agent, _ = _target(request)
    try:
        view = await _view(request, visitor)
    except ProtocolError as error:
        return problem(request, visitor, error)
    base = task_path(console_of(request).path, view.task.task_id, agent)
    return page(
        request,
        visitor,
        template,
        task=view.task,
        plan=view.plan,
        timeline=view.timeline,
        base=base,
        agent=agent or "",
        operator=visitor.caller.operator,
    )


@get(_paths(""))
async def task_page(request: AnyRequest) -> Template:
    return await _render(request, "task.html")


@get(_paths("/fragment"))
async def task_fragment(request: AnyRequest) -> Template:
    return await _render(request, "_task.html")


@get(_paths("/events"))
async def task_events(request: AnyRequest) -> Response[bytes]:
    visitor = visitor_of(request)
    agent, task_id = _target(request)

    async def subscribe() -> TaskStream:
        with acting_as(request, visitor):
            service = hub_of(request).service_for(agent)
            return await service.subscribe(SubscribeToTaskRequest(id=task_id), visitor.name)

    return await task_stream(request, visitor, subscribe)


@post(_paths("/cancel"), status_code=303)
async def cancel_task(request: AnyRequest) -> Template | Redirect:
    visitor = visitor_of(request)
    await form_of(request, visitor)
    agent, task_id = _target(request)
    try:
        with acting_as(request, visitor):
            service = hub_of(request).service_for(agent)
            await service.cancel_task(CancelTaskRequest(id=task_id), visitor.name)
    except ProtocolError as error:
        return problem(request, visitor, error)
    return Redirect(path=task_path(console_of(request).path, task_id, agent), status_code=303)


@post(_paths("/answer"), status_code=303)
async def answer_task(request: AnyRequest) -> Response[bytes] | Template | Redirect:
    visitor = visitor_of(request)
    fields = await form_of(request, visitor)
    agent, _ = _target(request)
    try:
        task = await task_of_page(request, visitor)
    except ProtocolError as error:
        return problem(request, visitor, error)
    text = fields.get("text", "").strip() or "(no text)"
    message = user_message(text, task_id=task.id, context_id=task.context_id)
    return await send(request, visitor, message, agent=agent)


@get(_paths("/files/{where:str}/{index:int}/{number:int}"))
async def task_file(request: AnyRequest) -> Response[bytes] | Template:
    visitor = visitor_of(request)
    params = request.path_params
    where: str = params["where"]
    index: int = params["index"]
    number: int = params["number"]
    try:
        task = await task_of_page(request, visitor)
    except ProtocolError as error:
        return problem(request, visitor, error)
    found = file_content(task, where, index, number)
    if found is None:
        return Response(content=b"no such file", status_code=404, media_type="text/plain")
    # Always a download, never rendered by the browser, whatever type the part claims.
    disposition = f"attachment; filename*=UTF-8''{quote(found.filename, safe='')}"
    return Response(
        content=found.content,
        media_type="application/octet-stream",
        headers={"Content-Disposition": disposition, "Cache-Control": "no-store"},
    )


TASK_ROUTES = [task_page, task_fragment, task_events, cancel_task, answer_task, task_file]
