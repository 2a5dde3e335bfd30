"""A hub task's answer as MCP tool-call content.

Text parts become text content; data parts become JSON text and are in the structured
content (the hub's `ToolResult`, the one result shape every tool has); files become resource
links (by URL) or embedded resources (inline bytes). A task that did not complete is a tool
error (`isError: true`) whose text is the hub's own message for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import mcp_types as mcp

from hub.protocol import Message, Part, Task, joined_parts
from hub.tools.result import ToolResult

__all__ = ["call_result", "error_result", "part_text"]


def part_text(part: Part) -> str:
    """A part as one line of text: its text, its data as JSON, or its file's name."""
    if part.text is not None:
        return part.text
    if part.data is not None:
        return json.dumps(part.data, ensure_ascii=False, separators=(",", ":"))
    return part.filename or part.url or "(file)"


def _content(part: Part, where: str) -> mcp.ContentBlock:
    name = part.filename or "file"
    if part.url is not None:
        return mcp.ResourceLink(uri=part.url, name=name, mime_type=part.media_type)
    if part.raw is not None:
        blob = mcp.BlobResourceContents(
            uri=f"{where}/{name}", blob=part.raw, mime_type=part.media_type
        )
        return mcp.EmbeddedResource(resource=blob)
    return mcp.TextContent(text=part_text(part))


def _parts(reply: Task | Message) -> Iterable[Part]:
    if isinstance(reply, Message):
        return reply.parts
    # A text streamed in chunks is one text content, however its artifact keeps it.
    return (part for artifact in reply.artifacts or [] for part in joined_parts(artifact.parts))


def error_result(message: str) -> mcp.CallToolResult:
    """A tool error the model can read and act on."""
    return mcp.CallToolResult(content=[mcp.TextContent(text=message)], is_error=True)


def call_result(tool: str, agent: str, reply: Task | Message) -> mcp.CallToolResult:
    """The CallToolResult of a settled (or interrupted) hub task, or of a direct reply."""
    result = ToolResult.from_reply(tool, agent, reply)
    structured = result.to_dict()
    if result.state != "completed" and not result.needs_input:
        failed = error_result(result.message or f"the task ended {result.state}")
        return failed.model_copy(update={"structured_content": structured})
    where = f"a2a-hub://tasks/{reply.id if isinstance(reply, Task) else reply.message_id}"
    content = [_content(part, where) for part in _parts(reply)]
    if result.needs_input:
        question = result.message or "the agent asks for input"
        content.append(
            mcp.TextContent(
                text=f"{question}\n(answer by calling {tool} again with task_id "
                f"'{result.task_id}' and the answer as message)"
            )
        )
    elif not content:
        content.append(mcp.TextContent(text=result.text))
    return mcp.CallToolResult(content=content, structured_content=structured)
