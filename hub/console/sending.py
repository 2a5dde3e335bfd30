"""Sending a message from a console form (the chat without its script, an answer to a
question): through the same `SendMessage` operation as the A2A endpoints, without waiting,
then to the task's page, which follows it live."""

from __future__ import annotations

from urllib.parse import quote

from litestar.response import Redirect, Response, Template

from hub.console.access import AnyRequest, Visitor, acting_as, console_of, hub_of
from hub.console.render import page, problem
from hub.console.task_view import MessageView, message_view
from hub.errors import ProtocolError
from hub.protocol import JsonObject, Message, SendMessageConfiguration, SendMessageRequest

__all__ = ["send", "task_path"]


def task_path(ui: str, task_id: str, agent: str | None = None) -> str:
    """The console path of a hub task, or of a partner's task seen through the gateway."""
    where = f"/agents/{quote(agent, safe='')}" if agent else ""
    return f"{ui}{where}/tasks/{quote(task_id, safe='')}"


async def send(
    request: AnyRequest,
    visitor: Visitor,
    message: Message,
    *,
    agent: str | None = None,
    metadata: JsonObject | None = None,
) -> Response[bytes] | Template | Redirect:
    """Send `message` to the hub (or, with `agent`, to that partner through the gateway) and
    answer with the task's page, or the reply when the skill answered with a message."""
    hub = hub_of(request)
    outgoing = SendMessageRequest(
        message=message,
        configuration=SendMessageConfiguration(return_immediately=True),
        metadata=metadata,
    )
    try:
        with acting_as(request, visitor):
            sent = await hub.service_for(agent).send_message(outgoing, visitor.name)
    except ProtocolError as error:
        return problem(request, visitor, error)
    if sent.task is not None:
        path = task_path(console_of(request).path, sent.task.id, agent)
        return Redirect(path=path, status_code=303)
    reply: MessageView | None = None
    if sent.message is not None:
        reply = message_view(sent.message, base="", index=0)
    return page(request, visitor, "reply.html", reply=reply, agent=agent or "")
