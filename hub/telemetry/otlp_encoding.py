"""Finished SDK spans as the bytes of an OTLP `ExportTraceServiceRequest`, written directly.

The SDK's exporter builds a protobuf message object for every span, attribute and value and
then serializes the tree; that costs several times what recording the span did. Here the
protobuf wire format is written straight from the spans: varints, little-endian fixed64 /
fixed32, and length-delimited fields (a nested message is encoded first, then prefixed with
its tag and length). The output says what the SDK's `encode_spans` says, field for field
(tests/telemetry/test_otlp_encoding.py parses both and compares them):

- spans grouped by resource, then by instrumentation scope, in order of first appearance;
- a resource's attributes and schema URL, a scope's name, version, attributes and schema URL;
- per span: trace and span id, trace state, parent span id, name, kind, start and end time,
  attributes, events (time, name, attributes), links (trace and span id, attributes, flags),
  the three dropped counts, status (message, code) and flags (the "has is-remote" bit, and
  the "is remote" bit when the parent is remote);
- attribute values: str, bool, int (int64), float (double), bytes, sequences (ArrayValue) and
  mappings (KeyValueList); a value protobuf could not hold (an int outside int64, a string
  that is not valid Unicode) drops that attribute and is logged, as the SDK does.

Field numbers are those of opentelemetry-proto (`trace/v1/trace.proto`,
`common/v1/common.proto`, `resource/v1/resource.proto`); proto3 leaves out scalars that
hold their default value, and so does this module.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanKind, StatusCode
from opentelemetry.trace.span import TraceState

__all__ = ["encode_spans"]

_logger = logging.getLogger(__name__)

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_INT64_MIN, _INT64_MAX, _UINT64 = -(2**63), 2**63 - 1, 2**64 - 1

_ONE_BYTE = [bytes((value,)) for value in range(0x80)]


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


# ExportTraceServiceRequest, ResourceSpans, ScopeSpans
_RESOURCE_SPANS = _tag(1, _LENGTH)
_RESOURCE, _SCOPE_SPANS, _RESOURCE_SCHEMA_URL = _tag(1, _LENGTH), _tag(2, _LENGTH), _tag(3, _LENGTH)
_SCOPE, _SPANS, _SCOPE_SCHEMA_URL = _tag(1, _LENGTH), _tag(2, _LENGTH), _tag(3, _LENGTH)
# Resource, InstrumentationScope
_RESOURCE_ATTRIBUTES = _tag(1, _LENGTH)
_SCOPE_NAME, _SCOPE_VERSION, _SCOPE_ATTRIBUTES = (
    _tag(1, _LENGTH),
    _tag(2, _LENGTH),
    _tag(3, _LENGTH),
)
# Span
_TRACE_ID, _SPAN_ID, _TRACE_STATE = _tag(1, _LENGTH), _tag(2, _LENGTH), _tag(3, _LENGTH)
_PARENT_SPAN_ID, _NAME, _KIND = _tag(4, _LENGTH), _tag(5, _LENGTH), _tag(6, _VARINT)
_START_TIME, _END_TIME = _tag(7, _FIXED64), _tag(8, _FIXED64)
_ATTRIBUTES, _DROPPED_ATTRIBUTES = _tag(9, _LENGTH), _tag(10, _VARINT)
_EVENTS, _DROPPED_EVENTS = _tag(11, _LENGTH), _tag(12, _VARINT)
_LINKS, _DROPPED_LINKS = _tag(13, _LENGTH), _tag(14, _VARINT)
_STATUS, _FLAGS = _tag(15, _LENGTH), _tag(16, _FIXED32)
# Span.Event
_EVENT_TIME, _EVENT_NAME = _tag(1, _FIXED64), _tag(2, _LENGTH)
_EVENT_ATTRIBUTES, _EVENT_DROPPED_ATTRIBUTES = _tag(3, _LENGTH), _tag(4, _VARINT)
# Span.Link
_LINK_TRACE_ID, _LINK_SPAN_ID = _tag(1, _LENGTH), _tag(2, _LENGTH)
_LINK_ATTRIBUTES, _LINK_DROPPED_ATTRIBUTES = _tag(4, _LENGTH), _tag(5, _VARINT)
_LINK_FLAGS = _tag(6, _FIXED32)
# Status
_STATUS_MESSAGE, _STATUS_CODE = _tag(2, _LENGTH), _tag(3, _VARINT)
# KeyValue, AnyValue, ArrayValue / KeyValueList
_KEY, _VALUE = _tag(1, _LENGTH), _tag(2, _LENGTH)
_STRING_VALUE, _BOOL_VALUE, _INT_VALUE = _tag(1, _LENGTH), _tag(2, _VARINT), _tag(3, _VARINT)
_DOUBLE_VALUE, _ARRAY_VALUE = _tag(4, _FIXED64), _tag(5, _LENGTH)
_KVLIST_VALUE, _BYTES_VALUE = _tag(6, _LENGTH), _tag(7, _LENGTH)
_VALUES = _tag(1, _LENGTH)

_TRUE, _FALSE = _BOOL_VALUE + b"\x01", _BOOL_VALUE + b"\x00"
# SpanFlags: the context's is-remote bit is known (0x100), and set (0x200).
_LOCAL_PARENT = _FLAGS + (0x100).to_bytes(4, "little")
_REMOTE_PARENT = _FLAGS + (0x300).to_bytes(4, "little")
_LINK_LOCAL = _LINK_FLAGS + (0x100).to_bytes(4, "little")
_LINK_REMOTE = _LINK_FLAGS + (0x300).to_bytes(4, "little")
_KINDS = {kind: _KIND + _varint(kind.value + 1) for kind in SpanKind}
# The ids' fields with their fixed lengths.
_TRACE_ID_16, _SPAN_ID_8, _PARENT_SPAN_ID_8 = (
    _TRACE_ID + b"\x10",
    _SPAN_ID + b"\x08",
    _PARENT_SPAN_ID + b"\x08",
)

_fixed64 = struct.Struct("<Q").pack
_double = struct.Struct("<d").pack


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field."""
    return tag + _varint(len(payload)) + payload


def _text(tag: bytes, text: str | None) -> bytes:
    """A string field, left out when empty (proto3)."""
    return _field(tag, text.encode()) if text else b""


def _count(tag: bytes, count: int) -> bytes:
    return tag + _varint(count) if count else b""


# A status without a message: its code alone (an empty status when unset).
_STATUSES = {code: _field(_STATUS, _count(_STATUS_CODE, code.value)) for code in StatusCode}


def _any_value(value: object) -> bytes:
    """The body of an `AnyValue` (the SDK's order of type tests: bool before int)."""
    kind = type(value)
    if kind is str:
        return _field(_STRING_VALUE, value.encode())  # type: ignore[attr-defined]
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is int:
        return _int_value(value)  # type: ignore[arg-type]
    if kind is float:
        return _DOUBLE_VALUE + _double(value)
    return _other_value(value)


def _int_value(value: int) -> bytes:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"{value} does not fit an int64")
    return _INT_VALUE + _varint(value & _UINT64)


def _other_value(value: object) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bool):
        return _TRUE if value else _FALSE
    if isinstance(value, str):
        return _field(_STRING_VALUE, value.encode())
    if isinstance(value, int):
        return _int_value(value)
    if isinstance(value, float):
        return _DOUBLE_VALUE + _double(value)
    if isinstance(value, bytes):
        return _field(_BYTES_VALUE, value)
    if isinstance(value, Sequence):
        items = b"".join([_field(_VALUES, _any_value(item)) for item in value])
        return _field(_ARRAY_VALUE, items)
    if isinstance(value, Mapping):
        pairs = b"".join([_field(_VALUES, _key_value(str(k), v)) for k, v in value.items()])
        return _field(_KVLIST_VALUE, pairs)
    raise TypeError(f"an attribute value of type {type(value).__name__} has no OTLP form")


def _key_value(key: str, value: object) -> bytes:
    return _text(_KEY, key) + _field(_VALUE, _any_value(value))


def _attributes(tag: bytes, attributes: Mapping[str, object] | None) -> bytes:
    """Each attribute as a repeated `KeyValue` field; one protobuf cannot hold is dropped."""
    if not attributes:
        return b""
    parts = []
    for key, value in attributes.items():
        try:
            if type(value) is str and len(value) <= _REMEMBERED_LENGTH:
                parts.append(_string_attribute(tag, key, value))
            else:
                parts.append(_field(tag, _key_value(key, value)))
        except (TypeError, ValueError) as error:  # UnicodeEncodeError is a ValueError
            _logger.warning("span attribute %r dropped from the OTLP export: %s", key, error)
    return b"".join(parts)


# Most string attributes repeat from span to span (method, path, state, protocol version):
# their fields are remembered, short ones only, so that the memory stays small.
_REMEMBERED_LENGTH = 128


@lru_cache(maxsize=2048)
def _string_attribute(tag: bytes, key: str, value: str) -> bytes:
    return _field(tag, _key_value(key, value))


def _trace_state(state: TraceState) -> bytes:
    return _text(_TRACE_STATE, ",".join([f"{key}={value}" for key, value in state.items()]))


def _span(span: ReadableSpan) -> bytes:
    context = span.get_span_context()
    if context is None:
        raise ValueError(f"span {span.name!r} has no span context")
    parent = span.parent
    parts = [
        _TRACE_ID_16,
        context.trace_id.to_bytes(16, "big"),
        _SPAN_ID_8,
        context.span_id.to_bytes(8, "big"),
    ]
    if context.trace_state:
        parts.append(_trace_state(context.trace_state))
    if parent is not None:
        parts += (_PARENT_SPAN_ID_8, parent.span_id.to_bytes(8, "big"))
    if span.name:
        parts.append(_field(_NAME, span.name.encode()))
    parts.append(_KINDS[span.kind])
    if span.start_time:
        parts += (_START_TIME, _fixed64(span.start_time))
    if span.end_time:
        parts += (_END_TIME, _fixed64(span.end_time))
    if span.attributes:
        parts.append(_attributes(_ATTRIBUTES, span.attributes))
    if span.dropped_attributes:
        parts += (_DROPPED_ATTRIBUTES, _varint(span.dropped_attributes))
    if span.events:
        parts += [_field(_EVENTS, _event(event)) for event in span.events]
    if span.dropped_events:
        parts += (_DROPPED_EVENTS, _varint(span.dropped_events))
    if span.links:
        parts += [_field(_LINKS, _link(link)) for link in span.links]
    if span.dropped_links:
        parts += (_DROPPED_LINKS, _varint(span.dropped_links))
    status = span.status
    if status.description:
        message = _field(_STATUS_MESSAGE, status.description.encode())
        parts.append(_field(_STATUS, message + _count(_STATUS_CODE, status.status_code.value)))
    else:
        parts.append(_STATUSES[status.status_code])
    parts.append(_REMOTE_PARENT if parent is not None and parent.is_remote else _LOCAL_PARENT)
    return b"".join(parts)


def _event(event: Event) -> bytes:
    time = _EVENT_TIME + _fixed64(event.timestamp) if event.timestamp else b""
    return (
        time
        + _text(_EVENT_NAME, event.name)
        + _attributes(_EVENT_ATTRIBUTES, event.attributes)
        + _count(_EVENT_DROPPED_ATTRIBUTES, event.dropped_attributes)
    )


def _link(link: Link) -> bytes:
    context = link.context
    return b"".join(
        (
            _LINK_TRACE_ID,
            b"\x10",
            context.trace_id.to_bytes(16, "big"),
            _LINK_SPAN_ID,
            b"\x08",
            context.span_id.to_bytes(8, "big"),
            _attributes(_LINK_ATTRIBUTES, link.attributes),
            _count(_LINK_DROPPED_ATTRIBUTES, link.dropped_attributes),
            _LINK_REMOTE if context.is_remote else _LINK_LOCAL,
        )
    )


def _resource(resource: Resource) -> bytes:
    return _attributes(_RESOURCE_ATTRIBUTES, resource.attributes)


def _scope(scope: InstrumentationScope | None) -> bytes:
    if scope is None:
        return b""
    return (
        _text(_SCOPE_NAME, scope.name)
        + _text(_SCOPE_VERSION, scope.version)
        + _attributes(_SCOPE_ATTRIBUTES, scope.attributes)
    )


_Groups = dict[Resource, dict[InstrumentationScope | None, list[bytes]]]


def _grouped(spans: Iterable[ReadableSpan]) -> _Groups:
    """Encoded spans by resource, then scope, as the SDK groups them (equal resources and
    scopes share a group). A run of spans with the same resource and scope objects, the usual
    batch, hashes them once: a resource's hash serializes its attributes."""
    groups: _Groups = {}
    last_resource: Resource | None = None
    last_scope: InstrumentationScope | None = None
    current: list[bytes] = []
    for span in spans:
        resource, scope = span.resource, span.instrumentation_scope
        if resource is not last_resource or scope is not last_scope or not current:
            current = groups.setdefault(resource, {}).setdefault(scope, [])
            last_resource, last_scope = resource, scope
        current.append(_span(span))
    return groups


def encode_spans(spans: Sequence[ReadableSpan]) -> bytes:
    """The serialized `ExportTraceServiceRequest` carrying `spans`.

    Raises:
        ValueError: a span protobuf cannot carry (as the SDK's encoder would fail the batch).
    """
    parts = []
    for resource, scopes in _grouped(spans).items():
        body = [_field(_RESOURCE, _resource(resource))]
        for scope, encoded in scopes.items():
            scope_spans = [_field(_SCOPE, _scope(scope))]
            scope_spans += [_SPANS + _varint(len(span)) + span for span in encoded]
            scope_spans.append(_text(_SCOPE_SCHEMA_URL, scope.schema_url if scope else None))
            body.append(_field(_SCOPE_SPANS, b"".join(scope_spans)))
        body.append(_text(_RESOURCE_SCHEMA_URL, resource.schema_url))
        parts.append(_field(_RESOURCE_SPANS, b"".join(body)))
    return b"".join(parts)
