"""Who is looking at the console, and what each request must carry.

Every page resolves its `Visitor` from the session cookie (set on the first visit; the hub
stores a session only when a visitor signs in). With auth on, a visitor who has not given a
credential is sent to the sign-in page; with auth off every visitor is the anonymous caller.
The console then calls the hub's operations in that caller's call scope, so it sees exactly
what the credential may see: its own tasks, its skills and its partners.

State-changing requests (POST) must come from the console's own pages: a cross-origin
`Origin` is refused, and the session's CSRF token must be in the form or the
`X-CSRF-Token` header.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from litestar import Request
from litestar.datastructures import Cookie, UploadFile

from hub.console.session import CSRF_FIELD, CSRF_HEADER, ConsoleSession
from hub.console.state import ConsoleState
from hub.partners import PartnerView
from hub.protocol import GetTaskRequest, Task
from hub.protocol.trace import CallScope, use_scope
from hub.server.auth import Caller
from hub.server.state import HubState

__all__ = [
    "COOKIE",
    "AnyRequest",
    "CsrfRefusedError",
    "SignInRequiredError",
    "Visitor",
    "acting_as",
    "check_csrf",
    "console_of",
    "form_and_files",
    "form_of",
    "hub_of",
    "partners_of",
    "session_cookie",
    "task_of_page",
    "visitor_of",
]

AnyRequest = Request[Any, Any, Any]
COOKIE = "a2a_hub_console"


class SignInRequiredError(Exception):
    """Auth is on and the visitor has not given a credential yet."""


class CsrfRefusedError(Exception):
    """A state-changing request without the session's token, or from another origin."""


@dataclass(frozen=True, slots=True)
class Visitor:
    session: ConsoleSession
    caller: Caller

    @property
    def name(self) -> str:
        """The credential's name ("" with auth off)."""
        return self.caller.name


def hub_of(request: AnyRequest) -> HubState:
    hub: HubState = request.app.state.hub
    return hub


def partners_of(request: AnyRequest, visitor: Visitor) -> PartnerView:
    """The partners the visitor may reach, as the A2A endpoints let its credential."""
    return PartnerView.narrowed(hub_of(request).gateway.partners, visitor.caller.reach)


def console_of(request: AnyRequest) -> ConsoleState:
    console: ConsoleState = request.app.state.console
    return console


def _address(request: AnyRequest) -> str:
    client = request.client
    return client.host if client else ""


def visitor_of(request: AnyRequest, *, signed_in: bool = True) -> Visitor:
    """The request's visitor: its signed-in session, or an anonymous one (with a cookie to
    set on a first visit) that the hub does not store.

    Raises:
        SignInRequiredError: `signed_in` and auth is on and no credential was given.
    """
    console = console_of(request)
    cookie = request.cookies.get(COOKIE)
    session = console.sessions.find(cookie)
    if session is None:
        session = console.sessions.anonymous(cookie)
        if session.session_id != cookie:
            request.state.console_session = session  # the page sets the cookie
    if session.caller is not None:
        return Visitor(session, session.caller)
    if signed_in and console.auth_enabled:
        raise SignInRequiredError
    return Visitor(session, Caller(address=_address(request)))


def session_cookie(request: AnyRequest) -> list[Cookie]:
    """The session cookie to set, when this request started (or replaced) the session."""
    session: ConsoleSession | None = request.state.get("console_session")
    if session is None:
        return []
    console = console_of(request)
    return [
        Cookie(
            key=COOKIE,
            value=session.session_id,
            path=console.path,
            httponly=True,
            samesite="strict",
            secure=console.secure_cookie,
        )
    ]


def _check_origin(request: AnyRequest) -> None:
    origin = request.headers.get("origin")
    if origin is not None:
        # The hub's own origin: as the browser reached it, or its public URL (a proxy in
        # front may rewrite the Host header).
        public = urlsplit(hub_of(request).settings.server.base_url()).netloc
        if urlsplit(origin).netloc not in (request.headers.get("host", ""), public):
            raise CsrfRefusedError


def check_csrf(request: AnyRequest, visitor: Visitor, form_token: str | None) -> None:
    """Refuse a state-changing request that is not from the console's own page.

    Raises:
        CsrfRefusedError: another origin sent it, or it lacks the session's token.
    """
    _check_origin(request)
    token = request.headers.get(CSRF_HEADER) or form_token
    if not visitor.session.accepts(token):
        raise CsrfRefusedError


async def form_of(request: AnyRequest, visitor: Visitor) -> dict[str, str]:
    """The posted form's fields, once its CSRF token is checked. A form from another origin
    is refused before its body is read; the body is read up to `limits.max_body` (the app's
    request limit), past which the request is refused with 413.

    Raises:
        CsrfRefusedError: see `check_csrf`.
        RequestEntityTooLarge: the body is larger than `limits.max_body`.
    """
    fields, _ = await form_and_files(request, visitor)
    return fields


async def form_and_files(
    request: AnyRequest, visitor: Visitor
) -> tuple[dict[str, str], list[UploadFile]]:
    """The posted form's fields and the files it uploaded (a `multipart/form-data` form;
    an empty file field is none), checked and read as `form_of` does.

    Raises:
        CsrfRefusedError: see `check_csrf`.
        RequestEntityTooLarge: the body is larger than `limits.max_body`.
    """
    _check_origin(request)
    form = await request.form()
    fields: dict[str, str] = {}
    files: list[UploadFile] = []
    for key, value in form.multi_items():
        if isinstance(value, UploadFile):
            if value.filename:
                files.append(value)
        else:
            fields[key] = str(value)
    check_csrf(request, visitor, fields.pop(CSRF_FIELD, None))
    return fields, files


@contextmanager
def acting_as(request: AnyRequest, visitor: Visitor) -> Iterator[None]:
    """Run the block in the visitor's call scope, as the A2A endpoints run a request."""
    server = hub_of(request).settings.server
    scope = CallScope.from_headers(
        request.headers, here=server.base_url(), max_hops=server.max_hops
    )
    with use_scope(visitor.caller.scope(scope)):
        yield


async def task_of_page(request: AnyRequest, visitor: Visitor) -> Task:
    """The task a page's path names (`task_id`, and `agent_name` for a partner's task through
    the gateway), read with `GetTask` as the visitor: a task it may not see is not found."""
    agent: str | None = request.path_params.get("agent_name")
    task_id: str = request.path_params["task_id"]
    with acting_as(request, visitor):
        service = hub_of(request).service_for(agent)
        return await service.get_task(GetTaskRequest(id=task_id), visitor.name)
