"""The JSON-RPC 2.0 envelope and the A2A 1.0 method table (§9).

Well-formed 1.0 requests are parsed in one pass from bytes (`parse_v1_call`): the envelope
and its params are a single tagged union keyed on `method`. Anything that fails that pass is
classified by `classify_failure`, which decides the JSON-RPC error it deserves.

A request object without an `id` member is a notification, to which JSON-RPC 2.0 forbids any
response; `"id": null` is a request like any other (answered with `"id": null`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import Field, StrictInt, StrictStr, TypeAdapter, ValidationError, create_model
from pydantic_core import from_json

from hub.errors import (
    InvalidParamsError,
    InvalidRequestError,
    ParseError,
    ProtocolError,
)
from hub.protocol.base import WireModel
from hub.protocol.requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)

__all__ = [
    "V1_METHODS",
    "Classified",
    "JsonRpcId",
    "RawCall",
    "V1Call",
    "classify_failure",
    "error_response",
    "parse_v1_call",
    "result_response",
    "violations_of",
]

JsonRpcId = StrictStr | StrictInt | None

V1_METHODS: dict[str, type[WireModel]] = {
    "SendMessage": SendMessageRequest,
    "SendStreamingMessage": SendMessageRequest,
    "GetTask": GetTaskRequest,
    "ListTasks": ListTasksRequest,
    "CancelTask": CancelTaskRequest,
    "SubscribeToTask": SubscribeToTaskRequest,
    "CreateTaskPushNotificationConfig": TaskPushNotificationConfig,
    "GetTaskPushNotificationConfig": GetTaskPushNotificationConfigRequest,
    "ListTaskPushNotificationConfigs": ListTaskPushNotificationConfigsRequest,
    "DeleteTaskPushNotificationConfig": DeleteTaskPushNotificationConfigRequest,
    "GetExtendedAgentCard": GetExtendedAgentCardRequest,
}


class _Envelope(WireModel):
    jsonrpc: Literal["2.0"]
    id: JsonRpcId = None


def _call_model(method: str, params: type[WireModel]) -> type[_Envelope]:
    literal: Any = Literal[method]  # a Literal of a runtime value, built once per method
    return create_model(
        f"{method}Call", __base__=_Envelope, method=(literal, ...), params=(params, ...)
    )


_CALLS = tuple(_call_model(method, params) for method, params in V1_METHODS.items())
# One tagged union over every 1.0 method: a valid request is parsed from bytes in one pass.
_CALL_UNION: Any = Annotated[Union[_CALLS], Field(discriminator="method")]  # noqa: UP007
_V1_ADAPTER: TypeAdapter[Any] = TypeAdapter(_CALL_UNION)


class _Call(WireModel):
    jsonrpc: Literal["2.0"]
    id: JsonRpcId = None

    @property
    def is_notification(self) -> bool:
        """True when the request has no `id` member (an explicit null is a request)."""
        return "id" not in self.model_fields_set


class V1Call(_Call):
    """A parsed 1.0 call: `method`, `id` and the params model of that method."""

    method: str
    params: Any


def _fields(has_id: bool) -> set[str]:
    return {"jsonrpc", "method", "params", *(("id",) if has_id else ())}


def parse_v1_call(body: bytes) -> V1Call | None:
    """The call, if `body` is a well-formed 1.0 request; None means: classify the failure."""
    try:
        call = _V1_ADAPTER.validate_json(body)
    except ValidationError:
        return None
    return V1Call.model_construct(
        _fields(has_id="id" in call.model_fields_set),
        jsonrpc="2.0",
        id=call.id,
        method=call.method,
        params=call.params,
    )


class RawCall(_Call):
    """A request whose envelope is valid but whose params are not yet parsed."""

    method: StrictStr
    params: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Classified:
    """What `classify_failure` made of a body."""

    request_id: JsonRpcId
    """The id to answer with (null when the body has none, or none that is valid)."""
    notification: bool
    """The body is a request object without an `id` member: nothing may be answered."""
    outcome: V1Call | RawCall | ProtocolError


def classify_failure(body: bytes) -> Classified:
    """Why a body is not a well-formed 1.0 call: a parse, envelope, method or params error,
    or a valid envelope (returned as RawCall) whose method is not a 1.0 method. A 1.0 call
    that only lacks `params` (which JSON-RPC lets a request omit) is returned as a V1Call."""
    try:
        # The parser of the one-pass parse, so both agree on what JSON is (UTF-8, no BOM).
        document = from_json(body)
    except ValueError as exc:
        return _refused(ParseError(f"request body is not valid JSON ({exc})"))
    if isinstance(document, list):
        # Refused as a whole, even a batch of notifications: nothing in it runs.
        return _refused(
            InvalidRequestError(
                "batch requests are not supported; send one JSON-RPC request object per call"
            )
        )
    if not isinstance(document, dict):
        return _refused(InvalidRequestError("a JSON-RPC request must be a JSON object"))
    raw_id = document.get("id")
    if not _is_valid_id(raw_id):
        return _refused(InvalidRequestError("'id' must be a string, an integer or null"))
    request_id: JsonRpcId = raw_id
    if document.get("jsonrpc") != "2.0":
        return _refused(InvalidRequestError('"jsonrpc" must be exactly "2.0"'), request_id)
    method = document.get("method")
    if not isinstance(method, str):
        return _refused(
            InvalidRequestError("'method' must be a string naming an A2A method"), request_id
        )
    # From here on the body is a request object: without an `id`, a notification.
    has_id = "id" in document

    def found(outcome: V1Call | RawCall | ProtocolError) -> Classified:
        return Classified(request_id=request_id, notification=not has_id, outcome=outcome)

    if "params" in document and not isinstance(document["params"], dict):
        return found(InvalidParamsError("'params' must be a JSON object"))
    model = V1_METHODS.get(method)
    if model is None:
        raw = RawCall.model_construct(
            _fields(has_id),
            jsonrpc="2.0",
            id=request_id,
            method=method,
            params=document.get("params"),
        )
        return found(raw)
    try:
        params = model.model_validate(document.get("params") or {})
    except ValidationError as exc:
        return found(invalid_params(exc, method))
    # The one-pass parse requires `params`; a call without them is valid all the same.
    return found(
        V1Call.model_construct(
            _fields(has_id), jsonrpc="2.0", id=request_id, method=method, params=params
        )
    )


def _refused(error: ProtocolError, request_id: JsonRpcId = None) -> Classified:
    """A body that is no valid request object: answered, with the id if one could be read."""
    return Classified(request_id=request_id, notification=False, outcome=error)


def _is_valid_id(value: object) -> bool:
    return value is None or (isinstance(value, str | int) and not isinstance(value, bool))


def violations_of(exc: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """(field path, problem) pairs for a validation error, paths in wire (camelCase) form
    with list positions in brackets (`message.parts[0].text`), as `google.rpc.BadRequest`
    writes field paths."""
    found = []
    for problem in exc.errors(include_url=False):
        path = "".join(
            f"[{step}]" if isinstance(step, int) else f".{step}" for step in problem["loc"]
        ).removeprefix(".")
        found.append(
            (f"{prefix}{path}" if path else prefix.rstrip(".") or "(body)", problem["msg"])
        )
    return found


def invalid_params(exc: ValidationError, what: str) -> InvalidParamsError:
    violations = violations_of(exc, "params.")
    summary = "; ".join(f"{field}: {problem}" for field, problem in violations[:3])
    more = f" (and {len(violations) - 3} more)" if len(violations) > 3 else ""
    return InvalidParamsError(f"invalid params for {what}: {summary}{more}", violations=violations)


def result_response(request_id: JsonRpcId, result: bytes) -> bytes:
    """A success response around already-serialised `result` bytes."""
    return b'{"jsonrpc":"2.0","id":' + _id_bytes(request_id) + b',"result":' + result + b"}"


def error_response(request_id: JsonRpcId, error: dict[str, Any]) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":'
        + _id_bytes(request_id)
        + b',"error":'
        + json.dumps(error, separators=(",", ":")).encode()
        + b"}"
    )


def _id_bytes(request_id: JsonRpcId) -> bytes:
    if request_id is None:
        return b"null"
    return json.dumps(request_id).encode()
