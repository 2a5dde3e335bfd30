"""`send --stream` shows an orchestrator's steps as readable lines."""

from __future__ import annotations

from hub.cli.render import describe_event
from hub.protocol import StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent


def _update(plan: dict[str, object]) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t",
            context_id="c",
            status=TaskStatus(state=TaskState.WORKING),
            metadata={"plan": plan},
        )
    )


def test_a_model_step_shows_its_tokens_cost_time_and_calls() -> None:
    line = describe_event(
        _update(
            {
                "event": "model_step",
                "step": 2,
                "model": "default",
                "inputTokens": 155,
                "outputTokens": 44,
                "costUsd": 0.0012,
                "durationMs": 1690.0,
                "toolCalls": ["a2a_weather", "a2a_flights"],
            }
        )
    )
    assert line == (
        "[model] step 2 (default): 155 in / 44 out tokens, $0.0012, 1.69 s; "
        "calls a2a_weather, a2a_flights"
    )


def test_a_tool_call_and_its_result_show_the_partner_its_task_and_the_answer() -> None:
    call = describe_event(
        _update(
            {
                "event": "tool_call",
                "tool": "a2a_weather",
                "partner": "weather",
                "arguments": {"message": "Paris"},
            }
        )
    )
    result = describe_event(
        _update(
            {
                "event": "tool_result",
                "tool": "a2a_weather",
                "state": "completed",
                "partnerTaskId": "p-1",
                "durationMs": 70.0,
                "result": "Sunny\nwarm " + "x" * 200,
            }
        )
    )
    assert call == '[tool] a2a_weather(message="Paris") (partner weather)'
    assert result.startswith("[tool] a2a_weather completed in 0.07 s, partner task p-1: Sunny warm")
    assert result.endswith("...")
    assert "\n" not in result
