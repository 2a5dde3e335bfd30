"""The JSON-RPC binding (§9): one endpoint for the 1.0 and the 0.3 method names."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from litestar.types import Receive, Scope, Send

from hub.errors import MethodNotFoundError, ProtocolError
from hub.protocol.jsonrpc import (
    V1_METHODS,
    JsonRpcId,
    RawCall,
    V1Call,
    classify_failure,
    error_response,
    parse_v1_call,
    result_response,
)
from hub.protocol.trace import CallScope, use_scope
from hub.server.body import read_asgi_json_body
from hub.server.errors import (
    as_protocol_error,
    error_headers,
    jsonrpc_error,
    jsonrpc_http_status,
)
from hub.server.extensions import answer_headers, extension_scope
from hub.server.gate import StreamSlot
from hub.server.jsonrpc_v03 import V03_METHODS, dispatch_v03
from hub.server.operations import A2AOperations
from hub.server.sse import SSE_HEADERS, send_event_stream, sse_frames
from hub.server.state import HubState
from hub.server.version import check_version, requested_version
from hub.tasks import TaskStream, Update
from hub.telemetry.access import note_call, note_error

__all__ = ["handle_jsonrpc"]

Outcome = bytes | TaskStream
"""A unary result's JSON bytes, or a stream of updates."""

STREAM_METHODS = frozenset(
    {"SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"}
)
"""The methods that open a stream (counted against `limits.max_streams_per_caller`)."""


async def _v1(service: A2AOperations, method: str, params: Any, caller: str) -> Outcome:
    match method:
        case "SendMessage":
            return (await service.send_message(params, caller)).to_json()
        case "SendStreamingMessage":
            return await service.stream_message(params, caller)
        case "GetTask":
            return (await service.get_task(params, caller)).to_json()
        case "ListTasks":
            return (await service.list_tasks(params, caller)).to_json()
        case "CancelTask":
            return (await service.cancel_task(params, caller)).to_json()
        case "SubscribeToTask":
            return await service.subscribe(params, caller)
        case "GetExtendedAgentCard":
            return (await service.extended_card(caller)).to_json()
        case "CreateTaskPushNotificationConfig":
            return (await service.create_push_config(params, caller)).to_json()
        case "GetTaskPushNotificationConfig":
            return (await service.get_push_config(params, caller)).to_json()
        case "ListTaskPushNotificationConfigs":
            return (await service.list_push_configs(params, caller)).to_json()
        case "DeleteTaskPushNotificationConfig":
            await service.delete_push_config(params, caller)
            return b"null"  # google.protobuf.Empty, as the SDK sends it
        case _:
            raise AssertionError(f"{method} is in V1_METHODS but not dispatched")


async def _send_json(
    send: Send, body: bytes, *, status: int = 200, extra: dict[str, str] | None = None
) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    for name, value in (extra or {}).items():
        headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _send_no_content(send: Send) -> None:
    """The answer to a JSON-RPC notification: HTTP 204, no body (JSON-RPC 2.0 §4.1)."""
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _headers(scope: Scope) -> dict[str, str]:
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}


def _address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else ""


def _query(scope: Scope) -> dict[str, str]:
    raw = scope.get("query_string", b"")
    if not raw:
        return {}
    return {key: values[-1] for key, values in parse_qs(raw.decode("latin-1")).items()}


async def handle_jsonrpc(
    scope: Scope,
    receive: Receive,
    send: Send,
    state: HubState,
    *,
    service: A2AOperations | None = None,
) -> None:
    """Serve one JSON-RPC request as raw ASGI: parse once, negotiate the version, dispatch,
    render. This endpoint carries most of the traffic, so it skips the framework's request
    and response objects.

    `service` serves the call: the hub's own (`state.service`) unless given, e.g. a
    partner's behind the gateway."""
    own = service is None  # the hub's own operations: its extensions apply
    service = service if service is not None else state.service
    request_id: JsonRpcId = None
    notification = False
    call_scope: CallScope | None = None
    v03 = False
    opens_stream = False
    slot: StreamSlot | None = None
    headers = _headers(scope)
    verb = scope.get("method", "")
    try:
        # Before anything is read: an unknown caller learns nothing, not even a parse error.
        caller = await state.gate.admit(headers, address=_address(scope))
        if verb != "POST":
            raise MethodNotFoundError(
                f"{verb} is not served here; send JSON-RPC requests with POST"
            )
        body = await read_asgi_json_body(headers, receive, state.settings.limits.max_body)
        requested = requested_version(headers, _query(scope))
        call = parse_v1_call(body)
        if call is not None:
            request_id, method, params = call.id, call.method, call.params
            notification = call.is_notification
        else:
            found = classify_failure(body)
            request_id, notification, outcome = found.request_id, found.notification, found.outcome
            if isinstance(outcome, ProtocolError):
                raise outcome
            if isinstance(outcome, V1Call):
                method, params = outcome.method, outcome.params
            elif outcome.method in V03_METHODS:
                method, params = outcome.method, outcome
            else:
                raise _unknown_method(outcome.method)
        v03 = method in V03_METHODS
        opens_stream = method in STREAM_METHODS
        note_call(method, binding="jsonrpc", version="0.3" if v03 else "1.0")
        check_version(
            "0.3" if v03 else "1.0",
            requested,
            accept_missing=state.settings.server.accept_missing_version,
        )
        call_scope = extension_scope(
            CallScope.from_headers(
                headers,
                here=state.settings.server.base_url(),
                max_hops=state.settings.server.max_hops,
            ),
            scope["headers"],
            policy=state.extensions if own else None,
        )
        if opens_stream:
            slot = state.gate.open_stream(caller)
        with use_scope(caller.scope(call_scope)):
            if v03:
                assert isinstance(params, RawCall)
                result, render = await dispatch_v03(service, params, caller.name)
            else:
                result = await _v1(service, method, params, caller.name)
                render = None
    except Exception as exc:  # every failure becomes a JSON-RPC error, never a 500
        if slot is not None:
            slot.release()
        echo = answer_headers(call_scope, v03=v03)
        error = as_protocol_error(exc, where="JSON-RPC")
        note_error(error)
        if notification:
            await _send_no_content(send)
            return
        await _send_json(
            send,
            error_response(request_id, jsonrpc_error(error, v03=v03)),
            # 1.0 clients (the official SDKs) read a refused stream's error from a 200 body.
            status=jsonrpc_http_status(error, opens_stream=opens_stream and v03),
            extra={**echo, **error_headers(error)},
        )
        return
    # Known by now for a stream too: the partner's first event came after its answer's head.
    echo = answer_headers(call_scope, v03=v03)
    if notification:
        # Run like the same call with an id, but nothing is answered: a stream is closed at
        # once (the task it started goes on), a result dropped.
        if not isinstance(result, bytes):
            await result.aclose()
        if slot is not None:
            slot.release()
        await _send_no_content(send)
        return
    if isinstance(result, bytes):
        if slot is not None:
            slot.release()
        await _send_json(send, result_response(request_id, result), extra=echo)
        return

    prefix = result_response(request_id, b"")[:-1]  # everything before the result's bytes

    def frame(update: Update) -> bytes:
        return prefix + (render(update) if render else update.json()) + b"}"

    await send_event_stream(
        receive,
        send,
        sse_frames(result, frame, keepalive=state.settings.server.keepalive),
        headers={**SSE_HEADERS, **echo},
        ended=lambda: result.ended,
        on_exit=slot.release if slot is not None else None,
    )


def _unknown_method(method: str) -> MethodNotFoundError:
    known = ", ".join(sorted(V1_METHODS))
    return MethodNotFoundError(
        f"method {method!r} does not exist; A2A 1.0 methods are {known} "
        "(0.3 names such as message/send are accepted too)",
        metadata={"method": method[:100]},
    )
