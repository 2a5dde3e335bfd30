"""`create_app()`: the hub's Litestar application, wired from the collaborators it is given."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio
from litestar import Litestar, Request, asgi, get
from litestar.datastructures import State
from litestar.exceptions import HTTPException
from litestar.plugins import InitPluginProtocol
from litestar.response import Response
from litestar.types import Receive, Scope, Send

from hub.assembly import HubCore, build_core
from hub.config import Settings
from hub.console import ConsolePlugin
from hub.errors import (
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
    PayloadTooLargeError,
)
from hub.orchestrator import Orchestrator
from hub.partners import Conversations, Partners
from hub.protocol import AgentCard
from hub.push import Resolver
from hub.server.card import CardDocument, ServedFeatures, build_card, check_card, sign_card
from hub.server.card_serving import card_response
from hub.server.cors import CARD_PATHS, cors_middleware
from hub.server.errors import rest_error_response
from hub.server.gate import Gate
from hub.server.gateway import Gateway, GatewayKill
from hub.server.gateway_routes import gateway_routes
from hub.server.grpc_door import GrpcPlugin
from hub.server.jsonrpc import handle_jsonrpc
from hub.server.kill import KILL_ROUTES, KillSwitch
from hub.server.mcp_door import McpPlugin
from hub.server.observability import OBSERVABILITY_ROUTES, QUIET_PATHS, Observability
from hub.server.rest import REST_ROUTES
from hub.server.service import A2AService
from hub.server.state import HubState
from hub.skills import LocalSkill
from hub.store import TaskStore, describe_store
from hub.telemetry import Telemetry, use_telemetry
from hub.telemetry.access import observe_requests
from hub.telemetry.logs import hub_logs_shown
from hub.telemetry.setup import build_telemetry
from hub.telemetry.spend import SpendBook

__all__ = ["create_app"]

log = logging.getLogger("hub.server")

AnyRequest = Request[Any, Any, Any]
Lifespan = Callable[[Litestar], AbstractAsyncContextManager[None]]


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
    core = build_core(
        settings,
        skills=skills,
        store=store,
        partners=partners,
        conversations=conversations,
        push=True,
        push_resolver=push_resolver,
    )
    # Left out of the settings, the default skill is the first one served, here as in
    # `Hub` and `a2a-hub skills`, whoever built the settings.
    settings = core.settings
    gate = Gate(auth=settings.auth, limits=settings.limits, skills=list(skills))
    card = _checked_card(settings, skills, gate)
    telemetry = replace(
        telemetry if telemetry is not None else build_telemetry(settings.telemetry),
        spend=SpendBook(
            {cred.name: cred.budget for cred in settings.auth.credentials if cred.budget}
        ),
    )
    hub = _hub_state(core, card=card, gate=gate, telemetry=telemetry)
    return Litestar(
        route_handlers=[
            agent_card,
            jsonrpc_endpoint,
            *OBSERVABILITY_ROUTES,
            *KILL_ROUTES,
            *REST_ROUTES,
            *gateway_routes(),
        ],
        lifespan=[_lifespan(core, hub, telemetry)],
        plugins=_doors(core, hub, telemetry),
        state=State({"hub": hub}),
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


def _doors(core: HubCore, hub: HubState, telemetry: Telemetry) -> list[InitPluginProtocol]:
    """The doors beside the A2A endpoints, each mounted by its plugin when its settings say
    so: gRPC on `server.grpc`'s port, MCP at `/mcp` and the console at `ui.path`."""
    settings = core.settings
    return [
        GrpcPlugin(settings, hub=hub, telemetry=telemetry),
        McpPlugin(
            settings,
            service=hub.service,
            toolbox=core.toolbox,
            partners=core.partners,
            skills=core.skills,
            gate=hub.gate,
        ),
        ConsolePlugin(
            settings,
            store=core.store,
            skills={key: skill.card for key, skill in core.skills.items()},
            traffic=telemetry.metrics,
            skill_models={
                key: skill.model.name
                for key, skill in core.skills.items()
                if isinstance(skill, Orchestrator) and skill.model is not None
            },
        ),
    ]


def _checked_card(settings: Settings, skills: Mapping[str, LocalSkill], gate: Gate) -> AgentCard:
    """The hub's card, checked against what the app serves.

    Raises:
        ConfigError: an extension names an unknown skill, the card promises what is not
            served, or its signing key (`card.signing`) cannot be used.
    """
    card = build_card(settings, [skill.card for skill in skills.values()])
    check_card(
        card,
        ServedFeatures(
            push_notifications=True,
            extended_card=gate.authenticator.enabled,
            security_schemes=gate.authenticator.schemes,
        ).with_grpc(settings.server.grpc.enabled),
    )
    return sign_card(card, settings)


def _hub_state(core: HubCore, *, card: AgentCard, gate: Gate, telemetry: Telemetry) -> HubState:
    """What the route handlers share, over the core."""
    settings = core.settings
    observability = Observability(
        name=card.name,
        store=core.store,
        manager=core.manager,
        partners=core.partners,
        stats=core.stats,
        gate=gate,
        telemetry=telemetry,
        metrics_public=settings.telemetry.metrics.public or not gate.authenticator.enabled,
    )
    if telemetry.metrics is not None:
        telemetry.metrics.watch(observability.figures())
    return HubState(
        settings=settings,
        observability=observability,
        kill_switch=KillSwitch(
            manager=core.manager,
            gateway=GatewayKill(partners=core.partners, store=core.store),
        ),
        service=A2AService(manager=core.manager, card=CardDocument.render(card), push=core.push),
        gate=gate,
        gateway=Gateway(partners=core.partners, settings=settings, hub_card=card, store=core.store),
        extensions=core.extensions,
    )


def _lifespan(core: HubCore, hub: HubState, telemetry: Telemetry) -> Lifespan:
    """The app's own lifespan: the core, then the gateway and readiness; the doors' pieces
    (the MCP door's task group) come after it, so they stop first."""
    settings = hub.settings

    def announce() -> None:
        log.info(
            "%s serves %s; tasks are kept in %s",
            hub.observability.name,
            ", ".join(core.skills),
            describe_store(core.store),
        )

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        # Current for everything the lifespan starts (skills, commits, push, gateway pumps).
        with (
            use_telemetry(telemetry),
            hub_logs_shown(settings.server.log_level, settings.server.log_format),
        ):
            try:
                # The gateway's partner streams end before the partners' HTTP client closes.
                async with core.running(opened=announce), hub.gateway:
                    hub.observability.started = True
                    try:
                        yield
                    finally:
                        hub.observability.started = False
            finally:
                if telemetry.tracer is not None:
                    # Exports what is pending: blocking HTTP, off the event loop.
                    await anyio.to_thread.run_sync(telemetry.tracer.shutdown)

    return lifespan
