"""Signing in to the console when auth is on: the visitor gives an API key or a bearer token
once; the hub's authenticator (the same `Gate` every A2A request passes, rate limit
included) names the credential, and the session keeps that name and its scopes, never the
secret."""

from __future__ import annotations

from litestar import get, post
from litestar.response import Redirect, Template

from hub.console.access import (
    COOKIE,
    AnyRequest,
    console_of,
    form_of,
    hub_of,
    session_cookie,
    visitor_of,
)
from hub.console.render import page
from hub.errors import ProtocolError

__all__ = ["LOGIN_ROUTES"]


@get("/login")
async def login_form(request: AnyRequest) -> Template | Redirect:
    console = console_of(request)
    visitor = visitor_of(request, signed_in=False)
    if not console.auth_enabled:
        return Redirect(path=console.path, status_code=303)
    return page(request, visitor, "login.html", refused="", header=_header(request))


def _header(request: AnyRequest) -> str:
    return hub_of(request).gate.authenticator.api_key_header


@post("/login", status_code=303)
async def login(request: AnyRequest) -> Template | Redirect:
    console = console_of(request)
    visitor = visitor_of(request, signed_in=False)
    fields = await form_of(request, visitor)
    if not console.auth_enabled:
        return Redirect(path=console.path, status_code=303)
    secret = fields.get("secret", "").strip()
    if fields.get("kind") == "bearer":
        headers = {"authorization": f"Bearer {secret}"}
    else:
        headers = {_header(request).lower(): secret}
    client = request.client
    try:
        caller = await hub_of(request).gate.admit(headers, address=client.host if client else "")
    except ProtocolError as error:
        # The refusal names what was wrong, never what was sent.
        return page(
            request,
            visitor,
            "login.html",
            status_code=error.http_status,
            refused=error.message,
            header=_header(request),
        )
    # A new session id on sign-in: an id handed out before it cannot be fixed on a victim.
    console.sessions.end(visitor.session.session_id)
    request.state.console_session = console.sessions.start(caller)
    return Redirect(path=console.path, status_code=303, cookies=session_cookie(request))


@post("/logout", status_code=303)
async def logout(request: AnyRequest) -> Redirect:
    console = console_of(request)
    visitor = visitor_of(request, signed_in=False)
    await form_of(request, visitor)
    console.sessions.end(visitor.session.session_id)
    target = f"{console.path}/login" if console.auth_enabled else console.path
    redirect = Redirect(path=target, status_code=303)
    redirect.delete_cookie(COOKIE, path=console.path)
    return redirect


LOGIN_ROUTES = [login_form, login, logout]
