"""The one place where httpx failures and unusable HTTP answers become hub errors.

Every transport runs its I/O inside `translate_http_errors(agent_name)` and hands each
response to `check_status` / `read_json`, and each protocol error it finds to `remote_error`,
so a partner that is down, slow, cut off or answering garbage always surfaces as an error
from `hub.errors` that names the partner. The kinds of fault, and what a caller learns:

- no connection (refused, DNS): `AgentUnreachableError`, "agent 'x' is unreachable";
- no answer in time: `AgentTimeoutError`, "agent 'x' did not answer in time (ReadTimeout)";
- the connection cut mid-answer: `ConnectionLostError`, "the connection to agent 'x' broke
  before its answer was complete";
- HTTP 429 or 503: `AgentBusyError`, "agent 'x' is busy (HTTP 503)";
- any other HTTP error status: `RemoteRpcError`, "agent 'x' answered HTTP 500";
- not A2A (an HTML page, invalid or truncated JSON, a redirect, a wrong envelope, a result
  that does not match the schema): `InvalidAgentResponseError`, "agent 'x' answered
  something that is not A2A (HTTP 200, text/html)";
- a protocol error about the request (invalid params, task not found, ...): `RemoteRpcError`
  with the partner's code and its own message;
- any other protocol error (-32603, a code of the partner's own): `RemoteRpcError`, "agent
  'x': SendMessage failed with an internal error (code -32603)"; the error's `told` keeps the
  partner's own words ("... failed: the hub cannot reach its task store right now; retry
  shortly (code -32603)") for the CLI, whose user called that agent directly.

The partner's URL, the socket error and what its answer said never go into a message: they
are the error's `detail`, for the hub's log. Redirects are never followed (a partner's card
URL or interface URL that redirects is a fault naming the status): the URLs in agents.yaml
and in a card are meant to be the final ones, and a redirect could lead a call, with its
credentials, anywhere.
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from hub.client.guard import GuardRefusalError
from hub.errors import (
    AgentBusyError,
    AgentTimeoutError,
    AgentUnreachableError,
    CardFetchError,
    CircuitOpenError,
    ClientError,
    ConnectionLostError,
    InvalidAgentResponseError,
    ProtocolError,
    RemoteRpcError,
)
from hub.protocol.urls import shown_url

__all__ = [
    "check_status",
    "code_of_reason",
    "fault_of",
    "invalid_response",
    "read_json",
    "remote_error",
    "retry_after_seconds",
    "translate_http_errors",
]

# How much of an unexpected body goes into an error's detail: enough to recognise an error
# page, too little for a hostile partner to flood a log.
_SNIPPET = 160
# How much of an agent's own error message is passed on.
_TOLD = 300

# Protocol errors about the caller's request (its params, its task, an unsupported
# operation, its credentials: -32000 is a hub's UNAUTHENTICATED): the partner's message says
# what to fix, so it is passed on. Any other code (-32603, a code of the partner's own) is
# the partner's internal trouble: logged only.
_REQUEST_CODES = frozenset({-32600, -32601, -32602, *range(-32009, -32000), -32000})


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
    except GuardRefusalError as exc:
        # The guard's reason names the host the caller gave, never an address: it is kept.
        raise AgentUnreachableError(
            f"agent '{agent_name}' is unreachable ({exc})", detail=_describe(exc)
        ) from exc
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise AgentUnreachableError(
            f"agent '{agent_name}' is unreachable", detail=_describe(exc)
        ) from exc
    except httpx.TimeoutException as exc:
        raise AgentTimeoutError(
            f"agent '{agent_name}' did not answer in time ({type(exc).__name__})",
            detail=_describe(exc),
        ) from exc
    except httpx.RemoteProtocolError as exc:
        text = str(exc)
        # h11 says "peer closed connection ..." when a body (or a stream) was cut short; any
        # other protocol error means the bytes were not HTTP at all.
        if "peer closed" in text or "incomplete" in text:
            raise ConnectionLostError(
                f"the connection to agent '{agent_name}' broke before its answer was complete",
                detail=_describe(exc),
            ) from exc
        raise invalid_response(agent_name, "not valid HTTP", detail=_describe(exc)) from exc
    except (httpx.ReadError, httpx.WriteError, httpx.CloseError) as exc:
        raise ConnectionLostError(
            f"the connection to agent '{agent_name}' broke", detail=_describe(exc)
        ) from exc
    except httpx.TransportError as exc:
        raise AgentUnreachableError(
            f"agent '{agent_name}' cannot be called", detail=_describe(exc)
        ) from exc


def invalid_response(
    agent_name: str,
    problem: str,
    *,
    response: httpx.Response | None = None,
    detail: str | None = None,
) -> InvalidAgentResponseError:
    """The error for an answer that is not A2A, naming the partner and what kind of answer it
    was (`problem`: a few words, never the answer itself); `response` puts where it came from
    and what it said into the detail."""
    if response is not None:
        detail = "; ".join(part for part in (_answer(response), detail) if part)
    return InvalidAgentResponseError(
        f"agent '{agent_name}' answered something that is not A2A ({problem})",
        metadata={"agent": agent_name},
        detail=detail,
    )


def remote_error(
    agent_name: str,
    *,
    code: int,
    message: str,
    label: str,
    operation: str | None = None,
    data: object = None,
    response: httpx.Response | None = None,
) -> RemoteRpcError:
    """The error for a protocol error the partner answered with.

    Args:
        agent_name: the partner.
        code: the error's code (A2A or JSON-RPC; the HTTP status for a REST error that
            names no A2A reason).
        message: the partner's message: passed on for an error about the request (invalid
            params, task not found, ...), kept for the log otherwise.
        label: how the error names itself (`code -32001`, `TASK_NOT_FOUND`).
        operation: the operation refused, when the binding names it.
        data: the error's `data`, as received.
        response: the HTTP answer it came in, for the detail.
    """
    what = f"{operation} failed" if operation else "the call failed"
    told = f"agent '{agent_name}': {what}: {_bounded(message)} ({label})"
    if code in _REQUEST_CODES or 400 <= code < 500:
        text = told
    else:
        text = f"agent '{agent_name}': {what} with an internal error ({label})"
    where = _where(response.request) if response is not None and _has_request(response) else None
    detail = "; ".join(part for part in (where, f"its message: {message!r}") if part)
    return RemoteRpcError(text, code=code, data=data, detail=detail, told=told)


def code_of_reason(reason: str) -> int | None:
    """The code of the error an `ErrorInfo.reason` names (`TASK_NOT_FOUND` → -32001), from
    the hub's own error table, so a REST or gRPC error reads the same as the JSON-RPC one;
    None for a reason the table does not hold."""
    return _CODE_OF_REASON.get(reason)


def _subclasses(cls: type[ProtocolError]) -> Iterator[type[ProtocolError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


_CODE_OF_REASON = {error.reason: error.code for error in _subclasses(ProtocolError)}


def _bounded(message: str) -> str:
    """An agent's message as one line of at most `_TOLD` characters: its words reach a
    terminal, where a newline or an escape sequence of its choosing has no place."""
    line = " ".join("".join(c if c.isprintable() else " " for c in message).split())
    return line if len(line) <= _TOLD else line[: _TOLD - 3] + "..."


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
    """Raise for a redirect or an HTTP error status whose body the transport did not
    recognise.

    Call it after the transport has looked for a protocol error in the body (a JSON-RPC
    error, a `google.rpc.Status`): what is left is a plain HTTP failure.

    Raises:
        InvalidAgentResponseError: a redirect (3xx), which the hub does not follow.
        AgentBusyError: 429 or 503, with the partner's `Retry-After`.
        RemoteRpcError: any other status of 400 or above, its code the HTTP status.
    """
    status = response.status_code
    _refuse_redirect(response, agent_name)
    if status < 400:
        return
    if status in (429, 503):
        raise AgentBusyError(
            f"agent '{agent_name}' is busy (HTTP {status})",
            code=status,
            retry_after=retry_after_seconds(response.headers.get("retry-after")),
            detail=_answer(response),
        )
    raise RemoteRpcError(
        f"agent '{agent_name}' answered HTTP {status}", code=status, detail=_answer(response)
    )


def read_json(response: httpx.Response, agent_name: str) -> Any:
    """The response body as JSON, or a clear error when it is a redirect, an HTML page or
    not JSON."""
    _refuse_redirect(response, agent_name)
    media_type = _media_type(response)
    if media_type and not (media_type.endswith("/json") or media_type.endswith("+json")):
        raise invalid_response(
            agent_name, f"HTTP {response.status_code}, {media_type}", response=response
        )
    try:
        return json.loads(response.content)
    except ValueError:
        raise invalid_response(
            agent_name, f"HTTP {response.status_code}, invalid JSON", response=response
        ) from None


def fault_of(error: ClientError) -> str:
    """The kind of fault behind `error`, in a few words a caller may see (`unreachable`,
    `timed out`, `HTTP 500`, `not A2A`, ...); a card that could not be read, by its cause."""
    if isinstance(error, CardFetchError):
        cause = error.__cause__
        return fault_of(cause) if isinstance(cause, ClientError) else "not a valid agent card"
    if isinstance(error, AgentUnreachableError):
        return "unreachable"
    if isinstance(error, AgentTimeoutError):
        return "timed out"
    if isinstance(error, ConnectionLostError):
        return "connection lost"
    if isinstance(error, InvalidAgentResponseError):
        return "not A2A"
    if isinstance(error, CircuitOpenError):
        return "circuit open"
    if isinstance(error, RemoteRpcError):
        return f"HTTP {error.code}" if error.code > 0 else f"error {error.code}"
    return "failed"


def _refuse_redirect(response: httpx.Response, agent_name: str) -> None:
    if 300 <= response.status_code < 400:
        raise invalid_response(
            agent_name,
            f"HTTP {response.status_code}, a redirect, which the hub does not follow",
            response=response,
            detail=f"Location: {response.headers.get('location', '(none)')}",
        )


def _media_type(response: httpx.Response) -> str:
    content_type: str = response.headers.get("content-type", "")
    return content_type.split(";", 1)[0].strip().lower()


def _where(request: httpx.Request | None) -> str | None:
    return f"{request.method} {shown_url(str(request.url))}" if request is not None else None


def _describe(exc: httpx.HTTPError) -> str:
    refused = _socket_error(exc)
    text = str(exc)
    if refused is not None:
        # The socket's own words ("connection refused"): the transport's message repeats the
        # address, and aiohttp's transport reports a refused connection as ConnectTimeout.
        what = refused
    else:
        what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    try:
        where = _where(exc.request)
    except RuntimeError:  # an error raised before a request was attached
        where = None
    return f"{where}: {what}" if where else what


def _tls_failure(error: ssl.SSLError) -> str:
    """Why a TLS handshake failed, in OpenSSL's words: the certificate check's message
    (`unable to get local issuer certificate`), or the alert the peer sent
    (`tlsv13 alert certificate required`)."""
    if isinstance(error, ssl.SSLCertVerificationError) and error.verify_message:
        return f"TLS handshake failed: certificate verify failed ({error.verify_message})"
    reason = (error.reason or type(error).__name__).lower().replace("_", " ")
    return f"TLS handshake failed: {reason}"


def _socket_error(exc: BaseException) -> str | None:
    """What the operating system said about a connection that could not be made (refused,
    no route, ...), or why its TLS handshake failed, found among the causes of a connect
    error; None for anything else."""
    if not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        return None
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            # Its errno is OpenSSL's error kind, not the operating system's. (aiohttp's own
            # certificate error is one too, without OpenSSL's attributes: its cause has them.)
            if hasattr(cause, "reason"):
                return _tls_failure(cause)
        elif isinstance(cause, OSError) and isinstance(cause.errno, int) and cause.errno > 0:
            return os.strerror(cause.errno).lower()
        cause = (
            cause.__cause__
            or getattr(cause, "os_error", None)
            or getattr(cause, "certificate_error", None)
        )
    return None


def _answer(response: httpx.Response) -> str:
    """Where the answer came from, its status and type, and the start of its body."""
    where = _where(response.request) if _has_request(response) else None
    head = f"HTTP {response.status_code} {_media_type(response) or '(no content type)'}"
    parts = [part for part in (where, head) if part]
    try:
        text = " ".join(response.text.split())[:_SNIPPET]
    except (httpx.ResponseNotRead, UnicodeDecodeError):
        text = ""
    if text:
        parts.append(f"body {text!r}")
    return "; ".join(parts)


def _has_request(response: httpx.Response) -> bool:
    try:
        response.request  # noqa: B018 - the property raises when no request is attached
    except RuntimeError:
        return False
    return True
