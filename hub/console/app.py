"""`build_console`: the console's routes, templates and static files, mounted by `ConsolePlugin`
under `ui.path` when `ui.enabled`.

Pages are rendered on the server by Litestar's Jinja engine with autoescaping on, from
templates inside this package; the one script (`static/console.js`) and the stylesheet are
served from the package too, so the console works with no network. Every response carries a
Content-Security-Policy that allows scripts, styles and connections from the hub only, and
no inline script.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from litestar import Response, Router
from litestar.datastructures import ResponseHeader
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.response import Redirect
from litestar.static_files import create_static_files_router
from litestar.template import TemplateConfig

from hub.config import Settings
from hub.console.access import AnyRequest, CsrfRefusedError, SignInRequiredError
from hub.console.chat import CHAT_ROUTES
from hub.console.login import LOGIN_ROUTES
from hub.console.overview import OVERVIEW_ROUTES
from hub.console.partners import PARTNER_ROUTES
from hub.console.spend import SPEND_ROUTES
from hub.console.state import ConsoleState
from hub.console.task_page import TASK_ROUTES
from hub.console.tasks import TASK_LIST_ROUTES
from hub.console.template_engine import DeferredJinjaEngine
from hub.console.traffic import TrafficSource
from hub.console.tree import TREE_ROUTES
from hub.protocol import AgentSkill
from hub.store import TaskStore

__all__ = ["CONTENT_SECURITY_POLICY", "Console", "build_console"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_HEADERS = [
    ResponseHeader(name="Content-Security-Policy", value=CONTENT_SECURITY_POLICY),
    ResponseHeader(name="X-Content-Type-Options", value="nosniff"),
    ResponseHeader(name="X-Frame-Options", value="DENY"),
    # same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on
    # form posts, and the CSRF check could not tell the console's own pages from others.
    ResponseHeader(name="Referrer-Policy", value="same-origin"),
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Console:
    """What the app needs to serve the console: its router, its templates, its state."""

    router: Router
    templates: TemplateConfig[DeferredJinjaEngine]
    state: ConsoleState


def _sign_in(request: AnyRequest, exc: Exception) -> Response[bytes]:
    path: str = request.app.state.console.path
    return Redirect(path=f"{path}/login", status_code=303)


def _forbidden(request: AnyRequest, exc: Exception) -> Response[bytes]:
    return Response(
        content=b"refused: this form is not from a console page of this hub, or it has "
        b"expired; reload the page and try again",
        status_code=403,
        media_type="text/plain",
    )


def _too_large(request: AnyRequest, exc: Exception) -> Response[bytes]:
    limit: int = request.app.state.hub.settings.limits.max_body
    return Response(
        content=f"refused: the form is larger than {limit} bytes, the limit "
        "(limits.max_body)".encode(),
        status_code=413,
        media_type="text/plain",
    )


def build_console(
    settings: Settings,
    *,
    store: TaskStore,
    skills: Mapping[str, AgentSkill],
    traffic: TrafficSource | None = None,
    skill_models: Mapping[str, str] | None = None,
) -> Console:
    """The console for a hub with these settings.

    Args:
        settings: the hub's settings (`ui`, `auth`, the public URL).
        store: the task store the hub serves (for the delegation ledger's lines).
        skills: the card entries of the local skills, by id.
        traffic: the hub's request rate and error rate, when it measures them.
        skill_models: the entry of `models:` each orchestrator skill uses, by skill id (a
            credential sees the tokens and cost of the models of its skills only).
    """
    static = create_static_files_router(
        path="/static",
        directories=[Path(__file__).parent / "static"],
        name="console-static",
        include_in_schema=False,
    )
    router = Router(
        path=settings.ui.path,
        route_handlers=[
            *OVERVIEW_ROUTES,
            *LOGIN_ROUTES,
            *PARTNER_ROUTES,
            *TASK_LIST_ROUTES,
            *TASK_ROUTES,
            *CHAT_ROUTES,
            *TREE_ROUTES,
            *SPEND_ROUTES,
            static,
        ],
        response_headers=_HEADERS,
        exception_handlers={
            SignInRequiredError: _sign_in,
            CsrfRefusedError: _forbidden,
            RequestEntityTooLarge: _too_large,
        },
    )
    state = ConsoleState(
        path=settings.ui.path,
        auth_enabled=settings.auth.enabled,
        secure_cookie=settings.server.base_url().startswith("https://"),
        store=store,
        skills=skills,
        traffic=traffic,
        skill_models=dict(skill_models or {}),
    )
    return Console(
        router=router,
        templates=TemplateConfig(instance=DeferredJinjaEngine()),
        state=state,
    )
