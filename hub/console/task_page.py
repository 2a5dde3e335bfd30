"""A task's page: status, messages, artifacts, metadata and delegations, live while the task
runs; cancel it, answer its question, download its files.

The same handlers serve the hub's own tasks (`/tasks/{id}`) and a partner's task reached
through the gateway (`/agents/{name}/tasks/{id}`): the operations come from
`HubState.service_for`, as for the A2A endpoints.
"""

from __future__ import annotations

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
    visitor_of,
)
from hub.console.children import delegation_view
from hub.console.live import task_stream
from hub.console.render import page, problem
from hub.console.sending import send, task_path
from hub.console.task_view import TaskView, file_content, task_view
from hub.console.tree import delegation_of
from hub.errors import ProtocolError
from hub.protocol import (
    CancelTaskRequest,
    GetTaskRequest,
    SubscribeToTaskRequest,
    Task,
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


async def _task(request: AnyRequest, visitor: Visitor) -> Task:
    agent, task_id = _target(request)
    with acting_as(request, visitor):
        service = hub_of(request).service_for(agent)
        return await service.get_task(GetTaskRequest(id=task_id), visitor.name)


async def _view(request: AnyRequest, visitor: Visitor) -> TaskView:
    agent, task_id = _target(request)
    task = await _task(request, visitor)
    # The ledger is the hub's own: a partner's task shows no children here.
    delegation = await delegation_of(request, task) if agent is None else delegation_view(task, [])
    base = task_path(console_of(request).path, task_id, agent)
    return task_view(task, base=base, delegation=delegation)


async def _render(request: AnyRequest, template: str) -> Template:
    visitor = visitor_of(request)
    agent, _ = _target(request)
    try:
        view = await _view(request, visitor)
    except ProtocolError as error:
        return problem(request, visitor, error)
    base = task_path(console_of(request).path, view.task_id, agent)
    return page(request, visitor, template, task=view, base=base, agent=agent or "")


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
        task = await _task(request, visitor)
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
        task = await _task(request, visitor)
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
