"""One MCP tool call, run as a hub task through the operations every A2A binding uses.

The call's SendMessage is streamed (`stream_message`, as `SendStreamingMessage` is), so the
task is created, persisted, listed and owned like any other; every status message and
artifact it publishes becomes an MCP progress notification, in order. The stream ends when
the task is terminal or waits for input:

- terminal: the task's answer is the call's result (`content.call_result`);
- waiting (the skill, or the partner behind it, asks a question): on a 2026-07-28 connection
  the call returns an input-required result carrying an elicitation and the task id as its
  request state, and the client's retry with the answer continues the same task; on earlier
  revisions the question is asked at once with an elicitation request; a client that can do
  neither gets the question as the result, with the task id to answer it with
  (`task_id` argument);
- the client cancels the call (or goes away): the hub task is canceled, which cancels its
  partner tasks through the delegation ledger.
"""

from __future__ import annotations

import json
from contextlib import suppress
from typing import Any, Protocol

import anyio
import mcp_types as mcp
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hub.errors import ProtocolError
from hub.mcp.catalog import ToolCall
from hub.mcp.content import call_result, error_result, part_text
from hub.protocol import (
    CancelTaskRequest,
    Message,
    Part,
    SendMessageRequest,
    StreamResponse,
    Task,
    joined_parts,
    user_message,
)
from hub.tasks import TaskStream
from hub.tools.result import TaskFold

__all__ = ["ANSWER_KEY", "TaskOperations", "run_call"]

ANSWER_KEY = "answer"
"""The key of the one input request (and of the form field) that carries the answer."""

_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {ANSWER_KEY: {"type": "string", "title": "Answer"}},
    "required": [ANSWER_KEY],
}


class TaskOperations(Protocol):
    """The A2A operations a tool call uses (`hub.server.service.A2AService` has them)."""

    async def stream_message(
        self, request: SendMessageRequest, caller: str, *, protocol: str = "1.0"
    ) -> TaskStream: ...

    async def cancel_task(self, request: CancelTaskRequest, caller: str) -> Task: ...


def _progress_note(event: StreamResponse) -> str | None:
    """What a progress notification says about one task event (None: nothing to say)."""
    if event.status_update is not None:
        message = event.status_update.status.message
        text = message.text() if message is not None else ""
        return text or None
    if event.artifact_update is not None:
        artifact = event.artifact_update.artifact
        text = " ".join(part_text(part) for part in joined_parts(artifact.parts))
        return f"{artifact.name or 'artifact'}: {text}"
    return None


def _can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


class _Turns:
    """The turns of one tool call's hub task, for one MCP request."""

    def __init__(
        self, ops: TaskOperations, ctx: ServerRequestContext[Any, Any], *, caller: str
    ) -> None:
        self.ops = ops
        self.ctx = ctx
        self.caller = caller
        self.progress = 0
        self.task_id: str | None = None
        self.context_id: str | None = None

    async def run(self, call: ToolCall, request: SendMessageRequest) -> mcp.Result:
        follow_up = request.message.task_id is not None
        while True:
            reply = await self._turn(request, follow_up=follow_up)
            if not isinstance(reply, Task) or not reply.status.state.is_interrupted:
                return call_result(call.tool, call.agent, reply)
            message = reply.status.message
            question = (message.text() if message else "") or "the agent asks for input"
            if not _can_elicit(self.ctx):
                return call_result(call.tool, call.agent, reply)
            if self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                return self._input_required(question)
            if not self.ctx.session.can_send_request:
                return call_result(call.tool, call.agent, reply)
            answer = await self.ctx.session.elicit_form(
                question, _ANSWER_SCHEMA, related_request_id=self.ctx.request_id
            )
            text = answer_text(answer)
            if text is None:
                return await self.decline(answer.action)
            request = self.answer(text)
            follow_up = True

    def answer(self, text: str) -> SendMessageRequest:
        """The message that answers the waiting task's question."""
        message = user_message([Part(text=text)], context_id=self.context_id, task_id=self.task_id)
        return SendMessageRequest(message=message)

    async def decline(self, action: str) -> mcp.CallToolResult:
        """The user would not answer: the waiting task is canceled."""
        await self._cancel()
        return error_result(f"the question was not answered ({action}); the task is canceled")

    def _input_required(self, question: str) -> mcp.InputRequiredResult:
        elicit = mcp.ElicitRequest(
            params=mcp.ElicitRequestFormParams(message=question, requested_schema=_ANSWER_SCHEMA)
        )
        state = json.dumps({"taskId": self.task_id, "contextId": self.context_id})
        return mcp.InputRequiredResult(input_requests={ANSWER_KEY: elicit}, request_state=state)

    async def _turn(self, request: SendMessageRequest, *, follow_up: bool) -> Task | Message:
        fold = TaskFold(follow_up=follow_up)
        try:
            stream = await self.ops.stream_message(request, self.caller)
            async with stream:
                async for update in stream:
                    event = update.event
                    fold.add(event)
                    if fold.task is not None:
                        self.task_id = fold.task.id
                        self.context_id = fold.task.context_id
                    note = _progress_note(event)
                    if note is not None:
                        self.progress += 1
                        await self.ctx.session.report_progress(self.progress, message=note)
        except ProtocolError:
            raise  # refused: nothing was started, or the waiting task stays as it was
        except BaseException:
            await self._cancel()  # the client canceled the call, or went away
            raise
        reply = fold.reply()
        assert reply is not None, "a task stream ends with the task or the direct reply"
        return reply

    async def _cancel(self) -> None:
        """Cancel the task this call started, whatever cancels the call itself."""
        if self.task_id is None:
            return
        # Shielded: the call's own cancellation must not stop the task's. A task that is
        # terminal already is refused, and has nothing left to stop.
        with anyio.CancelScope(shield=True), suppress(ProtocolError):
            await self.ops.cancel_task(CancelTaskRequest(id=self.task_id), self.caller)


def answer_text(result: mcp.ElicitResult) -> str | None:
    """The answer an elicitation brought back; None when the user declined or canceled."""
    if result.action != "accept" or not result.content:
        return None
    value = result.content.get(ANSWER_KEY)
    if isinstance(value, list):
        return ", ".join(value)
    return None if value is None else str(value)


async def run_call(
    ops: TaskOperations,
    ctx: ServerRequestContext[Any, Any],
    call: ToolCall,
    params: mcp.CallToolRequestParams,
    *,
    caller: str,
) -> mcp.Result:
    """Run one `tools/call` as a hub task (or continue its task, when `params` answers the
    question an earlier round returned); the CallToolResult, or an InputRequiredResult."""
    turns = _Turns(ops, ctx, caller=caller)
    request = call.request
    if params.request_state is not None:
        try:
            state = json.loads(params.request_state)
            turns.task_id, turns.context_id = str(state["taskId"]), state.get("contextId")
        except (ValueError, KeyError, TypeError):
            return error_result("the requestState of this retry is not one this hub made")
        response = (params.input_responses or {}).get(ANSWER_KEY)
        if not isinstance(response, mcp.ElicitResult):
            return error_result(f"the retry carries no '{ANSWER_KEY}' input response")
        text = answer_text(response)
        if text is None:
            return await turns.decline(response.action)
        request = turns.answer(text)
    try:
        return await turns.run(call, request)
    except ProtocolError as refused:
        return error_result(refused.message)
