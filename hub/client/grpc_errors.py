"""The one place where gRPC failures become hub errors: the same errors, with the same
words, as `hub.client.http_errors` makes of HTTP failures, so retries, the breaker, stream
resume, the gateway and the CLI treat a gRPC partner as any other.

A call that fails ends with a gRPC status. What it says, and what a caller learns:

- a status carrying a `google.rpc.Status` with an `ErrorInfo` whose reason is one of the
  A2A errors (or one of the hub's own): `RemoteRpcError` with that error's code, as the
  JSON-RPC and REST transports read it (`TASK_NOT_FOUND` → -32001);
- UNAVAILABLE before any connection (refused, no route, DNS): `AgentUnreachableError`
  (nothing was sent); UNAVAILABLE or CANCELLED on a connection that broke:
  `ConnectionLostError`; UNAVAILABLE the partner sent itself (it carries a status), and
  RESOURCE_EXHAUSTED: `AgentBusyError`, with the wait its `RetryInfo` or `retry-after`
  metadata asks for;
- DEADLINE_EXCEEDED: `AgentTimeoutError`;
- an answer that is not the A2A message it should be (it does not parse, or is larger
  than the channel takes): `InvalidAgentResponseError`;
- UNIMPLEMENTED: the operation is not supported (-32004);
- any other status without an A2A reason: `RemoteRpcError` whose code is the status's HTTP
  counterpart (INVALID_ARGUMENT 400, NOT_FOUND 404, UNAUTHENTICATED 401, INTERNAL 500...),
  as a REST error without a reason carries its HTTP status.

As over HTTP, the partner's address and its words about its own trouble go into the
error's `detail`, for the hub's log, never into its message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import grpc  # type: ignore[import-untyped]
from google.protobuf import json_format, message  # type: ignore[import-untyped]
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from hub.client.http_errors import (
    code_of_reason,
    invalid_response,
    remote_error,
    retry_after_seconds,
)
from hub.errors import (
    A2A_DOMAIN,
    AgentBusyError,
    AgentTimeoutError,
    AgentUnreachableError,
    ClientError,
    ConnectionLostError,
    UnsupportedOperationError,
)

__all__ = ["translate_grpc_errors"]

_STATUS_DETAILS = "grpc-status-details-bin"

# The HTTP counterpart of each status (google/rpc/code.proto), for a status without an A2A
# reason: the same code a REST partner's bare HTTP error gives.
_HTTP_OF_STATUS = {
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.DATA_LOSS: 500,
    grpc.StatusCode.UNAUTHENTICATED: 401,
}

# What grpc-core says when no connection could be made (the request was never sent).
_NOT_CONNECTED = (
    "failed to connect",
    "connection refused",
    "dns resolution failed",
    "name resolution",
    "no route to host",
    "network is unreachable",
)
# What grpcio says when a message from the partner cannot be read.
_UNREADABLE = ("deserializ", "failed to parse", "larger than max")


@contextmanager
def translate_grpc_errors(agent_name: str, operation: str) -> Iterator[None]:
    """Turn a failed gRPC call inside the block into the hub client's error for it.

    Args:
        agent_name: the partner, named in every message.
        operation: the RPC (`SendMessage`), named in a protocol error's message.
    """
    try:
        yield
    except grpc.aio.AioRpcError as exc:
        raise grpc_error(exc, agent_name, operation) from exc


def grpc_error(exc: grpc.aio.AioRpcError, agent_name: str, operation: str) -> ClientError:
    """The hub client's error for a call that ended with `exc`'s status."""
    code = exc.code()
    said = exc.details() or ""
    trailers = exc.trailing_metadata() or ()
    status = _rich_status(trailers)
    detail = f"{operation}: gRPC {code.name}: {said}"
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return AgentTimeoutError(
            f"agent '{agent_name}' did not answer in time (DEADLINE_EXCEEDED)", detail=detail
        )
    if code is grpc.StatusCode.UNAVAILABLE and status is None:
        if any(words in said.lower() for words in _NOT_CONNECTED):
            return AgentUnreachableError(f"agent '{agent_name}' is unreachable", detail=detail)
        return ConnectionLostError(f"the connection to agent '{agent_name}' broke", detail=detail)
    if code is grpc.StatusCode.CANCELLED and status is None:
        return ConnectionLostError(f"the connection to agent '{agent_name}' broke", detail=detail)
    if status is None and any(words in said.lower() for words in _UNREADABLE):
        return invalid_response(
            agent_name, f"an unreadable gRPC message ({code.name})", detail=detail
        )
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED):
        http = 503 if code is grpc.StatusCode.UNAVAILABLE else 429
        return AgentBusyError(
            f"agent '{agent_name}' is busy ({code.name})",
            code=http,
            retry_after=_retry_after(status, trailers),
            data=_as_dict(status),
            detail=detail,
        )
    reason = _a2a_reason(status)
    number = code_of_reason(reason) if reason is not None else None
    if number is None:
        if code is grpc.StatusCode.UNIMPLEMENTED:
            number = UnsupportedOperationError.code
        else:
            number = _HTTP_OF_STATUS.get(code, 500)
    return remote_error(
        agent_name,
        code=number,
        message=status.message if status is not None and status.message else said,
        label=reason or code.name,
        operation=operation,
        data=_as_dict(status),
    )


def _rich_status(trailers: Any) -> Any:
    """The `google.rpc.Status` the partner put in its trailers, if it sent a readable one."""
    for key, value in trailers:
        if key == _STATUS_DETAILS and isinstance(value, bytes):
            status = status_pb2.Status()
            try:
                status.ParseFromString(value)
            except message.DecodeError:  # a malformed status is no status
                return None
            return status
    return None


def _a2a_reason(status: Any) -> str | None:
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            if info.reason and info.domain in (A2A_DOMAIN, ""):
                return str(info.reason)
    return None


def _retry_after(status: Any, trailers: Any) -> float | None:
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                info = error_details_pb2.RetryInfo()
                detail.Unpack(info)
                return float(info.retry_delay.ToTimedelta().total_seconds())
    for key, value in trailers:
        if key == "retry-after" and isinstance(value, str):
            return retry_after_seconds(value)
    return None


def _as_dict(status: Any) -> dict[str, Any] | None:
    if status is None:
        return None
    return dict(json_format.MessageToDict(status))
