"""Property tests: whatever 1.0 can say that 0.3 can also say survives the trip both ways."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
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
from hub.protocol.v03.translate import DATA_PART_COMPAT

ids = st.text(min_size=1, max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=4)
# Empty metadata has no distinct 0.3 form next to the data-part flag, and the flag's own key
# is reserved for the translation.
metadata = st.none() | st.dictionaries(
    st.text(min_size=1, max_size=8).filter(lambda key: key != DATA_PART_COMPAT),
    json_values,
    min_size=1,
    max_size=3,
)
base64_bytes = st.binary(max_size=32).map(lambda raw: base64.b64encode(raw).decode())
optional_text = st.none() | st.text(min_size=1, max_size=20)
timestamps = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1), timezones=st.just(UTC)
).map(lambda moment: moment.replace(microsecond=moment.microsecond // 1000 * 1000))

v1_parts = st.one_of(
    st.builds(v1.Part, text=st.text(max_size=40), metadata=metadata),
    st.builds(
        v1.Part,
        raw=base64_bytes,
        filename=optional_text,
        media_type=optional_text,
        metadata=metadata,
    ),
    st.builds(
        v1.Part, url=ids, filename=optional_text, media_type=optional_text, metadata=metadata
    ),
    st.builds(v1.Part, data=json_values.filter(lambda value: value is not None), metadata=metadata),
)
v1_messages = st.builds(
    v1.Message,
    message_id=ids,
    context_id=st.none() | ids,
    task_id=st.none() | ids,
    role=st.sampled_from([v1.Role.USER, v1.Role.AGENT]),
    parts=st.lists(v1_parts, min_size=1, max_size=4),
    metadata=metadata,
    extensions=st.none() | st.lists(ids, max_size=2),
    reference_task_ids=st.none() | st.lists(ids, max_size=2),
)
v1_artifacts = st.builds(
    v1.Artifact,
    artifact_id=ids,
    name=optional_text,
    description=optional_text,
    parts=st.lists(v1_parts, min_size=1, max_size=3),
    metadata=metadata,
    extensions=st.none() | st.lists(ids, max_size=2),
)
v1_statuses = st.builds(
    v1.TaskStatus,
    state=st.sampled_from(list(v1.TaskState)),
    message=st.none() | v1_messages,
    timestamp=st.none() | timestamps,
)
v1_tasks = st.builds(
    v1.Task,
    id=ids,
    context_id=ids,
    status=v1_statuses,
    artifacts=st.none() | st.lists(v1_artifacts, max_size=2),
    history=st.none() | st.lists(v1_messages, max_size=3),
    metadata=metadata,
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
