"""Property tests of the gRPC conversion (`hub.protocol.grpc.convert`), both ways, against the
JSON form: a model becomes the very message the a2a-sdk makes of its JSON, and a message read
from any JSON becomes the model that JSON validates to."""

from __future__ import annotations

import pytest

pytest.importorskip("grpc")
pytest.importorskip("a2a")

from a2a.types import a2a_pb2 as sdk_pb
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st

from hub import protocol as v1
from hub.protocol.base import WireModel
from hub.protocol.grpc import a2a_pb2 as pb
from hub.protocol.grpc.convert import from_proto, to_proto
from tests.protocol.strategies import (
    ids,
    json_objects,
    metadata,
    v1_artifacts,
    v1_messages,
    v1_statuses,
    v1_tasks,
)

stream_responses = st.one_of(
    st.builds(v1.StreamResponse, task=v1_tasks),
    st.builds(v1.StreamResponse, message=v1_messages),
    st.builds(
        v1.StreamResponse,
        status_update=st.builds(
            v1.TaskStatusUpdateEvent,
            task_id=ids,
            context_id=ids,
            status=v1_statuses,
            metadata=metadata,
        ),
    ),
    st.builds(
        v1.StreamResponse,
        artifact_update=st.builds(
            v1.TaskArtifactUpdateEvent,
            task_id=ids,
            context_id=ids,
            artifact=v1_artifacts,
            append=st.booleans(),
            last_chunk=st.booleans(),
            metadata=metadata,
        ),
    ),
)
send_requests = st.builds(
    v1.SendMessageRequest,
    message=v1_messages,
    configuration=st.none()
    | st.builds(
        v1.SendMessageConfiguration,
        accepted_output_modes=st.none() | st.lists(ids, min_size=1, max_size=2),
        history_length=st.none() | st.integers(min_value=0, max_value=2**31 - 1),
        return_immediately=st.booleans(),
    ),
    metadata=st.none() | json_objects.filter(bool),
)

CASES = [
    (v1_messages, pb.Message, sdk_pb.Message),
    (v1_tasks, pb.Task, sdk_pb.Task),
    (stream_responses, pb.StreamResponse, sdk_pb.StreamResponse),
    (send_requests, pb.SendMessageRequest, sdk_pb.SendMessageRequest),
]

NAMES = [ours.__name__ for _, ours, _ in CASES]


def _proto3(model: WireModel) -> WireModel:
    """`model` as proto3 can hold it: an optional list that is empty is no list (proto3 has
    no presence for repeated fields, and A2A's JSON reads `[]` and absence alike)."""
    changes: dict[str, object] = {}
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, WireModel):
            changes[name] = _proto3(value)
        elif isinstance(value, list):
            if not value and not field.is_required():
                changes[name] = None
            else:
                changes[name] = [_proto3(v) if isinstance(v, WireModel) else v for v in value]
    return model.model_copy(update=changes)


def _same_message_as_the_sdk_reads(model: WireModel, ours: type, theirs: type) -> None:
    proto = to_proto(model, ours)
    expected = json_format.Parse(model.to_json(), theirs())
    assert proto.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )


def _back_as_its_json_validates(model: WireModel, ours: type) -> None:
    proto = to_proto(model, ours)
    expected = type(model).model_validate_json(model.to_json())
    assert _proto3(from_proto(proto, type(model))) == _proto3(expected)


@pytest.mark.parametrize(
    ("models", "ours", "theirs"), CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_a_model_is_the_message_the_sdk_makes_of_its_json(
    models: st.SearchStrategy[WireModel], ours: type, theirs: type
) -> None:
    given(models)(lambda model: _same_message_as_the_sdk_reads(model, ours, theirs))()


@pytest.mark.parametrize(
    ("models", "ours", "theirs"), CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_a_message_comes_back_as_the_model_its_json_is(
    models: st.SearchStrategy[WireModel], ours: type, theirs: type
) -> None:
    given(models)(lambda model: _back_as_its_json_validates(model, ours))()


@given(v1_tasks)
def test_a_task_the_sdk_sends_is_read_as_its_json(task: v1.Task) -> None:
    sent = json_format.Parse(task.to_json(), sdk_pb.Task())
    received = pb.Task.FromString(sent.SerializeToString())
    assert _proto3(from_proto(received, v1.Task)) == _proto3(task)
