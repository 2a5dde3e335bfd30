"""A2A errors as gRPC statuses (§10.6): the status code the spec names for each error (the
`rpc_status` every `ProtocolError` carries, the one the HTTP+JSON binding's `google.rpc.Status`
names too), its message, and the same `ErrorInfo` (and `BadRequest`) details, serialised as a
`google.rpc.Status` in the `grpc-status-details-bin` trailer, where gRPC clients (the
a2a-sdk's among them) read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

import grpc  # type: ignore[import-untyped]
from google.protobuf import json_format  # type: ignore[import-untyped]
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from hub.errors import ProtocolError
from hub.server.errors import error_details, error_headers

__all__ = ["STATUS_DETAILS_KEY", "abort", "status_code"]

STATUS_DETAILS_KEY = "grpc-status-details-bin"

# `Any` details are resolved by their type URL in protobuf's default pool.
_REGISTERED = (error_details_pb2.ErrorInfo, error_details_pb2.BadRequest)


def status_code(error: ProtocolError) -> grpc.StatusCode:
    """The gRPC status code of `error`."""
    return grpc.StatusCode[error.rpc_status]


def status_details(error: ProtocolError) -> bytes:
    """`error` as a serialised `google.rpc.Status`: its code, message and details."""
    status = json_format.ParseDict(
        {
            "code": status_code(error).value[0],
            "message": error.message,
            "details": error_details(error),
        },
        status_pb2.Status(),
    )
    data: bytes = status.SerializeToString()
    return data


async def abort(
    context: Any,
    error: ProtocolError,
    *,
    metadata: Mapping[str, str] | None = None,
) -> NoReturn:
    """End the call with `error`. The trailers carry its status details, and the HTTP
    headers the other bindings send it with (`www-authenticate` of a refused credential,
    `retry-after` of a refusal to wait out) after `metadata`, lower-cased."""
    headers = {**(metadata or {}), **error_headers(error)}
    trailers: list[tuple[str, str | bytes]] = [
        (name.lower(), value) for name, value in headers.items()
    ]
    trailers.append((STATUS_DETAILS_KEY, status_details(error)))
    await context.abort(status_code(error), error.message, trailing_metadata=tuple(trailers))
    raise AssertionError("grpc.aio's abort always raises")
