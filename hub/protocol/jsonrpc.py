"""The JSON-RPC 2.0 envelope and the A2A 1.0 method table (§9).

Well-formed 1.0 requests are parsed in one pass from bytes (`parse_v1_call`): the envelope
and its params are a single tagged union keyed on `method`. Anything that fails that pass is
classified by `classify_failure`, which decides the JSON-RPC error it deserves.
"""

from __future__ import annotations

import json
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


class V1Call(WireModel):
    """A parsed 1.0 call: `method`, `id` and the params model of that method."""

    jsonrpc: Literal["2.0"]
    id: JsonRpcId = None
    method: str
    params: Any


def parse_v1_call(body: bytes) -> V1Call | None:
    """The call, if `body` is a well-formed 1.0 request; None means: classify the failure."""
    try:
        call = _V1_ADAPTER.validate_json(body)
    except ValidationError:
        return None
    return V1Call.model_construct(jsonrpc="2.0", id=call.id, method=call.method, params=call.params)


class RawCall(WireModel):
    """A request whose envelope is valid but whose params are not yet parsed."""

    jsonrpc: Literal["2.0"]
    id: JsonRpcId = None
    method: StrictStr
    params: Any = None


def classify_failure(body: bytes) -> tuple[JsonRpcId, V1Call | RawCall | ProtocolError]:
    """Why a body is not a well-formed 1.0 call: a parse, envelope, method or params error,
    or a valid envelope (returned as RawCall) whose method is not a 1.0 method. A 1.0 call
    that only lacks `params` (which JSON-RPC lets a request omit) is returned as a V1Call."""
    try:
        # The parser of the one-pass parse, so both agree on what JSON is (UTF-8, no BOM).
        document = from_json(body)
    except ValueError as exc:
        return None, ParseError(f"request body is not valid JSON ({exc})")
    if isinstance(document, list):
        return None, InvalidRequestError(
            "batch requests are not supported; send one JSON-RPC request object per call"
        )
    if not isinstance(document, dict):
        return None, InvalidRequestError("a JSON-RPC request must be a JSON object")
    raw_id = document.get("id")
    request_id: JsonRpcId = raw_id if _is_valid_id(raw_id) else None
    if not _is_valid_id(raw_id):
        return None, InvalidRequestError("'id' must be a string, an integer or null")
    if document.get("jsonrpc") != "2.0":
        return request_id, InvalidRequestError('"jsonrpc" must be exactly "2.0"')
    method = document.get("method")
    if not isinstance(method, str):
        return request_id, InvalidRequestError("'method' must be a string naming an A2A method")
    if "params" in document and not isinstance(document["params"], dict):
        return request_id, InvalidParamsError("'params' must be a JSON object")
    raw = RawCall(jsonrpc="2.0", id=request_id, method=method, params=document.get("params"))
    model = V1_METHODS.get(method)
    if model is None:
        return request_id, raw
    try:
        params = model.model_validate(document.get("params") or {})
    except ValidationError as exc:
        return request_id, invalid_params(exc, method)
    # The one-pass parse requires `params`; a call without them is valid all the same.
    return request_id, V1Call.model_construct(
        jsonrpc="2.0", id=request_id, method=method, params=params
    )


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
