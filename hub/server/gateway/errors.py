"""What a caller of the gateway learns when its partner fails: the hub client's errors as the
A2A errors the bindings render.

A partner's own protocol error about the request keeps its code and the partner's message
(TaskNotFound stays -32001, whatever version or binding either side speaks); where 0.3 and
1.0 name the case with different codes (`hub.protocol.v03.errors`), the caller gets the
code of its own version. A partner that answers something that is not A2A is -32006. A
partner that cannot be reached, times out, is overloaded, fails inside or refuses the hub's
own credentials is the hub's problem, not the caller's: it becomes a
`PartnerUnavailableError` (-32603; HTTP 502, 503 or 504 on REST). Every message names the
partner and the kind of fault, never its address or what its answer said: those are logged
here, once.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager

from hub.errors import (
    AgentBusyError,
    AgentTimeoutError,
    CircuitOpenError,
    ClientError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    PartnerBusyError,
    PartnerNotFoundError,
    PartnerTimeoutError,
    PartnerUnavailableError,
    ProtocolError,
    PushNotificationNotSupportedError,
    RemoteRpcError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnknownAgentError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from hub.protocol.v03.errors import code_to_v03

__all__ = ["as_caller_error", "partner_errors"]

log = logging.getLogger("hub.server.gateway")

# The partner's codes that say something about the caller's request: passed on as they are.
_KEPT: dict[int, type[ProtocolError]] = {
    error.code: error
    for error in (
        InvalidRequestError,
        MethodNotFoundError,
        InvalidParamsError,
        TaskNotFoundError,
        TaskNotCancelableError,
        PushNotificationNotSupportedError,
        UnsupportedOperationError,
        ContentTypeNotSupportedError,
        InvalidAgentResponseError,
        ExtendedAgentCardNotConfiguredError,
        ExtensionSupportRequiredError,
        VersionNotSupportedError,
    )
}
# A REST partner's error without an A2A reason carries only its HTTP status.
_HTTP_KEPT: dict[int, type[ProtocolError]] = {
    400: InvalidRequestError,
    404: MethodNotFoundError,
    405: MethodNotFoundError,
    415: InvalidRequestError,
}
# The partner refused the hub's credentials: -32000 (a hub), HTTP 401 / 403 (REST).
_CREDENTIALS_REFUSED = frozenset({-32000, 401, 403})


def as_caller_error(exc: ClientError | ProtocolError, agent_name: str) -> ProtocolError:
    """The error the gateway's caller gets for `exc`, raised while calling `agent_name`.

    A partner's refusal of the request itself keeps its code and message. For the rest the
    caller can only wait or tell the hub's operator: the client's message (the partner's name
    and the kind of fault) is what the caller gets, and the details (the partner's address,
    the socket error, what its answer said) are logged here, once.
    """
    metadata = {"agent": agent_name}
    if isinstance(exc, UnknownAgentError):
        return PartnerNotFoundError(str(exc), metadata=metadata)
    if isinstance(exc, RemoteRpcError) and not isinstance(exc, AgentBusyError):
        kept = _KEPT.get(exc.code) or _HTTP_KEPT.get(exc.code)
        if kept is not None:
            error = kept(str(exc), metadata=metadata)
            v03_code = code_to_v03(error.code, str(exc))
            if v03_code != error.code:
                error.v03_code = v03_code
            return error
    if isinstance(exc, CircuitOpenError | AgentBusyError):
        log.info("gateway: %s", exc.for_log())
        wait = exc.retry_in if isinstance(exc, CircuitOpenError) else exc.retry_after or 1.0
        return PartnerBusyError(
            f"agent '{agent_name}' is busy or failing; retry in {max(1, math.ceil(wait))} s",
            retry_after=wait,
            metadata=metadata,
        )
    if isinstance(exc, ClientError):
        log.warning("gateway: %s", exc.for_log())
    if isinstance(exc, ProtocolError):  # the client's own verdict (not A2A, 0.3 limits)
        exc.metadata.setdefault("agent", agent_name)
        return exc
    if isinstance(exc, AgentTimeoutError):  # its message names the partner and the limit only
        return PartnerTimeoutError(str(exc), metadata=metadata)
    return PartnerUnavailableError(_unavailable(exc, agent_name), metadata=metadata)


def _unavailable(exc: ClientError, agent_name: str) -> str:
    if isinstance(exc, RemoteRpcError) and exc.code in _CREDENTIALS_REFUSED:
        return (
            f"agent '{agent_name}' refused the hub's credentials; its auth in agents.yaml "
            "needs fixing"
        )
    return f"{exc} (the hub's log has the details)"


@contextmanager
def partner_errors(agent_name: str) -> Iterator[None]:
    """Raise every failure of a call to `agent_name` inside the block as `as_caller_error`
    makes it; every error names the partner in its `ErrorInfo` metadata (`agent`)."""
    try:
        yield
    except ClientError as exc:  # an answer that is not A2A is a ProtocolError too
        error = as_caller_error(exc, agent_name)  # logs the details
        if isinstance(exc, ProtocolError):  # not A2A: already the error the caller gets
            raise
        raise error from exc
    except ProtocolError as exc:
        exc.metadata.setdefault("agent", agent_name)
        raise
