"""What a caller of the gateway learns when its partner fails: the hub client's errors as the
A2A errors the bindings render.

A partner's own protocol error keeps its code (TaskNotFound stays -32001, whatever version or
binding either side speaks). A partner that cannot be reached, times out, is overloaded or
refuses the hub's own credentials is the hub's problem, not the caller's: it becomes a
`PartnerUnavailableError` (-32603; HTTP 502, 503 or 504 on REST) that names the partner.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager

from hub.errors import (
    AgentBusyError,
    AgentTimeoutError,
    AgentUnreachableError,
    CardFetchError,
    CircuitOpenError,
    ClientError,
    ConnectionLostError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    NoSupportedInterfaceError,
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
    caller can only wait or tell the hub's operator: the details (the partner's address, what
    its error page said) are logged here, once, and the caller's message names the partner.
    """
    metadata = {"agent": agent_name}
    if isinstance(exc, ProtocolError):  # the client's own verdict (invalid response, 0.3 limits)
        exc.metadata.setdefault("agent", agent_name)
        return exc
    if isinstance(exc, UnknownAgentError):
        return PartnerNotFoundError(str(exc), metadata=metadata)
    if isinstance(exc, RemoteRpcError) and not isinstance(exc, AgentBusyError):
        kept = _KEPT.get(exc.code) or _HTTP_KEPT.get(exc.code)
        if kept is not None:
            return kept(str(exc), metadata=metadata)
    if isinstance(exc, CircuitOpenError | AgentBusyError):
        log.info("gateway: %s", exc)
        wait = exc.retry_in if isinstance(exc, CircuitOpenError) else exc.retry_after or 1.0
        return PartnerBusyError(
            f"agent '{agent_name}' is busy or failing; retry in {max(1, math.ceil(wait))} s",
            retry_after=wait,
            metadata=metadata,
        )
    log.warning("gateway: %s", exc)
    if isinstance(exc, AgentTimeoutError):  # its message names the partner and the limit only
        return PartnerTimeoutError(str(exc), metadata=metadata)
    return PartnerUnavailableError(_unavailable(exc, agent_name), metadata=metadata)


def _unavailable(exc: ClientError, agent_name: str) -> str:
    agent = f"agent '{agent_name}'"
    if isinstance(exc, RemoteRpcError) and exc.code in _CREDENTIALS_REFUSED:
        return f"{agent} refused the hub's credentials; its auth in agents.yaml needs fixing"
    if isinstance(exc, AgentUnreachableError):
        problem = f"{agent} is unreachable; check that it is running"
    elif isinstance(exc, ConnectionLostError):
        problem = f"the connection to {agent} broke before its answer was complete"
    elif isinstance(exc, CardFetchError):
        problem = f"{agent}: its agent card could not be read"
    elif isinstance(exc, NoSupportedInterfaceError):
        return str(exc)  # what the card offers, and what the hub speaks
    elif isinstance(exc, RemoteRpcError):
        problem = f"{agent} failed to handle the call (error {exc.code})"
    else:
        problem = f"{agent} cannot be called now"
    return problem + " (the hub's log has the details)"


@contextmanager
def partner_errors(agent_name: str) -> Iterator[None]:
    """Raise every failure of a call to `agent_name` inside the block as `as_caller_error`
    makes it; every error names the partner in its `ErrorInfo` metadata (`agent`)."""
    try:
        yield
    except ProtocolError as exc:
        exc.metadata.setdefault("agent", agent_name)
        raise
    except ClientError as exc:
        raise as_caller_error(exc, agent_name) from exc
