"""`create_app()`: the hub's Litestar application, wired from the collaborators it is given."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import Any

import anyio
from litestar import Litestar, Request, asgi, get
from litestar.datastructures import State
from litestar.exceptions import HTTPException
from litestar.response import Response
from litestar.types import Receive, Scope, Send

from hub.config import Settings, settle_default_skill
from hub.errors import (
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
    PayloadTooLargeError,
)
from hub.partners import Conversations, PartnerChildren, Partners, StatsBook
from hub.partners.sync import shared_partners
from hub.push import PushNotifier, Resolver
from hub.registry import Registry
from hub.server.card import CardDocument, ServedFeatures, build_card, check_card
from hub.server.card_serving import card_response
from hub.server.cors import CARD_PATHS, cors_middleware
from hub.server.extensions import ExtensionPolicy
from hub.server.gate import Gate
from hub.server.gateway import Gateway
from hub.server.gateway.routes import gateway_routes
from hub.server.jsonrpc import handle_jsonrpc
from hub.server.mcp_door import MCP_PATH, build_mcp_door, refuse_without_the_extra
from hub.server.observability import OBSERVABILITY_ROUTES, QUIET_PATHS, Observability
from hub.server.rest import REST_ROUTES, rest_error_response
from hub.server.service import A2AService
from hub.server.state import HubState
from hub.skills import LocalSkill
from hub.skills.tools import with_tools
from hub.store import TaskStore, describe_store
from hub.tasks import TaskManager
from hub.telemetry import Telemetry, use_telemetry
from hub.telemetry.access import observe_requests
from hub.telemetry.logs import hub_logs_shown
from hub.telemetry.setup import build_telemetry

__all__ = ["create_app"]

log = logging.getLogger("hub.server")

AnyRequest = Request[Any, Any, Any]


@get(sorted(CARD_PATHS))
async def agent_card(request: AnyRequest) -> Response[bytes]:
    hub: HubState = request.app.state.hub
    settings = hub.settings.card
    return card_response(
        request,
        hub.service.card,
        cache_control=f"public, max-age={settings.cache_max_age}",
        hybrid=settings.hybrid,
        # The public card is meant to be read from anywhere, browsers included.
        headers={"Access-Control-Allow-Origin": "*"},
    )


@asgi("/", copy_scope=False)
async def jsonrpc_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    await handle_jsonrpc(scope, receive, send, scope["litestar_app"].state.hub)


@asgi(MCP_PATH, is_mount=True, copy_scope=False)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    door = scope["litestar_app"].state.hub.mcp
    if door is None:
        await refuse_without_the_extra(scope, receive, send)
    else:
        await door(scope, receive, send)


def _http_error(request: AnyRequest, exc: Exception) -> Response[bytes]:
    """Errors Litestar raises outside the hub's own handling (no route, wrong verb, a body
    over `limits.max_body` on a route that lets Litestar read it) in the A2A shape."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status in (404, 405):
        error: Any = MethodNotFoundError(
            f"no route for {request.method} {request.url.path}; see the card's "
            "supportedInterfaces for the A2A endpoints"
        )
    elif status == 413:
        limit = request.app.state.hub.settings.limits.max_body
        error = PayloadTooLargeError(
            f"request body is larger than {limit} bytes, the limit (limits.max_body)"
        )
    elif status < 500:
        error = InvalidRequestError(str(getattr(exc, "detail", "")) or "bad request")
    else:
        error = InternalError("the hub failed to handle this request")
    return rest_error_response(error)


def create_app(
    settings: Settings,
    *,
    store: TaskStore,
    skills: Mapping[str, LocalSkill],
    partners: Partners | None = None,
    conversations: Conversations | None = None,
    push_resolver: Resolver | None = None,
    telemetry: Telemetry | None = None,
) -> Litestar:
    """The hub's ASGI app. The store is opened and closed by the app's lifespan.

    Args:
        settings: the hub's settings.
        store: where tasks are kept.
        skills: the local skills by id.
        partners: the partner agents skills may call (`ctx.agents`), also served through
            the gateway at `/agents/{name}`; while the app runs, the registry's file is
            followed for edits, and the partners' HTTP client is closed when it stops. None
            for no partners.
        conversations: the partner context each hub conversation continues (`delegate`);
            a map of the app's own when not given.
        push_resolver: how push webhook hosts are resolved for the SSRF guard; default the
            system resolver (tests inject one).
        telemetry: the recorders (traces, metrics, access log); built from
            `settings.telemetry` and the OpenTelemetry environment variables when not given.
            The app's lifespan shuts its tracer down (exporting what is pending).

    Raises:
        ConfigError: `default_skill` names a skill not served, an extension names an unknown skill,
            the card promises what is not served, or tracing is on without the `otel` extra.
    """
    # Left out of the settings, the default skill is the first one served, here as in
    # `Hub` and `a2a-hub skills`, whoever built the settings.
    settings = settle_default_skill(settings, list(skills))
    gate = Gate(auth=settings.auth, limits=settings.limits, skills=list(skills))
    card = build_card(settings, [skill.card for skill in skills.values()])
    extensions = ExtensionPolicy.from_settings(settings.card.extensions)
    check_card(
        card,
        ServedFeatures(
            push_notifications=True,
            extended_card=gate.authenticator.enabled,
            security_schemes=gate.authenticator.schemes,
        ),
    )
    partners = partners if partners is not None else Partners(Registry())
    # Replicas share the partners added at run time through their store.
    sync = shared_partners(store, partners)
    stats = StatsBook()
    served, toolbox = with_tools(
        skills,
        partners,
        lambda: manager,
        swarm=settings.swarm,
        stats=stats,
        conversations=conversations if conversations is not None else Conversations(),
    )
    manager = TaskManager(
        store=store,
        executors=served,
        default_skill=settings.default_skill,
        limits=settings.limits,
        children=PartnerChildren(partners),
        admit_skill=extensions.admit_skill if extensions.by_skill else None,
    )
    push = None
    if settings.card.push_notifications:
        push = PushNotifier(store=store, settings=settings.push, resolver=push_resolver)
        manager.observe(push.observe)
    telemetry = telemetry if telemetry is not None else build_telemetry(settings.telemetry)
    observability = Observability(
        name=card.name,
        store=store,
        manager=manager,
        partners=partners,
        stats=stats,
        gate=gate,
        telemetry=telemetry,
        metrics_public=settings.telemetry.metrics.public or not gate.authenticator.enabled,
    )
    if telemetry.metrics is not None:
        telemetry.metrics.watch(observability.figures())
    service = A2AService(manager=manager, card=CardDocument.render(card), push=push)
    mcp = build_mcp_door(
        settings, service=service, toolbox=toolbox, partners=partners, skills=served, gate=gate
    )
    hub = HubState(
        settings=settings,
        observability=observability,
        service=service,
        gate=gate,
        gateway=Gateway(partners=partners, settings=settings, hub_card=card, store=store),
        extensions=extensions,
        mcp=mcp,
    )

    handlers: list[Any] = [
        agent_card,
        jsonrpc_endpoint,
        *OBSERVABILITY_ROUTES,
        *REST_ROUTES,
        *gateway_routes(),
    ]
    if settings.mcp.enabled:
        handlers.append(mcp_endpoint)
    app_state: dict[str, Any] = {"hub": hub}
    template_config = None
    if settings.ui.enabled:
        # Imported here: the console sits above the server (it uses the state and framing
        # built here), and a hub serving no console never loads its templates.
        from hub.console import build_console

        console = build_console(
            settings,
            store=store,
            skills={key: skill.card for key, skill in skills.items()},
            traffic=telemetry.metrics,
        )
        handlers.append(console.router)
        app_state["console"] = console.state
        template_config = console.templates

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        # Current for everything the lifespan starts (skills, commits, push, gateway pumps).
        with (
            use_telemetry(telemetry),
            hub_logs_shown(settings.server.log_level, settings.server.log_format),
        ):
            await store.open()
            log.info(
                "%s serves %s; tasks are kept in %s",
                card.name,
                ", ".join(skills),
                describe_store(store),
            )
            try:
                # Push starts before the manager, so the tasks its recovery fails are
                # reported. The gateway's partner streams end before the partners' HTTP
                # client closes. MCP calls end (canceling their tasks) while the task
                # manager still runs.
                async with (
                    partners,
                    partners.watching(),
                    sync.running() if sync is not None else nullcontext(),
                    hub.gateway,
                    push or nullcontext(),
                    manager,
                    mcp.running() if mcp is not None else nullcontext(),
                ):
                    # The tools MCP and the gateway describe are complete once the hub is
                    # ready: each partner by its card, or as unreachable with the reason.
                    await partners.warm()
                    observability.started = True
                    try:
                        yield
                    finally:
                        observability.started = False
            finally:
                await store.close()
                if telemetry.tracer is not None:
                    # Exports what is pending: blocking HTTP, off the event loop.
                    await anyio.to_thread.run_sync(telemetry.tracer.shutdown)

    return Litestar(
        route_handlers=handlers,
        lifespan=[lifespan],
        state=State(app_state),
        template_config=template_config,
        exception_handlers={HTTPException: _http_error, Exception: _http_error},
        middleware=[
            observe_requests(telemetry, quiet=QUIET_PATHS),
            cors_middleware(settings.cors),
        ],
        openapi_config=None,
        logging_config=None,
        # No route reads more: the A2A handlers read their bodies themselves, raw, to answer
        # in the protocol's own terms; every other body (the console's forms) is read by
        # Litestar, which stops at the limit (the declared length first) with a 413.
        request_max_body_size=settings.limits.max_body,
    )
