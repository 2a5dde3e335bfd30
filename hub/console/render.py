"""Pages and fragments: the context every template gets, and errors as pages."""

from __future__ import annotations

from typing import Any

from litestar.response import Template

from hub.console.access import AnyRequest, Visitor, console_of, session_cookie
from hub.console.session import CSRF_FIELD
from hub.errors import ProtocolError, UnknownAgentError

__all__ = ["page", "problem"]

_NO_STORE = {"Cache-Control": "no-store"}


def page(
    request: AnyRequest, visitor: Visitor, name: str, *, status_code: int = 200, **context: Any
) -> Template:
    """The page (or the part of one a live page fetches) `name` for `visitor`, with what
    the layout needs: the path, the visitor's name, the CSRF token forms carry."""
    console = console_of(request)
    return Template(
        template_name=name,
        context={
            "ui": console.path,
            "visitor": visitor.name,
            "auth": console.auth_enabled,
            "csrf": visitor.session.csrf,
            "csrf_field": CSRF_FIELD,
            **context,
        },
        cookies=session_cookie(request),
        status_code=status_code,
        headers=_NO_STORE,
        media_type="text/html",
    )


def problem(
    request: AnyRequest, visitor: Visitor, error: ProtocolError | UnknownAgentError
) -> Template:
    """What an operation refused, as a page with the operation's status code (404 for a
    partner the visitor may not reach, as for one agents.yaml does not list)."""
    if isinstance(error, UnknownAgentError):
        status, message = 404, str(error)
    else:
        status, message = error.http_status, error.message
    return page(
        request, visitor, "problem.html", status_code=status, title="Refused", message=message
    )
