"""The chat: a conversation with a local skill (the orchestrator, `delegate` and `swarm`
among them) or a partner through the gateway, in one context, with the raw A2A events of
each turn beside it.

The page's script posts each turn to `/chat/turn`, which sends it with the same
`SendStreamingMessage` operation as the A2A endpoints (`SendMessage` to a target whose card
says it does not stream) and answers with its events as Server-Sent Events
(`live.turn_stream`), as the A2A endpoints frame them. Without the script
the same form posts to `/chat`, which sends it with `SendMessage` and goes to the task's
page (`sending.send`). `/try`, where the console once sent single messages, leads here.
"""

from __future__ import annotations

from litestar import get, post
from litestar.response import Redirect, Response, Template

from hub.console.access import (
    AnyRequest,
    Visitor,
    acting_as,
    console_of,
    form_and_files,
    hub_of,
    partners_of,
    visitor_of,
)
from hub.console.chat_turn import ChatTurn, chat_turn
from hub.console.live import turn_stream
from hub.console.partners import visible_skills
from hub.console.render import page, problem
from hub.console.sending import send
from hub.errors import ClientError, ProtocolError
from hub.protocol import SendMessageRequest, StreamResponse
from hub.swarm import STRATEGIES
from hub.tasks import TaskStream, Update
from hub.tasks.stream import Broadcast

__all__ = ["CHAT_ROUTES"]


async def _turn(request: AnyRequest, visitor: Visitor) -> ChatTurn:
    fields, files = await form_and_files(request, visitor)
    return await chat_turn(fields, files, default_skill=hub_of(request).settings.default_skill)


async def _streams(request: AnyRequest, visitor: Visitor, agent: str | None) -> bool:
    """Whether the target streams, as its card says: the hub's, and a partner's too (the
    gateway forwards a stream to a partner as it is asked, and a partner that does not
    stream refuses it)."""
    if not hub_of(request).service.card.card.capabilities.streaming:
        return False
    if agent is None:
        return True
    try:
        with acting_as(request, visitor):
            card = await partners_of(request, visitor).card(agent)
    except ClientError:
        return True  # unknown, out of reach or down: the operation says so
    return bool(card.capabilities.streaming)


@get("/chat")
async def chat_page(request: AnyRequest) -> Template:
    visitor = visitor_of(request)
    limits = hub_of(request).settings.limits
    return page(
        request,
        visitor,
        "chat.html",
        skills=sorted(visible_skills(request, visitor)),
        agents=list(partners_of(request, visitor)),
        strategies=STRATEGIES,
        max_body=limits.max_body,
    )


@post("/chat", status_code=303)
async def chat_send(request: AnyRequest) -> Response[bytes] | Template | Redirect:
    """The form without the page's script: sent, then to the task's page (or the reply)."""
    visitor = visitor_of(request)
    try:
        turn = await _turn(request, visitor)
    except ProtocolError as error:
        return problem(request, visitor, error)
    return await send(request, visitor, turn.message, agent=turn.agent, metadata=turn.metadata)


@post("/chat/turn", status_code=200)
async def chat_stream(request: AnyRequest) -> Response[bytes]:
    """One turn from the page's script: its events as they come, then `end`; a turn that
    cannot be sent is answered with the reason, as plain text, and the status it calls
    for."""
    visitor = visitor_of(request)

    async def start() -> TaskStream:
        turn = await _turn(request, visitor)
        outgoing = SendMessageRequest(message=turn.message, metadata=turn.metadata)
        streams = await _streams(request, visitor, turn.agent)
        with acting_as(request, visitor):
            service = hub_of(request).service_for(turn.agent)
            if streams:
                return await service.stream_message(outgoing, visitor.name)
            # SendMessage, which waits for the task to end or ask: its answer is the event.
            sent = await service.send_message(outgoing, visitor.name)
        answer = StreamResponse(task=sent.task, message=sent.message)
        return Broadcast.single(Update(answer, closes_stream=True))

    return await turn_stream(request, visitor, start)


@get("/try", status_code=301)
async def try_moved(request: AnyRequest) -> Redirect:
    return Redirect(path=f"{console_of(request).path}/chat", status_code=301)


CHAT_ROUTES = [chat_page, chat_send, chat_stream, try_moved]
