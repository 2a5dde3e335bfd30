"""Every error the hub raises, in one tree.

```
HubError
├── ProtocolError                  sent to callers; carries a JSON-RPC code and an HTTP status
│   ├── ParseError                         -32700  body is not valid JSON
│   ├── InvalidRequestError                -32600  envelope is not a JSON-RPC 2.0 request
│   │   ├── PayloadTooLargeError                   body over limits.max_body (HTTP 413)
│   │   └── ContentTypeError                       body is not sent as JSON (HTTP 415)
│   ├── MethodNotFoundError                -32601  no such method or route
│   │   └── PartnerNotFoundError                   no such partner behind the gateway (404)
│   ├── InvalidParamsError                 -32602  params do not match the method's schema
│   │   ├── LimitExceededError                     a configured limit was reached (HTTP 429)
│   │   │   └── RateLimitedError                   over the request rate (429, Retry-After)
│   │   │       └── BudgetExhaustedError               a caller's budget is spent (429)
│   │   ├── PartTooLargeError                      a part over limits.max_part_bytes (413)
│   │   ├── SkillNotAllowedError                   a skill outside the caller's scope (403)
│   │   ├── DirectiveNotAllowedError               a directive the caller may not send (403)
│   │   ├── OperatorOnlyError                      an operator's action, not an operator (403)
│   │   ├── AgentNameTakenError                    a new partner's name is in use (409)
│   │   ├── AgentCardError                         a new partner's card is unreadable or unusable
│   │   └── UnsafeUrlError                         a URL the hub may not call (SSRF guard)
│   ├── UnauthenticatedError           -32000  no valid credential (HTTP 401)
│   ├── InternalError                      -32603  an unexpected failure inside the hub
│   │   └── PartnerUnavailableError                a partner behind the gateway failed (502)
│   │       ├── PartnerTimeoutError                    it did not answer in time (504)
│   │       └── PartnerBusyError                       it is overloaded or held back (503)
│   │   └── StoreUnavailableError                  the task store is unreachable (503)
│   ├── TaskNotFoundError                  -32001
│   ├── TaskNotCancelableError             -32002
│   ├── PushNotificationNotSupportedError  -32003
│   ├── UnsupportedOperationError          -32004
│   ├── ContentTypeNotSupportedError       -32005
│   ├── InvalidAgentResponseError          -32006  also a ClientError (see below)
│   ├── ExtendedAgentCardNotConfiguredError -32007
│   ├── ExtensionSupportRequiredError      -32008
│   └── VersionNotSupportedError           -32009
├── ConfigError                    a settings or agents.yaml file is wrong (start-up error)
│   ├── CardMismatchError                  the card advertises what the server does not serve
│   └── StoreInUseError                    another process owns the SQLite store; also a
│                                          StoreError (see below)
├── InvalidTransitionError         a task state change the state machine forbids
├── SkillError                     raised by a skill to fail its task with a message
├── StoreError                     the task store could not read or write
│   ├── StoreOutageError                   its server cannot be reached now (logged once)
│   └── StoreInUseError                    (the same class, drawn under ConfigError)
└── ClientError                    a call to another agent failed
    ├── AgentUnreachableError              no connection could be made (nothing was sent)
    ├── AgentTimeoutError                  the agent did not answer in time
    ├── ConnectionLostError                the connection broke after the request was sent
    ├── InvalidAgentResponseError          its answer is not A2A (HTML, bad JSON, a redirect)
    ├── CardFetchError                     no valid agent card could be read from its URL
    ├── PartnerAuthError                   no token to call it with could be obtained
    ├── CircuitOpenError                   the agent failed repeatedly; calls are held back
    ├── NoSupportedInterfaceError          the card offers no interface this client speaks
    ├── UnknownAgentError                  the name is not a partner in agents.yaml
    └── RemoteRpcError                     the agent answered with an error (its code and data)
        └── AgentBusyError                         HTTP 429 or 503, with its Retry-After
```

`InvalidAgentResponseError` doubles as the client's error for a partner whose reply breaks the
protocol (an HTML page, invalid or truncated JSON, a redirect, a wrong envelope): it is a
`ClientError` like every other partner fault, and the gateway reports it as -32006 to its own
caller. Client errors are made from httpx errors and unusable answers in one place,
`hub.client.http_errors`: a client error's message names the agent and the kind of fault
and nothing else (it may reach the hub's callers); what else is known (the agent's URL, the
socket error, what its answer said) is in its `detail`, for the hub's log.

`StoreInUseError` doubles the same way: the store refuses to open a SQLite file another
process holds (a `StoreError`, from the store), and for the command line that is a
configuration error (exit status 2): nothing was read or sent, and the fix is a setting.

A `ProtocolError` is turned into a JSON-RPC error or a `google.rpc.Status` body in one place
(`hub.server.errors`); everything else that reaches a request boundary becomes `InternalError`
there, with nothing internal in the message.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "A2A_DOMAIN",
    "AgentBusyError",
    "AgentCardError",
    "AgentNameTakenError",
    "AgentTimeoutError",
    "AgentUnreachableError",
    "BudgetExhaustedError",
    "CardFetchError",
    "CardMismatchError",
    "CardRefusedError",
    "CircuitOpenError",
    "ClientError",
    "ConfigError",
    "ConnectionLostError",
    "ContentTypeError",
    "ContentTypeNotSupportedError",
    "DirectiveNotAllowedError",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "FieldViolation",
    "HubError",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "InvalidTransitionError",
    "LimitExceededError",
    "MethodNotFoundError",
    "NoSupportedInterfaceError",
    "OperatorOnlyError",
    "ParseError",
    "PartTooLargeError",
    "PartnerAuthError",
    "PartnerBusyError",
    "PartnerNotFoundError",
    "PartnerTimeoutError",
    "PartnerUnavailableError",
    "PayloadTooLargeError",
    "ProtocolError",
    "PushNotificationNotSupportedError",
    "RateLimitedError",
    "RemoteRpcError",
    "SkillError",
    "SkillNotAllowedError",
    "StoreError",
    "StoreInUseError",
    "StoreOutageError",
    "StoreUnavailableError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnauthenticatedError",
    "UnknownAgentError",
    "UnsafeUrlError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
]

A2A_DOMAIN = "a2a-protocol.org"


class HubError(Exception):
    """Base of every error the hub raises on purpose."""


FieldViolation = tuple[str, str]
"""A (field path, what is wrong with it) pair, reported as `google.rpc.BadRequest`."""


class ProtocolError(HubError):
    """An error that is reported to the caller in the protocol's own terms.

    Attributes:
        message: what went wrong and how to fix it, safe to show to the caller.
        metadata: string pairs carried in the `ErrorInfo` detail (for example the task id).
        violations: field-level problems, carried in a `BadRequest` detail.
    """

    code: ClassVar[int] = -32603
    reason: ClassVar[str] = "INTERNAL_ERROR"
    http_status: ClassVar[int] = 500
    rpc_status: ClassVar[str] = "INTERNAL"
    a2a_defined: ClassVar[bool] = False
    """True for the errors the A2A spec defines (-32001 … -32009)."""

    v03_code: int | None = None
    """The code a 0.3 caller gets instead of `code`, where 0.3 names the same case with
    another code (set on a partner's error the gateway passes on)."""

    def __init__(
        self,
        message: str,
        *,
        metadata: dict[str, str] | None = None,
        violations: list[FieldViolation] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = metadata or {}
        self.violations = violations or []


class ParseError(ProtocolError):
    code = -32700
    reason = "PARSE_ERROR"
    http_status = 400
    rpc_status = "INVALID_ARGUMENT"


class InvalidRequestError(ProtocolError):
    code = -32600
    reason = "INVALID_REQUEST"
    http_status = 400
    rpc_status = "INVALID_ARGUMENT"


class PayloadTooLargeError(InvalidRequestError):
    reason = "PAYLOAD_TOO_LARGE"
    http_status = 413


class ContentTypeError(InvalidRequestError):
    reason = "UNSUPPORTED_MEDIA_TYPE"
    http_status = 415


class MethodNotFoundError(ProtocolError):
    code = -32601
    reason = "METHOD_NOT_FOUND"
    http_status = 404
    rpc_status = "NOT_FOUND"


class InvalidParamsError(ProtocolError):
    code = -32602
    reason = "INVALID_PARAMS"
    http_status = 400
    rpc_status = "INVALID_ARGUMENT"


class LimitExceededError(InvalidParamsError):
    reason = "LIMIT_EXCEEDED"
    http_status = 429
    rpc_status = "RESOURCE_EXHAUSTED"


class PartTooLargeError(InvalidParamsError):
    """A message part is larger than `limits.max_part_bytes`: 413 with the body limit's
    reason, not a 429, which clients (the hub's own among them) read as "busy, retry"."""

    reason = "PAYLOAD_TOO_LARGE"
    http_status = 413


class RateLimitedError(LimitExceededError):
    """The caller sent more requests than `limits.requests_per_second` (with `limits.burst`)
    allows; sent with HTTP 429 on both bindings, and `Retry-After`.

    Attributes:
        retry_after: seconds until the caller's next request would be let through.
    """

    reason = "RATE_LIMITED"

    def __init__(
        self, message: str, *, retry_after: float, metadata: dict[str, str] | None = None
    ) -> None:
        super().__init__(message, metadata=metadata)
        self.retry_after = retry_after


class BudgetExhaustedError(RateLimitedError):
    """The caller has spent its budget over its window (`auth.credentials[].budget`): a
    partner call, or a model step of an orchestrator, past one of its limits. Sent with HTTP
    429 and `Retry-After` (when the window frees enough); the message and the metadata name
    the budget (`partner_calls`, `tokens`, `cost`), its limit and what was spent."""

    reason = "BUDGET_EXHAUSTED"


class SkillNotAllowedError(InvalidParamsError):
    """The message asks for a local skill the caller's credential is not scoped to (the
    card lists every skill, so the skill's existence is no secret)."""

    reason = "SKILL_NOT_ALLOWED"
    http_status = 403
    rpc_status = "PERMISSION_DENIED"


class DirectiveNotAllowedError(InvalidParamsError):
    """A federation directive that changes the hub (`spawn_agent`, learning through
    `sync_state`) from a caller whose credential is not granted it (`federation: [...]`), or
    from an anonymous caller the hub's `federation.anonymous` does not allow."""

    reason = "DIRECTIVE_NOT_ALLOWED"
    http_status = 403
    rpc_status = "PERMISSION_DENIED"


class OperatorOnlyError(InvalidParamsError):
    """An operator's action (the kill switch) from a credential that is not an operator's
    (`operator: true` in `auth.credentials`)."""

    reason = "OPERATOR_ONLY"
    http_status = 403
    rpc_status = "PERMISSION_DENIED"


class AgentNameTakenError(InvalidParamsError):
    """A partner added at run time would take a name agents.yaml or another runtime partner
    already uses (`-` and `_` count as the same)."""

    reason = "AGENT_NAME_TAKEN"
    http_status = 409
    rpc_status = "ALREADY_EXISTS"


class AgentCardError(InvalidParamsError):
    """A partner added at run time has no card the hub can use: unreachable, invalid, or
    offering no interface the hub speaks."""

    reason = "AGENT_CARD_UNUSABLE"


class UnsafeUrlError(InvalidParamsError):
    """A caller-supplied URL the hub will not call: not http(s), or its host resolves to a
    loopback, private, link-local, multicast or unspecified address that is not allow-listed
    (or does not resolve at all, so it cannot be checked)."""

    reason = "UNSAFE_URL"


class InternalError(ProtocolError):
    pass


class StoreUnavailableError(InternalError):
    """The hub could not read or write its task store (a PostgreSQL server restarting, a
    network cut): the request did nothing the caller can rely on; retry shortly. Sent with
    HTTP 503 and `Retry-After`."""

    reason = "STORE_UNAVAILABLE"
    http_status = 503
    rpc_status = "UNAVAILABLE"
    retry_after = 1.0


class PartnerNotFoundError(MethodNotFoundError):
    """The gateway (`/agents/{name}`) names no partner the caller may reach: not in
    agents.yaml, disabled, or outside the caller's partner scope (all three read alike)."""

    reason = "PARTNER_NOT_FOUND"


class PartnerUnavailableError(InternalError):
    """A partner behind the gateway could not serve the call: unreachable, its card
    unreadable, its connection lost, or it refused the hub's own credentials."""

    reason = "PARTNER_UNAVAILABLE"
    http_status = 502
    rpc_status = "UNAVAILABLE"


class PartnerTimeoutError(PartnerUnavailableError):
    """A partner behind the gateway did not answer within its timeout or the caller's
    deadline."""

    reason = "PARTNER_TIMEOUT"
    http_status = 504
    rpc_status = "DEADLINE_EXCEEDED"


class PartnerBusyError(PartnerUnavailableError):
    """A partner behind the gateway is overloaded (it answered 429 or 503) or its circuit
    breaker holds calls back; sent with `Retry-After`.

    Attributes:
        retry_after: seconds after which a call may succeed.
    """

    reason = "PARTNER_BUSY"
    http_status = 503

    def __init__(
        self, message: str, *, retry_after: float, metadata: dict[str, str] | None = None
    ) -> None:
        super().__init__(message, metadata=metadata)
        self.retry_after = retry_after


class UnauthenticatedError(ProtocolError):
    """Auth is on and the request carries no credential, or one the hub does not know; sent
    with HTTP 401 and a `WWW-Authenticate` challenge on both bindings.

    A2A defines no JSON-RPC code for this (§3.3.2 maps it to HTTP 401 only), so the code is
    -32000: JSON-RPC 2.0 leaves -32000 … -32099 to the server, and A2A takes -32001 … -32099
    (§9.5), which leaves -32000 as the one server code no A2A error can ever collide with.
    The HTTP status and the `UNAUTHENTICATED` reason say the same to clients that do not know it.

    Attributes:
        challenge: the `WWW-Authenticate` value, naming the schemes the hub accepts.
    """

    code = -32000
    reason = "UNAUTHENTICATED"
    http_status = 401
    rpc_status = "UNAUTHENTICATED"

    def __init__(self, message: str, *, challenge: str) -> None:
        super().__init__(message)
        self.challenge = challenge


class _A2AError(ProtocolError):
    a2a_defined = True
    http_status = 400
    rpc_status = "FAILED_PRECONDITION"


class TaskNotFoundError(_A2AError):
    code = -32001
    reason = "TASK_NOT_FOUND"
    http_status = 404
    rpc_status = "NOT_FOUND"


class TaskNotCancelableError(_A2AError):
    code = -32002
    reason = "TASK_NOT_CANCELABLE"


class PushNotificationNotSupportedError(_A2AError):
    code = -32003
    reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"


class UnsupportedOperationError(_A2AError):
    code = -32004
    reason = "UNSUPPORTED_OPERATION"


class ContentTypeNotSupportedError(_A2AError):
    code = -32005
    reason = "CONTENT_TYPE_NOT_SUPPORTED"
    rpc_status = "INVALID_ARGUMENT"


class ClientError(HubError):
    """A call from the hub (or its CLI) to another agent failed.

    The message names the agent and the kind of fault, and may be shown to the hub's callers;
    it never holds the agent's address, a socket error or what the agent's answer said.

    Attributes:
        detail: what else is known, for the hub's log only: the agent's URL, the underlying
            exception, a snippet of its answer. None when the message says it all.
    """

    def __init__(self, message: str, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail

    def for_log(self) -> str:
        """The message with its detail, as the hub's log records the fault."""
        return f"{self} [{self.detail}]" if self.detail else str(self)


class InvalidAgentResponseError(_A2AError, ClientError):
    """The agent answered something that is not A2A: an HTML page, invalid or truncated JSON,
    a redirect, a JSON-RPC envelope without a result, a result that does not match the
    schema. The gateway passes it on as -32006."""

    code = -32006
    reason = "INVALID_AGENT_RESPONSE"
    http_status = 500
    rpc_status = "INTERNAL"

    def __init__(
        self,
        message: str,
        *,
        metadata: dict[str, str] | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message, metadata=metadata)
        self.detail = detail


class ExtendedAgentCardNotConfiguredError(_A2AError):
    code = -32007
    reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED"


class ExtensionSupportRequiredError(_A2AError):
    code = -32008
    reason = "EXTENSION_SUPPORT_REQUIRED"


class VersionNotSupportedError(_A2AError):
    code = -32009
    reason = "VERSION_NOT_SUPPORTED"


class ConfigError(HubError):
    """A settings file, `agents.yaml` or a skill reference is wrong; raised at start-up."""


class CardMismatchError(ConfigError):
    """The agent card advertises something the running server does not implement."""


class InvalidTransitionError(HubError):
    """A task state change that the task state machine does not allow."""


class SkillError(HubError):
    """Raised inside a skill to fail its task with a message the caller will see."""


class StoreError(HubError):
    """The task store failed to read or write."""


class StoreOutageError(StoreError):
    """The task store's server cannot be reached right now (restarting, a network cut).

    The store logs the outage once when it starts and once when it ends, so whoever
    catches this need not log it again; what failed is retried or refused as retryable."""


class StoreInUseError(StoreError, ConfigError):
    """The SQLite store is open in another process: refused at start-up, before anything is
    read or sent (a configuration error: give this process a store of its own)."""


class AgentUnreachableError(ClientError):
    """No connection to the agent could be made."""


class AgentTimeoutError(ClientError):
    """The agent did not answer within the deadline."""


class RemoteRpcError(ClientError):
    """The agent answered with a protocol error, or with an HTTP error status.

    Attributes:
        code: the A2A or JSON-RPC code, in its A2A 1.0 meaning (a 0.3 agent's code is
            translated where 0.3 names the case differently); or the HTTP status, when the
            answer held no protocol error.
        data: the error's `data` member as received.
        told: the message with the agent's own words in it, for a person who called that
            agent directly (the CLI); the message itself leaves out an agent's words about
            its internal trouble, as it may reach the hub's own callers.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int,
        data: object = None,
        detail: str | None = None,
        told: str | None = None,
    ) -> None:
        super().__init__(message, detail=detail)
        self.code = code
        self.data = data
        self.told = told or message


class AgentBusyError(RemoteRpcError):
    """The agent answered HTTP 429 or 503: it is overloaded or down for a while.

    Attributes:
        retry_after: seconds the agent asked the caller to wait, when it said.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int,
        data: object = None,
        retry_after: float | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message, code=code, data=data, detail=detail)
        self.retry_after = retry_after


class ConnectionLostError(ClientError):
    """The connection broke after the request was sent (a reset, or a body cut short).

    The agent may have started the work, so the request is not resent blindly; a stream is
    resumed through SubscribeToTask instead.
    """


class CardFetchError(ClientError):
    """No valid agent card could be read from its URL (its cause is chained)."""


class CardRefusedError(CardFetchError):
    """A partner's card was refused by the hub's own checks of it, not by the partner: its
    signature is missing or does not verify (`verify_card`), or the TLS files to reach it
    are not valid. The message says which and why."""


class PartnerAuthError(ClientError):
    """The hub has no token to call the partner with: its token endpoint refused the hub's
    client or the caller's token, could not be reached or answered with no usable token, or
    the caller's own token would have gone over plain HTTP. Nothing was sent to the partner.
    The message names the partner and the fault; the endpoint and its answer are in the
    `detail`, for the log."""


class CircuitOpenError(ClientError):
    """The agent failed too often in a row; calls are refused until a cool-down has passed.

    Attributes:
        retry_in: seconds until a trial call is let through.
    """

    def __init__(self, message: str, *, retry_in: float) -> None:
        super().__init__(message)
        self.retry_in = retry_in


class NoSupportedInterfaceError(ClientError):
    """The agent's card lists no interface (version and binding) that this client speaks."""


class UnknownAgentError(ClientError, KeyError):
    """The name is not a partner in agents.yaml (or the partner is disabled).

    A `KeyError` too, so a registry lookup reads like a mapping's.
    """

    def __str__(self) -> str:
        # KeyError would quote the message; the message is already a sentence.
        return str(self.args[0]) if self.args else ""
