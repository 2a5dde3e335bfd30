"""The one place where httpx failures and unusable HTTP answers become hub errors.

Every transport runs its I/O inside `translate_http_errors(agent_name)` and hands each
response to `check_status` / `read_json`, so a partner that is down, slow, cut off or
answering garbage always surfaces as an error from `hub.errors` that names the partner.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from hub.errors import (
    AgentBusyError,
    AgentTimeoutError,
    AgentUnreachableError,
    ConnectionLostError,
    InvalidAgentResponseError,
    RemoteRpcError,
)

__all__ = [
    "check_status",
    "invalid_response",
    "read_json",
    "retry_after_seconds",
    "translate_http_errors",
]

# How much of an unexpected body goes into an error message: enough to recognise an error
# page, too little for a hostile partner to flood a log.
_SNIPPET = 160


@contextmanager
def translate_http_errors(agent_name: str) -> Iterator[None]:
    """Turn httpx exceptions raised inside the block into hub client errors.

    Args:
        agent_name: the partner's name (or URL), used in every message.

    Raises:
        AgentUnreachableError: no connection was made, so nothing was sent.
        AgentTimeoutError: the partner did not answer within the read, write or pool timeout.
        ConnectionLostError: the connection broke after the request was sent.
        InvalidAgentResponseError: the partner answered something that is not HTTP.
    """
    try:
        yield
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise AgentUnreachableError(
            f"agent '{agent_name}' is unreachable ({exc or type(exc).__name__}); check that it "
            "is running "
            "and that its URL is right"
        ) from exc
    except httpx.TimeoutException as exc:
        raise AgentTimeoutError(
            f"agent '{agent_name}' did not answer in time ({type(exc).__name__}); raise its "
            "timeout if it is just slow"
        ) from exc
    except httpx.RemoteProtocolError as exc:
        text = str(exc)
        # h11 says "peer closed connection ..." when a body (or a stream) was cut short; any
        # other protocol error means the bytes were not HTTP at all.
        if "peer closed" in text or "incomplete" in text:
            raise ConnectionLostError(
                f"agent '{agent_name}' closed the connection before its answer was complete"
            ) from exc
        raise invalid_response(agent_name, f"its answer is not valid HTTP ({text})") from exc
    except (httpx.ReadError, httpx.WriteError, httpx.CloseError) as exc:
        raise ConnectionLostError(
            f"the connection to agent '{agent_name}' broke ({_describe(exc)})"
        ) from exc
    except httpx.TransportError as exc:
        raise AgentUnreachableError(
            f"agent '{agent_name}' cannot be called ({_describe(exc)})"
        ) from exc


def invalid_response(agent_name: str, problem: str) -> InvalidAgentResponseError:
    """The error for a reply that breaks the protocol, naming the partner."""
    return InvalidAgentResponseError(
        f"agent '{agent_name}' sent an invalid A2A response: {problem}",
        metadata={"agent": agent_name},
    )


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date), if it holds one."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def check_status(response: httpx.Response, agent_name: str) -> None:
    """Raise for an HTTP error status whose body the transport did not recognise.

    Call it after the transport has looked for a protocol error in the body (a JSON-RPC
    error, a `google.rpc.Status`): what is left is a plain HTTP failure.

    Raises:
        AgentBusyError: 429 or 503, with the partner's `Retry-After`.
        RemoteRpcError: any other status of 400 or above, its code the HTTP status.
    """
    status = response.status_code
    if status < 400:
        return
    detail = _body_snippet(response)
    if status in (429, 503):
        raise AgentBusyError(
            f"agent '{agent_name}' is busy (HTTP {status}){detail}",
            code=status,
            retry_after=retry_after_seconds(response.headers.get("retry-after")),
        )
    raise RemoteRpcError(f"agent '{agent_name}' answered HTTP {status}{detail}", code=status)


def read_json(response: httpx.Response, agent_name: str) -> Any:
    """The response body as JSON, or a clear error when it is an HTML page or not JSON."""
    content_type = response.headers.get("content-type", "")
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type and not (media_type.endswith("/json") or media_type.endswith("+json")):
        raise invalid_response(
            agent_name,
            f"HTTP {response.status_code} with content type '{media_type}', not JSON"
            f"{_body_snippet(response)}",
        )
    try:
        return json.loads(response.content)
    except ValueError:
        raise invalid_response(
            agent_name, f"HTTP {response.status_code} body is not JSON{_body_snippet(response)}"
        ) from None


def _describe(exc: httpx.HTTPError) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _body_snippet(response: httpx.Response) -> str:
    try:
        text = response.text
    except (httpx.ResponseNotRead, UnicodeDecodeError):
        return ""
    text = " ".join(text.split())[:_SNIPPET]
    return f": {text!r}" if text else ""
