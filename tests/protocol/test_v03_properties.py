"""Property tests: whatever 1.0 can say that 0.3 can also say survives the trip both ways."""

from __future__ import annotations

from typing import Any

import pytest

# The a2a-sdk comes with the test extra; without it the other protocol tests still run.
pytest.importorskip("a2a")

from a2a.compat.v0_3 import types as sdk03
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st

from hub import protocol as v1
from hub.protocol import v03
from hub.protocol.v03 import translate as t
from tests.protocol.strategies import (
    base64_bytes,
    ids,
    json_objects,
    metadata,
    optional_text,
    v1_messages,
    v1_statuses,
    v1_tasks,
)


@given(v1_messages)
def test_message_to_v1_undoes_message_to_v03(message: v1.Message) -> None:
    assert t.message_to_v1(t.message_to_v03(message)) == message


@given(v1_messages)
def test_messages_survive_03_json_that_the_sdk_accepts(message: v1.Message) -> None:
    wire = t.message_to_v03(message).to_json()
    sdk03.Message.model_validate_json(wire)
    assert t.message_to_v1(v03.Message.model_validate_json(wire)) == message
    json_format.Parse(message.to_json(), pb.Message(), ignore_unknown_fields=False)


@given(v1_tasks)
def test_tasks_survive_03_json(task: v1.Task) -> None:
    wire = t.task_to_v03(task).to_json()
    sdk03.Task.model_validate_json(wire)
    assert t.task_to_v1(v03.Task.model_validate_json(wire)) == task


@given(v1_statuses, ids, ids, json_objects)
def test_status_updates_survive_03_with_final_set_where_a_stream_ends(
    status: v1.TaskStatus, task_id: str, context_id: str, extra: dict[str, Any]
) -> None:
    event = v1.StreamResponse(
        status_update=v1.TaskStatusUpdateEvent(
            task_id=task_id, context_id=context_id, status=status, metadata=extra or None
        )
    )
    final = t.is_final_v1(event)
    legacy = t.stream_response_to_v03(event, final=final)
    assert isinstance(legacy, v03.TaskStatusUpdateEvent)
    assert legacy.final is (status.state.is_terminal or status.state.is_interrupted)
    assert t.stream_event_to_v1(v03.parse_stream_event(legacy.to_json())) == event


v03_parts = st.one_of(
    st.builds(v03.TextPart, text=st.text(max_size=40), metadata=metadata),
    st.builds(
        v03.FilePart,
        file=st.builds(
            # By alias: the model's signature names the field `bytes`, which builds() fills.
            v03.FileWithBytes,
            name=optional_text,
            mime_type=optional_text,
            **{"bytes": base64_bytes},
        )
        | st.builds(v03.FileWithUri, uri=ids, name=optional_text, mime_type=optional_text),
        metadata=metadata,
    ),
    st.builds(v03.DataPart, data=json_objects, metadata=metadata),
)
v03_messages = st.builds(
    v03.Message,
    message_id=ids,
    role=st.sampled_from(list(v03.Role)),
    parts=st.lists(v03_parts, min_size=1, max_size=4),
    context_id=st.none() | ids,
    task_id=st.none() | ids,
    metadata=metadata,
    extensions=st.none() | st.lists(ids, max_size=2),
    reference_task_ids=st.none() | st.lists(ids, max_size=2),
)


@given(v03_messages)
def test_message_to_v03_undoes_message_to_v1(message: v03.Message) -> None:
    assert t.message_to_v03(t.message_to_v1(message)) == message
