"""A hub task's answer as MCP content: every kind of part, and the tool error of a task that
did not complete."""

from __future__ import annotations

import base64

import mcp_types as mcp

from hub.mcp.content import call_result
from hub.protocol import Artifact, Part, Task, TaskState, TaskStatus, agent_message

RAW = base64.b64encode(b"%PDF-1.7").decode()


def task(state: TaskState, *, parts: list[Part] | None = None, status: str | None = None) -> Task:
    artifacts = [Artifact(artifact_id="a-1", name="answer", parts=parts)] if parts else None
    message = agent_message(status) if status else None
    return Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus(state=state, message=message),
        artifacts=artifacts,
    )


def test_text_data_and_files_become_text_resource_links_and_embedded_resources() -> None:
    parts = [
        Part(text="the summary"),
        Part(data={"pages": 3}, media_type="application/json"),
        Part(url="https://example.com/report.pdf", filename="report.pdf"),
        Part(raw=RAW, filename="scan.pdf", media_type="application/pdf"),
    ]
    result = call_result("a2a_research", "research", task(TaskState.COMPLETED, parts=parts))
    assert not result.is_error
    assert result.content == [
        mcp.TextContent(text="the summary"),
        mcp.TextContent(text='{"pages":3}'),
        mcp.ResourceLink(uri="https://example.com/report.pdf", name="report.pdf"),
        mcp.EmbeddedResource(
            resource=mcp.BlobResourceContents(
                uri="a2a-hub://tasks/t-1/scan.pdf", blob=RAW, mime_type="application/pdf"
            )
        ),
    ]
    structured = result.structured_content
    assert structured["state"] == "completed"
    assert structured["task_id"] == "t-1"
    assert structured["artifacts"][0]["data"] == [{"pages": 3}]


def test_a_failed_task_is_a_tool_error_with_its_status_message() -> None:
    ended = task(TaskState.FAILED, status="partner 'billing' ended the task failed: declined")
    result = call_result("a2a_billing", "billing", ended)
    assert result.is_error
    assert result.content == [
        mcp.TextContent(text="partner 'billing' ended the task failed: declined")
    ]
    assert result.structured_content["state"] == "failed"


def test_a_canceled_task_without_a_message_says_how_it_ended() -> None:
    result = call_result("a2a_slow", "slow", task(TaskState.CANCELED))
    assert result.is_error
    assert result.content == [mcp.TextContent(text="the task ended canceled")]


def test_a_question_for_a_client_that_cannot_answer_it_names_the_task_to_answer() -> None:
    waiting = task(TaskState.INPUT_REQUIRED, status="which colour?")
    result = call_result("a2a_asker", "asker", waiting)
    assert not result.is_error
    assert result.content == [
        mcp.TextContent(
            text="which colour?\n(answer by calling a2a_asker again with task_id 't-1' and the "
            "answer as message)"
        )
    ]
    assert result.structured_content["needs_input"] is True
