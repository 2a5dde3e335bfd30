"""Hypothesis strategies for the hub's 1.0 models, shared by the property tests of each
translation (0.3, gRPC): what any JSON peer could send, within what every form can hold."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

from hypothesis import strategies as st

from hub import protocol as v1
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
# Empty metadata has no distinct 0.3 form next to the data-part flag (nor a gRPC one), and the
# flag's own key is reserved for the 0.3 translation.
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
