"""The gRPC messages to and from the hub's 1.0 models: the one place the binding converts.

A2A's JSON form is protobuf's JSON mapping of the same proto, so a message converts through
that form (`json_format`), and the three places where protobuf's rendering differs from what
a JSON peer sends are mended here:

- proto3 does not keep a scalar at its default: a required `int32` at 0, a required string
  that is empty, a required enum at its `…_UNSPECIFIED` value, a required list that is
  empty are all absent from the rendering. They are put back, so `totalSize: 0` is read as
  0 and a message without parts gets the models' own error, not a missing-field one.
- `google.protobuf.Struct` holds every number as a double: `{"n": 1}` comes back as
  `{"n": 1.0}`. Whole numbers within the exact range of a double are read back as integers,
  as the JSON they came from had them (the proto has no other double field).
- Timestamps and bytes need nothing: the models read any RFC 3339 precision, and `raw` is
  base64 on both sides.

A value one side can hold and the other cannot (a `historyLength` beyond int32, a part the
models refuse) raises `ConversionError`, naming what is wrong.

A model is written into its message by a writer made once per message type from its
descriptor (`_writers`): each field of the JSON form set directly, as protobuf's
`json_format.ParseDict` would set it, at a fraction of its cost (it is paid for every answer
and every streamed event of the gRPC door). Whatever the writer does not take (an unknown
key, a value of the wrong kind or out of range) is read again by `ParseDict`, whose words the
`ConversionError` gives.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime
from functools import cache
from typing import Any, TypeVar

from google.api import field_behavior_pb2  # type: ignore[import-untyped]
from google.protobuf import descriptor, json_format, message  # type: ignore[import-untyped]
from pydantic import ValidationError

from hub.protocol.base import WireModel

__all__ = ["ConversionError", "from_proto", "to_proto"]

Model = TypeVar("Model", bound=WireModel)
Proto = TypeVar("Proto", bound=message.Message)

_EXACT = 2**53
"""Integers up to this magnitude survive a double; larger whole numbers stay floats."""

_STRUCTS = frozenset(
    {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}
)


class ConversionError(ValueError):
    """A value that does not fit the other side (the message says which and why)."""


def to_proto(model: WireModel, message_type: type[Proto]) -> Proto:
    """`model` as a `message_type`, through the JSON form both share."""
    data = model.to_wire()
    proto: Proto = message_type()
    try:
        _write(proto, data)
        return proto
    except (KeyError, TypeError, ValueError, AttributeError):
        pass  # protobuf's own reading decides, and says what is wrong
    try:
        proto = json_format.ParseDict(data, message_type())
    except json_format.ParseError as error:
        raise ConversionError(
            f"{type(model).__name__} does not fit the gRPC {message_type.__name__}: {error}"
        ) from None
    return proto


Writer = Callable[[Any, Any], None]
"""Sets one field of a message (the first argument) from its JSON value."""


def _write(proto: message.Message, data: dict[str, Any]) -> None:
    writers = _writers(proto.DESCRIPTOR)
    for key, value in data.items():
        writers[key](proto, value)


@cache
def _writers(proto_type: descriptor.Descriptor) -> dict[str, Writer]:
    """The writer of each field of `proto_type`, by its JSON name."""
    return {field.json_name: _writer(field) for field in proto_type.fields}


def _writer(field: descriptor.FieldDescriptor) -> Writer:
    name = field.name
    kind = field.message_type
    if kind is not None and kind.GetOptions().map_entry:
        value_field = kind.fields_by_name["value"]
        if value_field.message_type is not None:

            def write_map(proto: Any, value: dict[str, Any]) -> None:
                entries = getattr(proto, name)
                for key, item in value.items():
                    _write(entries[key], item)

            return write_map
        scalar = _scalar(value_field)

        def write_scalar_map(proto: Any, value: dict[str, Any]) -> None:
            entries = getattr(proto, name)
            for key, item in value.items():
                entries[key] = scalar(item)

        return write_scalar_map
    if kind is not None:
        fill = _filler(kind)
        if field.is_repeated:

            def write_messages(proto: Any, value: list[Any]) -> None:
                items = getattr(proto, name)
                for item in value:
                    fill(items.add(), item)

            return write_messages

        def write_message(proto: Any, value: Any) -> None:
            target = getattr(proto, name)
            target.SetInParent()
            fill(target, value)

        return write_message
    scalar = _scalar(field)
    if field.is_repeated:

        def write_scalars(proto: Any, value: list[Any]) -> None:
            getattr(proto, name).extend([scalar(item) for item in value])

        return write_scalars

    def write_scalar(proto: Any, value: Any) -> None:
        setattr(proto, name, scalar(value))

    return write_scalar


def _filler(kind: descriptor.Descriptor) -> Writer:
    """How a message of type `kind` is filled from its JSON value."""
    match kind.full_name:
        case "google.protobuf.Struct":
            return _fill_struct
        case "google.protobuf.Value":
            return _fill_value
        case "google.protobuf.ListValue":
            return _fill_list
        case "google.protobuf.Timestamp":
            return _fill_timestamp
    return _write


def _fill_struct(proto: Any, value: dict[str, Any]) -> None:
    if not isinstance(value, dict):
        raise TypeError("a Struct is a JSON object")
    for key, item in value.items():
        _fill_value(proto.fields[key], item)


def _fill_list(proto: Any, value: list[Any]) -> None:
    if not isinstance(value, list):
        raise TypeError("a ListValue is a JSON array")
    for item in value:
        _fill_value(proto.values.add(), item)


def _fill_value(proto: Any, value: Any) -> None:
    if value is None:
        proto.null_value = 0
    elif isinstance(value, bool):
        proto.bool_value = value
    elif isinstance(value, int | float):
        proto.number_value = value
    elif isinstance(value, str):
        proto.string_value = value
    elif isinstance(value, dict):
        proto.struct_value.SetInParent()
        _fill_struct(proto.struct_value, value)
    elif isinstance(value, list):
        proto.list_value.SetInParent()
        _fill_list(proto.list_value, value)
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECONDS_UTC = len("2026-01-01T00:00:00.000Z")


def _fill_timestamp(proto: Any, value: str) -> None:
    # The hub writes RFC 3339 in UTC with milliseconds (24 characters), which
    # `fromisoformat` reads several times faster than protobuf's own parser (a strptime);
    # anything else (finer fractions, offsets) is left to protobuf.
    moment = None
    if len(value) <= _MILLISECONDS_UTC and value.endswith("Z"):
        with suppress(ValueError):
            moment = datetime.fromisoformat(value)
    if moment is None:
        proto.FromJsonString(value)
        return
    since = moment - _EPOCH
    proto.seconds = since.days * 86_400 + since.seconds
    proto.nanos = since.microseconds * 1000


def _scalar(field: descriptor.FieldDescriptor) -> Callable[[Any], Any]:
    """What a scalar field's JSON value becomes: the same value, checked for its kind, or an
    enum's number, or the bytes of a base64 text."""
    if field.enum_type is not None:
        numbers = {value.name: value.number for value in field.enum_type.values}
        return lambda value: numbers[value]
    match field.type:
        case descriptor.FieldDescriptor.TYPE_STRING:
            return _checked(str)
        case descriptor.FieldDescriptor.TYPE_BOOL:
            return _checked(bool)
        case descriptor.FieldDescriptor.TYPE_BYTES:
            return lambda value: base64.b64decode(value, validate=True)
        case descriptor.FieldDescriptor.TYPE_DOUBLE | descriptor.FieldDescriptor.TYPE_FLOAT:
            return lambda value: value if type(value) in (int, float) else _wrong(value)
    return _checked(int)


def _checked(kind: type) -> Callable[[Any], Any]:
    return lambda value: value if type(value) is kind else _wrong(value)


def _wrong(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} does not fit the field")


def from_proto(proto: message.Message, model_type: type[Model]) -> Model:
    """`proto` as a `model_type`, validated as if its JSON form had arrived.

    Raises:
        ConversionError: the models refuse the message (the validation errors in words).
    """
    data = json_format.MessageToDict(proto)
    _mend(proto, data)
    try:
        return model_type.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(step) for step in problem['loc']) or 'message'}: {problem['msg']}"
            for problem in error.errors(include_url=False)
        )
        raise ConversionError(f"invalid {model_type.__name__}: {problems}") from None


def _mend(proto: message.Message, data: dict[str, Any]) -> None:
    """Put back the required defaults proto3 dropped and read whole Struct numbers as ints."""
    shape = _shape(proto.DESCRIPTOR)
    for name, default in shape.defaults:
        if name not in data:
            data[name] = default() if callable(default) else default
    for field, name in shape.messages:
        if name not in data:
            continue
        if field.message_type.full_name in _STRUCTS:
            data[name] = _whole_numbers(data[name])
        elif field.message_type.GetOptions().map_entry:
            _mend_map(field, getattr(proto, field.name), data[name])
        elif field.is_repeated:
            for item, item_data in zip(getattr(proto, field.name), data[name], strict=True):
                _mend(item, item_data)
        else:
            _mend(getattr(proto, field.name), data[name])


def _mend_map(field: descriptor.FieldDescriptor, proto: Any, data: dict[str, Any]) -> None:
    value_field = field.message_type.fields_by_name["value"]
    if value_field.message_type is None:
        return
    for key, item_data in data.items():
        if value_field.message_type.full_name in _STRUCTS:
            data[key] = _whole_numbers(item_data)
        else:
            _mend(proto[_map_key(field, key)], item_data)


def _map_key(field: descriptor.FieldDescriptor, key: str) -> Any:
    key_field = field.message_type.fields_by_name["key"]
    return key if key_field.type == descriptor.FieldDescriptor.TYPE_STRING else int(key)


def _whole_numbers(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) <= _EXACT else value
    if isinstance(value, dict):
        return {key: _whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(item) for item in value]
    return value


class _Shape:
    """What `_mend` needs of one message type: the required fields without presence and
    their defaults, and the fields holding messages to walk into."""

    __slots__ = ("defaults", "messages")

    def __init__(self, proto_type: descriptor.Descriptor) -> None:
        self.defaults: list[tuple[str, Any]] = []
        self.messages: list[tuple[descriptor.FieldDescriptor, str]] = []
        for field in proto_type.fields:
            if field.message_type is not None:
                self.messages.append((field, field.json_name))
                if _required(field) and field.is_repeated:
                    self.defaults.append((field.json_name, list))
            elif _required(field) and not field.has_presence:
                self.defaults.append((field.json_name, _default(field)))


@cache
def _shape(proto_type: descriptor.Descriptor) -> _Shape:
    return _Shape(proto_type)


def _required(field: descriptor.FieldDescriptor) -> bool:
    behaviors = field.GetOptions().Extensions[field_behavior_pb2.field_behavior]
    return field_behavior_pb2.REQUIRED in behaviors


def _default(field: descriptor.FieldDescriptor) -> Any:
    if field.is_repeated:
        return list
    if field.enum_type is not None:
        return field.enum_type.values_by_number[0].name
    if field.type == descriptor.FieldDescriptor.TYPE_BOOL:
        return False
    if field.type in (
        descriptor.FieldDescriptor.TYPE_STRING,
        descriptor.FieldDescriptor.TYPE_BYTES,
    ):
        return ""
    return 0
