"""`a2a-hub send` and `a2a-hub tasks`: talk to any A2A agent by URL."""

from __future__ import annotations

import argparse
import os

import httpx

from hub.cli.render import describe, describe_event
from hub.client import A2AClient, CardCache, Timeouts, build_http_client, card_url, user_message
from hub.config import Settings
from hub.errors import CardFetchError
from hub.protocol import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    ListTasksRequest,
    TaskState,
)

__all__ = ["send", "tasks"]


API_KEY_ENV = "A2A_HUB_API_KEY"
TOKEN_ENV = "A2A_HUB_TOKEN"


def _credentials(args: argparse.Namespace, card: AgentCard) -> dict[str, str]:
    """The headers that carry `--api-key` / `--token` (or their environment variables): the
    API key in the header the card's apiKey scheme names (X-API-Key if it names none)."""
    headers = {}
    api_key = getattr(args, "api_key", None) or os.environ.get(API_KEY_ENV)
    if api_key:
        schemes = (card.security_schemes or {}).values()
        named = [
            scheme.api_key_security_scheme.name
            for scheme in schemes
            if scheme.api_key_security_scheme is not None
            and scheme.api_key_security_scheme.location == "header"
        ]
        headers[named[0] if named else "X-API-Key"] = api_key
    token = getattr(args, "token", None) or os.environ.get(TOKEN_ENV)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


async def _client(
    url: str, http: httpx.AsyncClient, timeouts: Timeouts, args: argparse.Namespace
) -> A2AClient:
    """A client from the agent's card; an agent without a card is spoken to as JSON-RPC 1.0 at
    the URL given (as a bare endpoint). The credentials go with every call but the card's."""
    try:
        card = await CardCache(http).get(card_url(url))
    except CardFetchError:
        card = AgentCard(
            name=url,
            description="an agent without a readable card",
            version="0",
            supported_interfaces=[
                AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
            ],
            capabilities=AgentCapabilities(streaming=True),
            default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            skills=[],
        )
    return A2AClient(
        card, http=http, agent_name=url, timeouts=timeouts, headers=_credentials(args, card)
    )


async def send(args: argparse.Namespace) -> None:
    message = user_message(args.text, context_id=args.context_id, task_id=args.task_id)
    metadata = {"skill": args.skill} if args.skill else None
    timeouts = Timeouts(connect=10.0, read=None if args.stream else 300.0)
    async with build_http_client() as http:
        client = await _client(args.url, http, timeouts, args)
        if args.stream:
            async with client.stream(message, metadata=metadata) as events:
                async for event in events:
                    print(event.to_json().decode() if args.json else describe_event(event))
            return
        result = await client.send(message, metadata=metadata)
        print(result.to_json().decode() if args.json else describe(result))


async def tasks(args: argparse.Namespace, settings: Settings) -> None:
    url = args.url or settings.server.base_url()
    async with build_http_client() as http:
        client = await _client(url, http, Timeouts(connect=10.0, read=30.0), args)
        if args.action == "list":
            try:
                state = TaskState(args.state) if args.state else None
            except ValueError:
                known = ", ".join(s.value for s in TaskState if s is not TaskState.UNSPECIFIED)
                raise SystemExit(
                    f"a2a-hub: unknown --state {args.state!r} (known: {known})"
                ) from None
            request = ListTasksRequest(
                context_id=args.context_id, status=state, page_size=args.page_size
            )
            page = await client.list_tasks(request)
            if args.json:
                print(page.to_json().decode())
                return
            for task in page.tasks:
                print(f"{task.id}  {task.status.state.value:28}  context {task.context_id}")
            print(f"({len(page.tasks)} of {page.total_size})")
            return
        if not args.task_id:
            raise SystemExit(f"a2a-hub tasks {args.action} needs a TASK_ID")
        if args.action == "get":
            task = await client.get_task(args.task_id)
        else:
            task = await client.cancel(args.task_id)
        print(task.to_json().decode() if args.json else describe(task))
