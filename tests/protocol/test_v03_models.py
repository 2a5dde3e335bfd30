"""The 0.3 wire models: strict on what the 0.3 schema requires, lenient on the rest."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from hub.protocol import v03

TEXT = {"kind": "text", "text": "hi"}


def message(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"kind": "message", "messageId": "m1", "role": "user", "parts": [TEXT]}
    return {key: value for key, value in {**base, **changes}.items() if value is not None}


@pytest.mark.parametrize("missing", ["messageId", "role", "parts"])
def test_a_message_without_a_required_field_is_rejected(missing: str) -> None:
    document = message()
    del document[missing]
    with pytest.raises(ValidationError):
        v03.Message.model_validate(document)


def test_a_message_without_parts_is_rejected() -> None:
    with pytest.raises(ValidationError):
        v03.Message.model_validate(message(parts=[]))


def test_unknown_fields_are_ignored() -> None:
    parsed = v03.Message.model_validate(message(futureField={"x": 1}))
    assert parsed.to_wire() == message()


def test_a_wrong_kind_is_rejected() -> None:
    with pytest.raises(ValidationError):
        v03.Message.model_validate(message(kind="task"))
    with pytest.raises(ValidationError):
        v03.Message.model_validate(message(parts=[{"kind": "video", "text": "x"}]))


@pytest.mark.parametrize(
    ("part", "model"),
    [
        ({"text": "hi"}, v03.TextPart),
        ({"file": {"uri": "https://x.example/a"}}, v03.FilePart),
        ({"data": {"a": 1}}, v03.DataPart),
    ],
)
def test_a_part_without_kind_is_read_by_its_content(part: dict[str, Any], model: type) -> None:
    parsed = v03.Message.model_validate(message(parts=[part]))
    assert isinstance(parsed.parts[0], model)


@pytest.mark.parametrize(
    ("part", "error"),
    [
        ({"text": "hi"}, "part_kind_missing"),
        ({"type": "image", "text": "a caption"}, "part_kind_missing"),
        ({"kind": "image", "text": "a caption"}, "part_kind_unknown"),
    ],
)
def test_a_request_part_must_name_a_known_kind(part: dict[str, Any], error: str) -> None:
    document = {"message": message(parts=[TEXT, part])}
    with pytest.raises(ValidationError) as refused:
        v03.MessageSendParams.model_validate(document, context=v03.REQUEST)
    assert [(problem["loc"], problem["type"]) for problem in refused.value.errors()] == [
        (("message", "parts", 1), error)
    ]


def test_file_with_bytes_and_file_with_uri_are_told_apart() -> None:
    parsed = v03.Message.model_validate(
        message(
            parts=[
                {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain"}},
                {"kind": "file", "file": {"uri": "https://x.example/a", "name": "a"}},
            ]
        )
    )
    files = [part.file for part in parsed.parts if isinstance(part, v03.FilePart)]
    assert [type(file) for file in files] == [v03.FileWithBytes, v03.FileWithUri]


def test_file_bytes_that_are_not_base64_are_rejected() -> None:
    with pytest.raises(ValidationError):
        v03.Message.model_validate(message(parts=[{"kind": "file", "file": {"bytes": "not b64!"}}]))


def test_a_file_with_neither_bytes_nor_uri_is_rejected() -> None:
    with pytest.raises(ValidationError):
        v03.Message.model_validate(message(parts=[{"kind": "file", "file": {"name": "a"}}]))


def test_data_must_be_an_object_in_03() -> None:
    with pytest.raises(ValidationError):
        v03.Message.model_validate(message(parts=[{"kind": "data", "data": [1, 2]}]))


def test_a_task_requires_its_context_id() -> None:
    with pytest.raises(ValidationError):
        v03.Task.model_validate({"kind": "task", "id": "t1", "status": {"state": "working"}})


def test_a_status_update_requires_final() -> None:
    with pytest.raises(ValidationError):
        v03.parse_stream_event(
            {
                "kind": "status-update",
                "taskId": "t1",
                "contextId": "c1",
                "status": {"state": "working"},
            }
        )


def test_an_unknown_state_value_is_rejected_but_unknown_itself_is_read() -> None:
    assert v03.TaskStatus.model_validate({"state": "unknown"}).state is v03.TaskState.UNKNOWN
    with pytest.raises(ValidationError):
        v03.TaskStatus.model_validate({"state": "paused"})


@pytest.mark.parametrize(
    ("document", "model"),
    [
        ({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "working"}}, v03.Task),
        (message(), v03.Message),
        (
            {"taskId": "t", "contextId": "c", "status": {"state": "working"}, "final": False},
            v03.TaskStatusUpdateEvent,
        ),
        (
            {
                "taskId": "t",
                "contextId": "c",
                "artifact": {"artifactId": "a", "parts": [TEXT]},
            },
            v03.TaskArtifactUpdateEvent,
        ),
        ({"id": "t", "contextId": "c", "status": {"state": "working"}}, v03.Task),
    ],
)
def test_stream_events_are_typed_by_kind_or_by_their_fields(
    document: dict[str, Any], model: type
) -> None:
    assert isinstance(v03.parse_stream_event(document), model)


def test_a_send_result_is_a_task_or_a_message() -> None:
    assert isinstance(
        v03.parse_send_result(
            b'{"kind":"message","messageId":"m","role":"agent",'
            b'"parts":[{"kind":"text","text":"x"}]}'
        ),
        v03.Message,
    )
    with pytest.raises(ValidationError):
        v03.parse_send_result({"kind": "status-update"})


def test_kinds_are_written_even_when_not_given() -> None:
    built = v03.Message(message_id="m", role=v03.Role.AGENT, parts=[v03.TextPart(text="x")])
    assert built.to_wire() == {
        "kind": "message",
        "messageId": "m",
        "role": "agent",
        "parts": [{"kind": "text", "text": "x"}],
    }


def test_push_params_require_their_ids() -> None:
    assert v03.GetTaskPushNotificationConfigParams.model_validate({"id": "t"}).id == "t"
    with pytest.raises(ValidationError):
        v03.DeleteTaskPushNotificationConfigParams.model_validate({"id": "t"})
    with pytest.raises(ValidationError):
        v03.TaskPushNotificationConfig.model_validate({"pushNotificationConfig": {"url": "u"}})
    with pytest.raises(ValidationError):
        v03.PushNotificationAuthenticationInfo.model_validate({"credentials": "x"})


def test_a_card_security_scheme_is_typed_by_its_type_field() -> None:
    card = v03.AgentCard.model_validate(
        {
            "name": "a",
            "description": "d",
            "url": "https://a.example",
            "version": "1",
            "capabilities": {},
            "defaultInputModes": [],
            "defaultOutputModes": [],
            "skills": [],
            "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X-Key"}},
        }
    )
    assert card.protocol_version == "0.3.0"
    assert card.security_schemes == {
        "k": v03.APIKeySecurityScheme.model_validate({"in": "header", "name": "X-Key"})
    }
    with pytest.raises(ValidationError):
        v03.AgentCard.model_validate(
            {**card.to_wire(), "securitySchemes": {"k": {"type": "kerberos"}}}
        )
