"""The gateway's routes: `GET /agents`, each partner's card, and the hub's own JSON-RPC and
REST bindings again under `/agents/{agent_name}`, served by the partner's operations.

Every route passes the gate first (credential, request rate, open streams) and runs in the
caller's call scope, so partner scopes, the trace, the deadline and the hub trail (loop
refusal) hold for the gateway as for the hub's own endpoints.
"""

from __future__ import annotations

from typing import Any

from litestar import HttpMethod, Request, Router, get, route
from litestar.handlers import BaseRouteHandler
from litestar.response import Response
from litestar.types import ASGIApp, Receive, Scope, Send

from hub.protocol.trace import CallScope, use_scope
from hub.server.card_serving import card_response
from hub.server.cors import CARD_PATHS
from hub.server.errors import as_protocol_error, rest_error_response
from hub.server.jsonrpc import handle_jsonrpc
from hub.server.rest import REST_ROUTES
from hub.server.state import HubState

__all__ = ["gateway_routes"]

AnyRequest = Request[Any, Any, Any]
PREFIX = "/agents/{agent_name:str}"


async def _scope(hub: HubState, request: AnyRequest) -> CallScope:
    """Admit the request (401, 429) and the call scope it runs in."""
    client = request.client
    caller = await hub.gate.admit(request.headers, address=client.host if client else "")
    server = hub.settings.server
    call_scope = CallScope.from_headers(
        request.headers, here=server.base_url(), max_hops=server.max_hops
    )
    return caller.scope(call_scope)


@get("/agents")
async def list_agents(request: AnyRequest) -> Response[bytes]:
    """The partners the caller may reach, with their gateway URLs and cards."""
    hub: HubState = request.app.state.hub
    try:
        scope = await _scope(hub, request)
        with use_scope(scope):
            body = await hub.gateway.listing(scope)
    except Exception as exc:
        return rest_error_response(as_protocol_error(exc, where="the gateway"))
    return Response(
        content=body, media_type="application/json", headers={"Cache-Control": "no-store"}
    )


@get([PREFIX + path for path in sorted(CARD_PATHS)])
async def partner_card(request: AnyRequest) -> Response[bytes]:
    """The partner's card, pointing at the hub, in the rendering the request asks for
    (`card_response`: pure 1.0 for `A2A-Version: 1.0`, ETag, Last-Modified, 304)."""
    hub: HubState = request.app.state.hub
    agent_name: str = request.path_params["agent_name"]
    try:
        scope = await _scope(hub, request)
        with use_scope(scope):
            document = await hub.gateway.card(agent_name, scope)
    except Exception as exc:
        return rest_error_response(as_protocol_error(exc, where="the gateway"))
    # With auth on, who may read which card depends on the credential.
    visibility = "private" if hub.settings.auth.enabled else "public"
    return card_response(
        request,
        document,
        cache_control=f"{visibility}, max-age={hub.settings.card.cache_max_age}",
        hybrid=hub.settings.card.hybrid,
    )


# An HTTP route that hands the request to the raw ASGI JSON-RPC handler: Litestar 2.25 does
# not route a path with parameters to an `@asgi` handler (it looks up the parameters under
# the HTTP method). The body is left unread for `handle_jsonrpc`; a verb other than POST gets
# its JSON-RPC error, as on `/`.
@route(
    PREFIX,
    http_method=[
        HttpMethod.POST,
        HttpMethod.GET,
        HttpMethod.PUT,
        HttpMethod.PATCH,
        HttpMethod.DELETE,
    ],
)
async def partner_jsonrpc(request: AnyRequest) -> ASGIApp:
    """The JSON-RPC binding (1.0 and 0.3 method names), served by the partner."""
    hub: HubState = request.app.state.hub
    service = hub.service_for(request.path_params["agent_name"])

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        await handle_jsonrpc(scope, receive, send, hub, service=service)

    return serve


def gateway_routes() -> list[BaseRouteHandler | Router]:
    """The gateway's route handlers, the REST binding's included (a fresh router per app)."""
    return [
        list_agents,
        partner_card,
        partner_jsonrpc,
        Router(path=PREFIX, route_handlers=REST_ROUTES),
    ]
