"""The one place where errors become JSON-RPC error objects or `google.rpc.Status` bodies."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from typing import Any

from litestar.exceptions import HTTPException
from litestar.response import Response
from pydantic import ValidationError

from hub.errors import (
    A2A_DOMAIN,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    ParseError,
    PartnerBusyError,
    ProtocolError,
    RateLimitedError,
    StoreError,
    StoreOutageError,
    StoreUnavailableError,
    UnauthenticatedError,
)
from hub.protocol.jsonrpc import violations_of

__all__ = [
    "JSON_MEDIA_TYPE",
    "as_protocol_error",
    "error_details",
    "error_headers",
    "jsonrpc_error",
    "jsonrpc_http_status",
    "rest_error_body",
    "rest_error_response",
]

# One media type for every JSON answer of the HTTP+JSON binding, success or error: the one
# §11.1 names for responses and §11.6 for `google.rpc.Status` (docs/protocol.md says why).
JSON_MEDIA_TYPE = "application/json"

log = logging.getLogger("hub.server")

_V03_UNKNOWN_CODES = frozenset({-32008, -32009})


def as_protocol_error(exc: BaseException, *, where: str) -> ProtocolError:
    """`exc` as the error the caller gets; unexpected failures are logged once, here, and
    reported without internals."""
    if isinstance(exc, ProtocolError):
        return exc
    if isinstance(exc, HTTPException) and exc.status_code < 500:
        # A client error the framework raised while reading the request (a bad header, say).
        return InvalidRequestError(str(exc.detail) or "the request could not be read")
    if isinstance(exc, ValidationError):
        if any(problem["type"] == "json_invalid" for problem in exc.errors()):
            return ParseError("request body is not valid JSON")
        violations = violations_of(exc)
        summary = "; ".join(f"{field}: {problem}" for field, problem in violations[:3])
        return InvalidParamsError(f"invalid request: {summary}", violations=violations)
    if isinstance(exc, StoreError):
        # Not a bug: the store is down or unreachable; its message says which and why. An
        # outage is logged by the store once, not by each request it refuses.
        level = logging.DEBUG if isinstance(exc, StoreOutageError) else logging.WARNING
        log.log(level, "%s: %s", where, exc)
        return StoreUnavailableError(
            "the hub cannot reach its task store right now; retry shortly",
            metadata={"retryAfter": "1"},
        )
    log.error("unexpected error in %s", where, exc_info=exc)
    return InternalError("the hub failed to handle this request; the hub log has the details")


def error_details(error: ProtocolError) -> list[dict[str, Any]]:
    """The `details` of every binding's error, in their JSON (`Any`) form: the `ErrorInfo`
    (reason, domain, metadata) and, for field problems, a `BadRequest`."""
    details: list[dict[str, Any]] = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": error.reason,
            "domain": A2A_DOMAIN,
            "metadata": error.metadata,
        }
    ]
    if error.violations:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [
                    {"field": field, "description": problem} for field, problem in error.violations
                ],
            }
        )
    return details


def jsonrpc_error(error: ProtocolError, *, v03: bool = False) -> dict[str, Any]:
    """The `error` member of a JSON-RPC response, in the 1.0 or the 0.3 shape."""
    if not v03:
        return {"code": error.code, "message": error.message, "data": error_details(error)}
    # 0.3 has no -32008/-32009; its `data` is free-form, so it still names the reason.
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    data: dict[str, Any] = {}
    if error.code in _V03_UNKNOWN_CODES:
        body["code"] = -32603
        data["reason"] = error.reason
        if error.metadata:
            data["metadata"] = error.metadata
    if error.v03_code is not None:  # a partner's error, in the code 0.3 gives its case
        body["code"] = error.v03_code
    if error.violations:
        data["fieldViolations"] = [
            {"field": field, "description": problem} for field, problem in error.violations
        ]
    if data:
        body["data"] = data
    return body


def rest_error_body(error: ProtocolError) -> dict[str, Any]:
    """A `google.rpc.Status` JSON body (§11.6)."""
    return {
        "error": {
            "code": error.http_status,
            "status": error.rpc_status,
            "message": error.message,
            "details": error_details(error),
        }
    }


def rest_error_response(
    error: ProtocolError, *, headers: Mapping[str, str] | None = None
) -> Response[bytes]:
    """`error` as the HTTP+JSON binding answers it: its status, its `google.rpc.Status` body,
    its headers (`error_headers`) after `headers`."""
    body = json.dumps(rest_error_body(error), separators=(",", ":")).encode()
    return Response(
        content=body,
        status_code=error.http_status,
        media_type=JSON_MEDIA_TYPE,
        headers={**(headers or {}), **error_headers(error)},
    )


def error_headers(error: ProtocolError) -> dict[str, str]:
    """HTTP headers an error is sent with, on either binding: the challenge of a 401, the
    `Retry-After` of a 429 for going over the request rate or of a 503 for a busy partner."""
    if isinstance(error, UnauthenticatedError):
        return {"WWW-Authenticate": error.challenge}
    if isinstance(error, RateLimitedError | PartnerBusyError | StoreUnavailableError):
        return {"Retry-After": str(max(1, math.ceil(error.retry_after)))}
    return {}


def jsonrpc_http_status(error: ProtocolError, *, opens_stream: bool = False) -> int:
    """The HTTP status of a JSON-RPC error response: 200, as the SDK sends every JSON-RPC
    error, but for the two refusals that happen before the request is read (401, and 429 for
    the request rate), which HTTP clients and proxies must see as such, and for a 0.3 stream
    that cannot start (`opens_stream`): the 0.3 spec asks for an HTTP error there, so an SSE
    client sees a failed request, not a 200 answer that is no event stream. The status is the
    one the REST binding gives the same error."""
    if opens_stream or isinstance(error, UnauthenticatedError | RateLimitedError):
        return error.http_status
    return 200
