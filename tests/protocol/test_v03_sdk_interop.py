"""Our wire output checked against the official a2a-sdk's own models, in both directions.

1.0 JSON must parse into the SDK's protobuf types with unknown fields refused; 0.3 JSON must
validate with the SDK's 0.3 compatibility models; and JSON the SDK writes must parse with ours.
The SDK's own 0.3 conversions serve as a second opinion on our translation.
"""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

# The a2a-sdk comes with the test extra; without it the other protocol tests still run.
pytest.importorskip("a2a")

from a2a.compat.v0_3 import conversions as sdk_conversions
from a2a.compat.v0_3 import types as sdk03
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from pydantic import BaseModel

from hub import protocol as v1
from hub.protocol import v03
from hub.protocol.v03 import translate as t

from .samples import (
    auth_push_config,
    completed_task,
    stream_events,
    token_push_config,
    user_message,
    v03_card_document,
    v1_card_document,
)

P = TypeVar("P", bound=ProtoMessage)


def parse_proto(model: v1.WireModel, message: P) -> P:
    return json_format.Parse(model.to_json(), message, ignore_unknown_fields=False)


def sdk03_wire(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def list_tasks_response() -> v1.ListTasksResponse:
    return v1.ListTasksResponse(
        tasks=[completed_task()], next_page_token="", page_size=50, total_size=1
    )


def send_request() -> v1.SendMessageRequest:
    return v1.SendMessageRequest(
        tenant="acme",
        message=user_message(),
        configuration=v1.SendMessageConfiguration(
            accepted_output_modes=["text/plain"],
            task_push_notification_config=auth_push_config(task_id=None),
            history_length=3,
            return_immediately=True,
        ),
        metadata={"skill": "summarise"},
    )


V1_OBJECTS: list[tuple[str, v1.WireModel, ProtoMessage]] = [
    ("task", completed_task(), pb.Task()),
    ("message", user_message(), pb.Message()),
    ("card", v1.AgentCard.model_validate(v1_card_document()), pb.AgentCard()),
    ("upgraded-03-card", t.card_to_v1(v03_card_document()), pb.AgentCard()),
    ("send-request", send_request(), pb.SendMessageRequest()),
    ("send-response-task", v1.SendMessageResponse(task=completed_task()), pb.SendMessageResponse()),
    (
        "send-response-message",
        v1.SendMessageResponse(message=user_message()),
        pb.SendMessageResponse(),
    ),
    ("push-token", token_push_config(), pb.TaskPushNotificationConfig()),
    ("push-auth", auth_push_config(), pb.TaskPushNotificationConfig()),
    ("list-tasks", list_tasks_response(), pb.ListTasksResponse()),
    *[(f"stream-{i}", event, pb.StreamResponse()) for i, event in enumerate(stream_events())],
]


@pytest.mark.parametrize(
    ("model", "proto"), [o[1:] for o in V1_OBJECTS], ids=[o[0] for o in V1_OBJECTS]
)
def test_our_10_json_parses_into_the_sdk_protobuf_types(
    model: v1.WireModel, proto: ProtoMessage
) -> None:
    parsed = parse_proto(model, proto)
    back_wire = json_format.MessageToDict(parsed)
    if isinstance(model, v1.ListTasksResponse):
        # ProtoJSON leaves out the empty last-page token, which our model requires.
        back_wire.setdefault("nextPageToken", "")
    back = type(model).model_validate(back_wire)
    assert back == model


def test_10_objects_translated_from_03_parse_into_the_sdk_protobuf_types() -> None:
    legacy = v03.MessageSendParams.model_validate(t.send_request_to_v03(send_request()).to_wire())
    parse_proto(t.send_params_to_v1(legacy), pb.SendMessageRequest())
    for event in stream_events():
        legacy_event = t.stream_response_to_v03(event, final=t.is_final_v1(event))
        parse_proto(t.stream_event_to_v1(legacy_event), pb.StreamResponse())


V03_OBJECTS: list[tuple[str, v03.Task | v03.Message | v1.WireModel, type[BaseModel]]] = [
    ("task", t.task_to_v03(completed_task()), sdk03.Task),
    ("message", t.message_to_v03(user_message()), sdk03.Message),
    ("send-params", t.send_request_to_v03(send_request()), sdk03.MessageSendParams),
    (
        "push-token",
        t.task_push_config_to_v03(token_push_config()),
        sdk03.TaskPushNotificationConfig,
    ),
    ("push-auth", t.task_push_config_to_v03(auth_push_config()), sdk03.TaskPushNotificationConfig),
    ("card", t.card_to_v03(v1.AgentCard.model_validate(v1_card_document())), sdk03.AgentCard),
    (
        "get-push",
        t.get_push_config_request_to_v03(
            v1.GetTaskPushNotificationConfigRequest(task_id="t", id="c")
        ),
        sdk03.GetTaskPushNotificationConfigParams,
    ),
    (
        "delete-push",
        t.delete_push_config_request_to_v03(
            v1.DeleteTaskPushNotificationConfigRequest(task_id="t", id="c")
        ),
        sdk03.DeleteTaskPushNotificationConfigParams,
    ),
    (
        "query",
        t.get_task_request_to_v03(v1.GetTaskRequest(id="t", history_length=2)),
        sdk03.TaskQueryParams,
    ),
]
STREAM_TYPES: dict[str, type[BaseModel]] = {
    "task": sdk03.Task,
    "message": sdk03.Message,
    "status-update": sdk03.TaskStatusUpdateEvent,
    "artifact-update": sdk03.TaskArtifactUpdateEvent,
}


@pytest.mark.parametrize(
    ("model", "sdk_type"), [o[1:] for o in V03_OBJECTS], ids=[o[0] for o in V03_OBJECTS]
)
def test_our_03_json_validates_with_the_sdk_03_models(
    model: v1.WireModel, sdk_type: type[BaseModel]
) -> None:
    parsed = sdk_type.model_validate_json(model.to_json())
    assert sdk03_wire(parsed) == model.to_wire()


@pytest.mark.parametrize("event", stream_events(), ids=lambda e: next(iter(e.to_wire())))
def test_our_03_stream_events_validate_with_the_sdk_03_models(event: v1.StreamResponse) -> None:
    legacy = t.stream_response_to_v03(event, final=t.is_final_v1(event))
    parsed = STREAM_TYPES[legacy.kind].model_validate_json(legacy.to_json())
    assert sdk03_wire(parsed) == legacy.to_wire()
    response = sdk03.SendStreamingMessageSuccessResponse.model_validate(
        {"jsonrpc": "2.0", "id": 1, "result": legacy.to_wire()}
    )
    assert type(response.result) is STREAM_TYPES[legacy.kind]


def test_the_hybrid_card_validates_with_the_sdk_03_card_model() -> None:
    card = v1.AgentCard.model_validate(v1_card_document())
    hybrid = {**card.to_wire(), **t.card_v03_fields(card)}
    parsed = sdk03.AgentCard.model_validate(hybrid)
    assert sdk03_wire(parsed) == t.card_to_v03(card).to_wire()


def test_the_hybrid_card_parses_into_the_sdk_10_card_when_unknown_fields_are_ignored() -> None:
    card = v1.AgentCard.model_validate(v1_card_document())
    hybrid = {**card.to_wire(), **t.card_v03_fields(card)}
    parsed = json_format.ParseDict(hybrid, pb.AgentCard(), ignore_unknown_fields=True)
    assert v1.AgentCard.model_validate(json_format.MessageToDict(parsed)) == card


def sdk_task() -> pb.Task:
    task = pb.Task(id="task-7", context_id="ctx-7")
    task.status.state = pb.TASK_STATE_INPUT_REQUIRED
    task.status.timestamp.FromJsonString("2025-10-28T10:30:00.250Z")
    task.status.message.CopyFrom(
        pb.Message(message_id="q", role=pb.ROLE_AGENT, parts=[pb.Part(text="Which quarter?")])
    )
    message = task.history.add(message_id="m1", role=pb.ROLE_USER, context_id="ctx-7")
    message.parts.add(text="hi").metadata.update({"lang": "en"})
    message.parts.add(
        raw=b"\x00\x01binary", filename="a.bin", media_type="application/octet-stream"
    )
    message.parts.add(url="https://files.example.com/a.pdf", media_type="application/pdf")
    message.parts.add().data.struct_value.update({"a": "b"})
    message.parts.add().data.list_value.extend(["x", "y"])
    artifact = task.artifacts.add(artifact_id="art", name="draft")
    artifact.parts.add(text="partial")
    task.metadata.update({"skill": "interview"})
    return task


def test_sdk_10_json_parses_with_our_models() -> None:
    task = v1.Task.model_validate_json(json_format.MessageToJson(sdk_task()))
    assert task.status.state is v1.TaskState.INPUT_REQUIRED
    assert task.history is not None
    assert [part.to_wire() for part in task.history[0].parts] == [
        {"text": "hi", "metadata": {"lang": "en"}},
        {"raw": "AAFiaW5hcnk=", "filename": "a.bin", "mediaType": "application/octet-stream"},
        {"url": "https://files.example.com/a.pdf", "mediaType": "application/pdf"},
        {"data": {"a": "b"}},
        {"data": ["x", "y"]},
    ]
    card = pb.AgentCard()
    json_format.ParseDict(v1_card_document(), card)
    assert v1.AgentCard.model_validate_json(json_format.MessageToJson(card)) == (
        v1.AgentCard.model_validate(v1_card_document())
    )
    stream = pb.StreamResponse()
    stream.status_update.task_id = "task-7"
    stream.status_update.context_id = "ctx-7"
    stream.status_update.status.state = pb.TASK_STATE_COMPLETED
    assert v1.StreamResponse.model_validate_json(json_format.MessageToJson(stream)) == (
        v1.StreamResponse(
            status_update=v1.TaskStatusUpdateEvent(
                task_id="task-7",
                context_id="ctx-7",
                status=v1.TaskStatus(state=v1.TaskState.COMPLETED),
            )
        )
    )
    config = pb.TaskPushNotificationConfig(url="https://h.example", task_id="task-7")
    config.authentication.scheme = "Basic"
    assert v1.TaskPushNotificationConfig.model_validate_json(
        json_format.MessageToJson(config)
    ) == v1.TaskPushNotificationConfig(
        url="https://h.example",
        task_id="task-7",
        authentication=v1.AuthenticationInfo(scheme="Basic"),
    )
    listed = pb.ListTasksResponse(tasks=[sdk_task()], page_size=50, total_size=1)
    # ProtoJSON leaves out zero values unless asked; a 1.0 peer must send these REQ fields.
    text = json_format.MessageToJson(listed, always_print_fields_with_no_presence=True)
    assert v1.ListTasksResponse.model_validate_json(text).tasks[0].id == "task-7"


def test_our_03_translation_of_sdk_objects_matches_the_sdk_conversions() -> None:
    proto = sdk_task()
    ours = t.task_to_v03(v1.Task.model_validate_json(json_format.MessageToJson(proto)))
    assert ours.to_wire() == sdk03_wire(sdk_conversions.to_compat_task(proto))
    for event in stream_events()[:3]:
        proto_event = parse_proto(event, pb.StreamResponse())
        sdk_event = sdk_conversions.to_compat_stream_response(proto_event).result
        ours_event = t.stream_response_to_v03(event, final=t.is_final_v1(event))
        assert ours_event.to_wire() == sdk03_wire(sdk_event)


def sdk03_objects() -> list[BaseModel]:
    text = sdk03.Part(root=sdk03.TextPart(text="hello", metadata={"k": "v"}))
    file_bytes = sdk03.Part(
        root=sdk03.FilePart(file=sdk03.FileWithBytes(bytes="aGVsbG8=", mime_type="text/plain"))
    )
    file_uri = sdk03.Part(
        root=sdk03.FilePart(file=sdk03.FileWithUri(uri="https://f.example/x", name="x"))
    )
    wrapped = sdk03.Part(
        root=sdk03.DataPart(data={"value": [1, 2]}, metadata={"data_part_compat": True})
    )
    message = sdk03.Message(
        message_id="m1",
        role=sdk03.Role.user,
        parts=[text, file_bytes, file_uri, wrapped],
        context_id="c1",
        reference_task_ids=["t0"],
    )
    status = sdk03.TaskStatus(
        state=sdk03.TaskState.auth_required, timestamp="2025-10-28T10:30:00.250Z"
    )
    artifact = sdk03.Artifact(artifact_id="a1", parts=[text], name="out")
    config = sdk03.PushNotificationConfig(
        id="p1",
        url="https://hooks.example.com",
        token="tok",
        authentication=sdk03.PushNotificationAuthenticationInfo(
            schemes=["Bearer"], credentials="s"
        ),
    )
    return [
        message,
        sdk03.Task(
            id="t1", context_id="c1", status=status, history=[message], artifacts=[artifact]
        ),
        sdk03.TaskStatusUpdateEvent(task_id="t1", context_id="c1", status=status, final=True),
        sdk03.TaskArtifactUpdateEvent(
            task_id="t1", context_id="c1", artifact=artifact, append=False, last_chunk=True
        ),
        sdk03.MessageSendParams(
            message=message,
            configuration=sdk03.MessageSendConfiguration(
                blocking=False, history_length=2, push_notification_config=config
            ),
        ),
        sdk03.TaskPushNotificationConfig(task_id="t1", push_notification_config=config),
    ]


def to_core(model: BaseModel) -> ProtoMessage:
    if isinstance(model, sdk03.MessageSendParams):
        request = sdk03.SendMessageRequest(id=1, params=model)
        return sdk_conversions.to_core_send_message_request(request)
    if isinstance(model, sdk03.TaskPushNotificationConfig):
        return sdk_conversions.to_core_task_push_notification_config(model)
    response = sdk03.SendStreamingMessageSuccessResponse(id=1, result=model)
    return sdk_conversions.to_core_stream_response(response)


def to_ours(wire: str, model: BaseModel) -> v1.WireModel:
    if isinstance(model, sdk03.MessageSendParams):
        return t.send_params_to_v1(v03.MessageSendParams.model_validate_json(wire))
    if isinstance(model, sdk03.TaskPushNotificationConfig):
        return t.task_push_config_to_v1(v03.TaskPushNotificationConfig.model_validate_json(wire))
    return t.stream_event_to_v1(v03.parse_stream_event(wire))


@pytest.mark.parametrize("model", sdk03_objects(), ids=lambda m: type(m).__name__)
def test_sdk_03_json_parses_with_our_models_and_translates_as_the_sdk_does(
    model: BaseModel,
) -> None:
    wire = model.model_dump_json(by_alias=True, exclude_none=True)
    ours = to_ours(wire, model)
    core = json_format.MessageToDict(to_core(model))
    assert ours == type(ours).model_validate(core)


def test_sdk_03_card_parses_with_our_models_and_upgrades_as_the_sdk_does() -> None:
    document = v03_card_document()
    # The SDK keeps the last of several OAuth flows and we keep the first: give it one.
    del document["securitySchemes"]["oauth"]["flows"]["password"]
    # The SDK lists the main interface twice when 0.3's additionalInterfaces repeats it.
    del document["additionalInterfaces"][0]
    sdk_card = sdk03.AgentCard.model_validate(document)
    ours = t.card_to_v1(sdk03_wire(sdk_card))
    core = json_format.MessageToDict(sdk_conversions.to_core_agent_card(sdk_card))
    # The SDK names the interface version as the card did; we use major.minor.
    for interface in core["supportedInterfaces"]:
        interface["protocolVersion"] = "0.3"
    assert ours == v1.AgentCard.model_validate(core)
