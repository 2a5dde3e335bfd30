"""The hub's ended spans as the bytes of an OTLP `ExportTraceServiceRequest`, written directly.

The SDK's exporter builds a protobuf message object for every span, attribute and value and
then serializes the tree; that costs several times what recording the span did. Here the
protobuf wire format is written straight from the hub's span records (`SpanRecord`, with
their ids already in bytes): varints, little-endian fixed64 / fixed32, and length-delimited
fields (a nested message is encoded first, then prefixed with its tag and length). The output
says what the SDK's `encode_spans` says of the same spans as `ReadableSpan`s, field for field
(tests/telemetry/test_otlp_encoding.py parses both and compares them):

- spans grouped by resource, then by instrumentation scope, in order of first appearance;
- a resource's attributes and schema URL, a scope's name, version, attributes and schema URL;
- per span: trace and span id, parent span id, name, kind, start and end time, attributes,
  events (time, name, attributes), the dropped counts the span limits left, status (the
  code: the hub sets no message) and flags (the "has is-remote" bit, and the "is remote" bit
  when the parent is remote). The hub's spans carry no links and no trace state;
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

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import StatusCode

from hub.telemetry.otel import OtelTracer, SpanEvent, SpanRecord, dropped_attributes
from hub.telemetry.tracing import SpanKind

__all__ = ["encode_request", "encode_span", "encode_spans"]

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
_TRACE_ID, _SPAN_ID = _tag(1, _LENGTH), _tag(2, _LENGTH)
_PARENT_SPAN_ID, _NAME, _KIND = _tag(4, _LENGTH), _tag(5, _LENGTH), _tag(6, _VARINT)
_START_TIME, _END_TIME = _tag(7, _FIXED64), _tag(8, _FIXED64)
_ATTRIBUTES, _DROPPED_ATTRIBUTES = _tag(9, _LENGTH), _tag(10, _VARINT)
_EVENTS, _DROPPED_EVENTS = _tag(11, _LENGTH), _tag(12, _VARINT)
_STATUS, _FLAGS = _tag(15, _LENGTH), _tag(16, _FIXED32)
# Span.Event
_EVENT_TIME, _EVENT_NAME = _tag(1, _FIXED64), _tag(2, _LENGTH)
_EVENT_ATTRIBUTES, _EVENT_DROPPED_ATTRIBUTES = _tag(3, _LENGTH), _tag(4, _VARINT)
# Status
_STATUS_CODE = _tag(3, _VARINT)
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
_KINDS = {
    SpanKind.INTERNAL: _KIND + _varint(1),
    SpanKind.SERVER: _KIND + _varint(2),
    SpanKind.CLIENT: _KIND + _varint(3),
}
# The ids' fields with their fixed lengths.
_TRACE_ID_16, _SPAN_ID_8, _PARENT_SPAN_ID_8 = (
    _TRACE_ID + b"\x10",
    _SPAN_ID + b"\x08",
    _PARENT_SPAN_ID + b"\x08",
)

_fixed64 = struct.Struct("<Q").pack
# A span's start and end time fields, each a one-byte tag and a fixed64.
_times = struct.Struct("<BQBQ").pack
_START_TIME_TAG, _END_TIME_TAG = _START_TIME[0], _END_TIME[0]
_double = struct.Struct("<d").pack


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field."""
    return tag + _varint(len(payload)) + payload


def _text(tag: bytes, text: str | None) -> bytes:
    """A string field, left out when empty (proto3)."""
    return _field(tag, text.encode()) if text else b""


def _count(tag: bytes, count: int) -> bytes:
    return tag + _varint(count) if count else b""


# A span's status has no message: its code alone (an empty status when unset).
_UNSET_STATUS = _field(_STATUS, b"")
_ERROR_STATUS = _field(_STATUS, _count(_STATUS_CODE, StatusCode.ERROR.value))
# A span's last fields, its status and flags, by (failed, parent is remote).
_ENDINGS = {
    (error, remote): (_ERROR_STATUS if error else _UNSET_STATUS)
    + (_REMOTE_PARENT if remote else _LOCAL_PARENT)
    for error in (False, True)
    for remote in (False, True)
}


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
    parts: list[bytes] = []
    _put_attributes(parts, tag, attributes)
    return b"".join(parts)


def _put_attributes(parts: list[bytes], tag: bytes, attributes: Mapping[str, object]) -> None:
    """Append the pieces of `_attributes(tag, attributes)` to `parts`.

    A short string attribute, the usual kind, goes in as five pieces (the field's tag, its
    length, the remembered key field, the value's remembered tags and lengths, its bytes),
    with no intermediate message built."""
    one_byte = _ONE_BYTE
    string_heads = _STRING_HEADS
    small_ints = _SMALL_INT_VALUES
    for key, value in attributes.items():
        try:
            head = _KEY_FIELDS.get(key) or _key_field(key)
            kind = type(value)
            if kind is str:
                raw = value.encode()  # type: ignore[attr-defined]
                length = len(raw)
                size = len(head) + length + 4
                if size < 0x80:  # every length in the field fits one byte
                    parts += (tag, one_byte[size], head, string_heads[length], raw)
                    continue
                any_value = _STRING_VALUE + _varint(length) + raw
            elif kind is int and 0 <= value < _SMALL_INTS:  # type: ignore[operator]
                small = small_ints[value]  # type: ignore[call-overload]
                size = len(head) + len(small)
                if size < 0x80:
                    parts += (tag, one_byte[size], head, small)
                    continue
                any_value = small[2:]
            else:
                any_value = _any_value(value)
            pair = head + _VALUE + _varint(len(any_value)) + any_value
            parts += (tag, _varint(len(pair)), pair)
        except (TypeError, ValueError) as error:  # UnicodeEncodeError is a ValueError
            _logger.warning("span attribute %r dropped from the OTLP export: %s", key, error)


# `KeyValue.value` holding a string of each length below 126: the value field's tag and
# length, then the string's tag and length.
_STRING_HEADS = [
    _VALUE + _ONE_BYTE[length + 2] + _STRING_VALUE + _ONE_BYTE[length] for length in range(0x7E)
]
# `KeyValue.value` holding each int below 1024 (status codes, counts, attempts): the value
# field's tag and length, then the int's tag and varint.
_SMALL_INTS = 1024
_SMALL_INT_VALUES = [
    _VALUE + _ONE_BYTE[len(_INT_VALUE + _varint(number))] + _INT_VALUE + _varint(number)
    for number in range(_SMALL_INTS)
]
# The `KeyValue.key` field of each attribute key met, up to a bound on the memory it takes.
_KEY_FIELDS: dict[str, bytes] = {}
_REMEMBERED_KEYS = 4096


def _key_field(key: str) -> bytes:
    field = _text(_KEY, key)
    if len(_KEY_FIELDS) < _REMEMBERED_KEYS:
        _KEY_FIELDS[key] = field
    return field


def encode_span(span: SpanRecord) -> bytes:
    """One ended span as the bytes of an OTLP `Span` message.

    Raises:
        UnicodeEncodeError: its name is not valid Unicode.
    """
    attributes, dropped, events, dropped_events = span.limited()
    name = span.name.encode()
    parts = [_TRACE_ID_16, span.trace_id, _SPAN_ID_8, span.span_id]
    if span.parent_id is not None:
        parts += (_PARENT_SPAN_ID_8, span.parent_id)
    if name:
        parts += (_NAME, _varint(len(name)), name)
    parts += (
        _KINDS[span.kind],
        _times(_START_TIME_TAG, span.start_time, _END_TIME_TAG, span.end_time),
    )
    if attributes:
        _put_attributes(parts, _ATTRIBUTES, attributes)
    if dropped:
        parts += (_DROPPED_ATTRIBUTES, _varint(dropped))
    if events:
        parts += [_field(_EVENTS, _event(event)) for event in events]
    if dropped_events:
        parts += (_DROPPED_EVENTS, _varint(dropped_events))
    parts.append(_ENDINGS[span.error, span.parent_remote])
    return b"".join(parts)


def _event(event: SpanEvent) -> bytes:
    return (
        _EVENT_TIME
        + _fixed64(event.time)
        + _text(_EVENT_NAME, event.name)
        + _attributes(_EVENT_ATTRIBUTES, event.attributes)
        + _count(_EVENT_DROPPED_ATTRIBUTES, dropped_attributes(event.attributes))
    )


def _resource(resource: Resource) -> bytes:
    return _attributes(_RESOURCE_ATTRIBUTES, resource.attributes)


def _scope(scope: InstrumentationScope) -> bytes:
    return (
        _text(_SCOPE_NAME, scope.name)
        + _text(_SCOPE_VERSION, scope.version)
        + _attributes(_SCOPE_ATTRIBUTES, scope.attributes)
    )


_Groups = dict[Resource, dict[InstrumentationScope, list[bytes]]]


def _grouped(spans: Iterable[tuple[OtelTracer, bytes]]) -> _Groups:
    """Encoded spans by resource, then scope, as the SDK groups them (equal resources and
    scopes share a group). A run of spans of one tracer, the usual batch, finds its group
    once: a resource's hash serializes its attributes."""
    groups: _Groups = {}
    last_tracer: object = None
    current: list[bytes] = []
    for tracer, span in spans:
        if tracer is not last_tracer:
            current = groups.setdefault(tracer.resource, {}).setdefault(tracer.scope, [])
            last_tracer = tracer
        current.append(span)
    return groups


def encode_request(spans: Iterable[tuple[OtelTracer, bytes]]) -> bytes:
    """The serialized `ExportTraceServiceRequest` carrying spans already encoded
    (`encode_span`), each with the tracer that recorded it (its resource and scope)."""
    parts = []
    for resource, scopes in _grouped(spans).items():
        body = [_field(_RESOURCE, _resource(resource))]
        for scope, encoded in scopes.items():
            scope_spans = [_field(_SCOPE, _scope(scope))]
            scope_spans += [_SPANS + _varint(len(span)) + span for span in encoded]
            scope_spans.append(_text(_SCOPE_SCHEMA_URL, scope.schema_url))
            body.append(_field(_SCOPE_SPANS, b"".join(scope_spans)))
        body.append(_text(_RESOURCE_SCHEMA_URL, resource.schema_url))
        parts.append(_field(_RESOURCE_SPANS, b"".join(body)))
    return b"".join(parts)


def encode_spans(spans: Iterable[SpanRecord]) -> bytes:
    """The serialized `ExportTraceServiceRequest` carrying the ended `spans`."""
    return encode_request((span.tracer, encode_span(span)) for span in spans)
