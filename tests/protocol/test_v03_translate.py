"""Translation of task objects, stream events and operation params between 0.3 and 1.0."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from hub import protocol as v1
from hub.protocol import v03
from hub.protocol.v03 import translate as t

from .samples import (
    PNG,
    WHEN_WIRE,
    auth_push_config,
    completed_task,
    stream_events,
    token_push_config,
    user_message,
)

USER_MESSAGE_V03: dict[str, Any] = {
    "kind": "message",
    "messageId": "msg-user-1",
    "contextId": "ctx-1",
    "taskId": "task-1",
    "role": "user",
    "parts": [
        {"kind": "text", "text": "Summarise the attached report", "metadata": {"lang": "en"}},
        {"kind": "file", "file": {"bytes": PNG, "name": "chart.png", "mimeType": "image/png"}},
        {
            "kind": "file",
            "file": {
                "uri": "https://files.example.com/report.pdf",
                "name": "report.pdf",
                "mimeType": "application/pdf",
            },
        },
        {"kind": "data", "data": {"rows": [{"region": "emea", "total": 12}], "complete": True}},
    ],
    "metadata": {"trace": "abc"},
    "extensions": ["https://example.com/ext/citations/v1"],
    "referenceTaskIds": ["task-0"],
}


def test_message_becomes_the_03_wire_form_with_kinds_and_lowercase_role() -> None:
    assert t.message_to_v03(user_message()).to_wire() == USER_MESSAGE_V03


def test_03_message_reads_back_as_the_same_10_message() -> None:
    parsed = v03.Message.model_validate(USER_MESSAGE_V03)
    assert t.message_to_v1(parsed) == user_message()


@pytest.mark.parametrize(
    "value", [[1, 2, 3], "plain", 42, 2.5, True, False, [], [{"nested": None}]]
)
def test_non_object_data_round_trips_through_v03(value: object) -> None:
    part = v1.Part(data=value, metadata={"source": "sensor"})
    legacy = t.part_to_v03(part)
    assert legacy.to_wire() == {
        "kind": "data",
        "data": {"value": value},
        "metadata": {"source": "sensor", "data_part_compat": True},
    }
    assert t.part_to_v1(legacy) == part


def test_non_object_data_without_metadata_gets_its_metadata_back_empty() -> None:
    part = v1.Part(data="x")
    assert t.part_to_v03(part).to_wire()["metadata"] == {"data_part_compat": True}
    assert t.part_to_v1(t.part_to_v03(part)) == part


def test_object_data_with_a_value_key_is_not_unwrapped_without_the_flag() -> None:
    legacy = v03.DataPart(data={"value": 3})
    assert t.part_to_v1(legacy) == v1.Part(data={"value": 3})


def test_task_with_history_and_artifacts_becomes_the_03_wire_form() -> None:
    wire = t.task_to_v03(completed_task()).to_wire()
    assert wire == {
        "kind": "task",
        "id": "task-1",
        "contextId": "ctx-1",
        "status": {
            "state": "completed",
            "message": {
                "kind": "message",
                "messageId": "msg-agent-1",
                "contextId": "ctx-1",
                "taskId": "task-1",
                "role": "agent",
                "parts": [{"kind": "text", "text": "done"}],
            },
            "timestamp": WHEN_WIRE,
        },
        "history": [
            USER_MESSAGE_V03,
            {
                "kind": "message",
                "messageId": "msg-agent-1",
                "contextId": "ctx-1",
                "taskId": "task-1",
                "role": "agent",
                "parts": [{"kind": "text", "text": "Here is the summary"}],
            },
        ],
        "artifacts": [
            {
                "artifactId": "art-1",
                "name": "summary",
                "description": "The report in five lines",
                "parts": [
                    {"kind": "text", "text": "Revenue grew."},
                    {
                        "kind": "data",
                        "data": {"value": [1, 2, 3]},
                        "metadata": {"data_part_compat": True},
                    },
                ],
                "metadata": {"pages": 1},
                "extensions": ["https://example.com/ext/citations/v1"],
            }
        ],
        "metadata": {"skill": "summarise"},
    }


def test_task_round_trips_through_03_json() -> None:
    task = completed_task()
    legacy = v03.Task.model_validate_json(t.task_to_v03(task).to_json())
    assert t.task_to_v1(legacy) == task


@pytest.mark.parametrize(
    ("legacy", "state"),
    [
        ("submitted", v1.TaskState.SUBMITTED),
        ("working", v1.TaskState.WORKING),
        ("input-required", v1.TaskState.INPUT_REQUIRED),
        ("auth-required", v1.TaskState.AUTH_REQUIRED),
        ("completed", v1.TaskState.COMPLETED),
        ("canceled", v1.TaskState.CANCELED),
        ("failed", v1.TaskState.FAILED),
        ("rejected", v1.TaskState.REJECTED),
        ("unknown", v1.TaskState.UNSPECIFIED),
    ],
)
def test_every_task_state_maps_both_ways(legacy: str, state: v1.TaskState) -> None:
    status = v03.TaskStatus.model_validate({"state": legacy})
    assert t.status_to_v1(status) == v1.TaskStatus(state=state)
    assert t.status_to_v03(v1.TaskStatus(state=state)).to_wire() == {"state": legacy}


def test_a_timestamp_without_zone_is_read_as_utc_and_written_with_z() -> None:
    status = v03.TaskStatus.model_validate({"state": "working", "timestamp": "2025-10-28T10:30:00"})
    assert t.status_to_v1(status).to_wire() == {
        "state": "TASK_STATE_WORKING",
        "timestamp": "2025-10-28T10:30:00.000Z",
    }


def test_unspecified_role_is_written_as_agent() -> None:
    message = v1.Message(message_id="m", role=v1.Role.UNSPECIFIED, parts=[v1.Part(text="hi")])
    assert t.message_to_v03(message).role is v03.Role.AGENT


@pytest.mark.parametrize("event", stream_events(), ids=lambda e: next(iter(e.to_wire())))
def test_every_stream_event_round_trips_through_03_json(event: v1.StreamResponse) -> None:
    final = t.is_final_v1(event)
    legacy = v03.parse_stream_event(t.stream_response_to_v03(event, final=final).to_json())
    assert t.stream_event_to_v1(legacy) == event


def test_stream_events_become_the_bare_03_events() -> None:
    events = stream_events()
    wires = [t.stream_response_to_v03(e, final=t.is_final_v1(e)).to_wire() for e in events]
    assert [wire["kind"] for wire in wires] == [
        "task",
        "status-update",
        "artifact-update",
        "status-update",
        "status-update",
        "message",
    ]
    assert wires[1] == {
        "kind": "status-update",
        "taskId": "task-1",
        "contextId": "ctx-1",
        "status": {"state": "working", "timestamp": WHEN_WIRE},
        "final": False,
        "metadata": {"seq": 1},
    }
    assert {key: wires[2][key] for key in ("append", "lastChunk")} == {
        "append": True,
        "lastChunk": True,
    }
    assert wires[3]["final"] is True
    assert wires[4]["final"] is True


def test_a_stream_ends_at_terminal_and_interrupted_states_and_at_a_message() -> None:
    assert [t.is_final_v1(event) for event in stream_events()] == [
        False,
        False,
        False,
        True,
        True,
        True,
    ]
    parked = v1.Task(id="t", context_id="c", status=v1.TaskStatus(state=v1.TaskState.AUTH_REQUIRED))
    assert t.is_final_v1(v1.StreamResponse(task=parked))


def test_missing_append_and_last_chunk_read_as_false() -> None:
    legacy = v03.parse_stream_event(
        {
            "kind": "artifact-update",
            "taskId": "t",
            "contextId": "c",
            "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]},
        }
    )
    update = t.stream_event_to_v1(legacy).artifact_update
    assert update is not None
    assert (update.append, update.last_chunk) == (False, False)


def test_send_result_is_the_bare_task_or_message_in_03() -> None:
    task_result = t.send_result_to_v03(v1.SendMessageResponse(task=completed_task()))
    assert isinstance(task_result, v03.Task)
    message = v1.Message(message_id="m", role=v1.Role.AGENT, parts=[v1.Part(text="hi")])
    message_result = t.send_result_to_v03(v1.SendMessageResponse(message=message))
    assert message_result.to_wire() == {
        "kind": "message",
        "messageId": "m",
        "role": "agent",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    assert t.send_result_to_v1(v03.parse_send_result(message_result.to_json())) == (
        v1.SendMessageResponse(message=message)
    )
    assert t.send_result_to_v1(task_result) == v1.SendMessageResponse(task=completed_task())


def test_send_params_become_a_send_message_request() -> None:
    params = v03.MessageSendParams.model_validate(
        {
            "message": USER_MESSAGE_V03,
            "configuration": {
                "acceptedOutputModes": ["text/plain"],
                "blocking": False,
                "historyLength": 5,
                "pushNotificationConfig": {
                    "id": "cfg-1",
                    "url": "https://hooks.example.com/a2a",
                    "token": "opaque",
                    "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "s3cret"},
                },
            },
            "metadata": {"skill": "summarise"},
        }
    )
    assert t.send_params_to_v1(params).to_wire() == {
        "message": user_message().to_wire(),
        "configuration": {
            "acceptedOutputModes": ["text/plain"],
            "taskPushNotificationConfig": {
                "id": "cfg-1",
                "url": "https://hooks.example.com/a2a",
                "token": "opaque",
                "authentication": {"scheme": "Bearer", "credentials": "s3cret"},
            },
            "historyLength": 5,
            "returnImmediately": True,
        },
        "metadata": {"skill": "summarise"},
    }


@pytest.mark.parametrize(
    ("blocking", "return_immediately"), [(None, False), (True, False), (False, True)]
)
def test_blocking_is_the_inverse_of_return_immediately(
    blocking: bool | None, return_immediately: bool
) -> None:
    params = v03.MessageSendParams.model_validate(
        {"message": USER_MESSAGE_V03, "configuration": {"blocking": blocking}}
    )
    configuration = t.send_params_to_v1(params).configuration
    assert configuration is not None
    assert configuration.return_immediately is return_immediately


@pytest.mark.parametrize(("legacy", "current"), [(None, None), (0, None), (3, 3)])
def test_a_03_history_length_of_zero_means_the_whole_history(
    legacy: int | None, current: int | None
) -> None:
    query = v03.TaskQueryParams(id="task-1", history_length=legacy)
    assert t.get_task_params_to_v1(query) == v1.GetTaskRequest(id="task-1", history_length=current)


def test_a_negative_03_history_length_is_not_read() -> None:
    with pytest.raises(ValidationError) as refused:
        v03.TaskQueryParams.model_validate({"id": "task-1", "historyLength": -1})
    assert [(problem["loc"], problem["type"]) for problem in refused.value.errors()] == [
        (("historyLength",), "greater_than_equal")
    ]


def test_send_request_round_trips_through_03() -> None:
    request = v1.SendMessageRequest(
        tenant="acme",
        message=user_message(),
        configuration=v1.SendMessageConfiguration(
            accepted_output_modes=["text/plain"],
            task_push_notification_config=auth_push_config(task_id=None),
            history_length=2,
            return_immediately=True,
        ),
        metadata={"k": "v"},
    )
    legacy = v03.MessageSendParams.model_validate_json(t.send_request_to_v03(request).to_json())
    assert legacy.configuration is not None
    assert legacy.configuration.blocking is False
    assert t.send_params_to_v1(legacy) == request.model_copy(update={"tenant": None})


@pytest.mark.parametrize("config", [token_push_config(), auth_push_config()], ids=["token", "auth"])
def test_task_push_configs_with_either_token_shape_round_trip(
    config: v1.TaskPushNotificationConfig,
) -> None:
    legacy = t.task_push_config_to_v03(config)
    parsed = v03.TaskPushNotificationConfig.model_validate_json(legacy.to_json())
    assert t.task_push_config_to_v1(parsed) == config


def test_push_config_authentication_becomes_a_list_of_schemes() -> None:
    assert t.task_push_config_to_v03(auth_push_config()).to_wire() == {
        "taskId": "task-1",
        "pushNotificationConfig": {
            "id": "cfg-auth",
            "url": "https://hooks.example.com/a2a",
            "authentication": {"schemes": ["Bearer"], "credentials": "s3cret"},
        },
    }


@pytest.mark.parametrize("schemes", [[], [""]])
def test_authentication_without_any_scheme_is_dropped(schemes: list[str]) -> None:
    legacy = v03.PushNotificationConfig.model_validate(
        {
            "url": "https://hooks.example.com",
            "authentication": {"schemes": schemes, "credentials": "x"},
        }
    )
    assert t.push_config_to_v1(legacy).authentication is None


def test_a_task_push_config_needs_a_task_id_in_03() -> None:
    with pytest.raises(ValueError, match="task id"):
        t.task_push_config_to_v03(token_push_config(task_id=None))
    legacy = t.task_push_config_to_v03(token_push_config(task_id=None), task_id="task-9")
    assert legacy.task_id == "task-9"


def test_a_03_get_without_config_id_asks_for_the_config_named_after_the_task() -> None:
    params = v03.GetTaskPushNotificationConfigParams.model_validate({"id": "task-1"})
    assert t.get_push_config_params_to_v1(params) == v1.GetTaskPushNotificationConfigRequest(
        task_id="task-1", id="task-1"
    )


def test_get_and_delete_push_config_params_round_trip() -> None:
    get = v1.GetTaskPushNotificationConfigRequest(task_id="task-1", id="cfg-1")
    assert t.get_push_config_request_to_v03(get).to_wire() == {
        "id": "task-1",
        "pushNotificationConfigId": "cfg-1",
    }
    assert t.get_push_config_params_to_v1(t.get_push_config_request_to_v03(get)) == get
    delete = v1.DeleteTaskPushNotificationConfigRequest(task_id="task-1", id="cfg-1")
    assert t.delete_push_config_params_to_v1(t.delete_push_config_request_to_v03(delete)) == delete


def test_list_push_configs_is_an_array_in_03_and_a_page_in_10() -> None:
    response = v1.ListTaskPushNotificationConfigsResponse(
        configs=[token_push_config(), auth_push_config(task_id=None)], next_page_token=""
    )
    legacy = t.list_push_configs_result_to_v03(response, task_id="task-1")
    assert [config.to_wire() for config in legacy] == [
        {
            "taskId": "task-1",
            "pushNotificationConfig": {
                "id": "cfg-token",
                "url": "https://hooks.example.com/a2a",
                "token": "opaque-123",
            },
        },
        t.task_push_config_to_v03(auth_push_config()).to_wire(),
    ]
    assert t.list_push_configs_result_to_v1(legacy).to_wire() == {
        "configs": [token_push_config().to_wire(), auth_push_config().to_wire()],
        "nextPageToken": "",
    }
    params = v03.ListTaskPushNotificationConfigParams(id="task-1")
    assert t.list_push_configs_params_to_v1(params) == v1.ListTaskPushNotificationConfigsRequest(
        task_id="task-1"
    )
    request = v1.ListTaskPushNotificationConfigsRequest(task_id="task-1", page_size=10)
    assert t.list_push_configs_request_to_v03(request) == params


def test_task_id_params_map_to_cancel_and_subscribe() -> None:
    params = v03.TaskIdParams(id="task-1", metadata={"reason": "user"})
    cancel = t.cancel_params_to_v1(params)
    assert cancel == v1.CancelTaskRequest(id="task-1", metadata={"reason": "user"})
    assert t.cancel_request_to_v03(cancel) == params
    subscribe = t.subscribe_params_to_v1(params)
    assert subscribe == v1.SubscribeToTaskRequest(id="task-1")
    assert t.subscribe_request_to_v03(subscribe) == v03.TaskIdParams(id="task-1")
    query = v1.GetTaskRequest(id="task-1", history_length=4)
    assert t.get_task_request_to_v03(query).to_wire() == {"id": "task-1", "historyLength": 4}


@pytest.mark.parametrize(
    ("code", "legacy"),
    [(-32001, -32001), (-32007, -32007), (-32008, -32603), (-32009, -32603), (-32602, -32602)],
)
def test_error_codes_new_in_10_become_internal_error_for_03_callers(code: int, legacy: int) -> None:
    assert t.error_code_to_v03(code) == legacy
