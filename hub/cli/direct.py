"""`a2a-hub send` and `a2a-hub tasks`: talk to any A2A agent by URL."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import anyio
import httpx

from hub.cli.compose import compose_headers, compose_message, compose_metadata
from hub.cli.outcome import NEEDS_INPUT, OK, Running, UsageError, status_of
from hub.cli.render import answer_hint, describe, task_row
from hub.cli.stream import print_events, stream_style
from hub.client import A2AClient, CardCache, Timeouts, build_http_client, card_url
from hub.errors import (
    AgentTimeoutError,
    CardFetchError,
    InvalidAgentResponseError,
    RemoteRpcError,
    UnsupportedOperationError,
)
from hub.protocol import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    ListTasksRequest,
    Message,
    StreamResponse,
    Task,
    TaskState,
    state_name,
)

__all__ = ["cli_http_client", "credentials", "hub_headers", "print_card", "send", "tasks"]


API_KEY_ENV = "A2A_HUB_API_KEY"
TOKEN_ENV = "A2A_HUB_TOKEN"


def credentials(args: argparse.Namespace, card: AgentCard | None) -> dict[str, str]:
    """The headers that carry `--api-key` / `--token` (or their environment variables): the
    API key in the header the card's apiKey scheme names (X-API-Key if it names none)."""
    headers = {}
    api_key = getattr(args, "api_key", None) or os.environ.get(API_KEY_ENV)
    if api_key:
        schemes = (card.security_schemes or {}).values() if card is not None else ()
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


async def hub_headers(
    http: httpx.AsyncClient, url: str, args: argparse.Namespace
) -> dict[str, str]:
    """The credential headers for the operator's endpoints of the hub at `url` (`/status`,
    `/admin/kill`): as `credentials`, its card read for the API key's header name (X-API-Key
    when the card cannot be read)."""
    try:
        card = await CardCache(http).get(card_url(url))
    except CardFetchError:
        return credentials(args, None)
    return credentials(args, card)


def cli_http_client() -> httpx.AsyncClient:
    """The HTTP client of a command that talks to an agent by URL: on httpx's own transport,
    as a command that sends a request or two need not load aiohttp."""
    return build_http_client(transport=_CommandTransport())


class _CommandTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, with TLS set up on the first `https` request.

    Building a verifying transport loads the certificate store (about 20 ms); a command that
    talks to an `http://` agent sends its requests on a transport with no TLS to set up, and
    an `https` URL, whenever one comes (a card may name one), always goes through a
    transport that verifies certificates.
    """

    def __init__(self) -> None:
        self._plain = httpx.AsyncHTTPTransport(verify=False)  # never used for https
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "https":
            return await self._plain.handle_async_request(request)
        if self._tls is None:
            self._tls = httpx.AsyncHTTPTransport()
        return await self._tls.handle_async_request(request)

    async def aclose(self) -> None:
        await self._plain.aclose()
        if self._tls is not None:
            await self._tls.aclose()


@asynccontextmanager
async def _client(
    url: str, timeouts: Timeouts, args: argparse.Namespace
) -> AsyncIterator[A2AClient]:
    """A client from the agent's card, in the binding `--binding` asks for (the card's first
    one the client speaks otherwise); an agent without a card is spoken to as JSON-RPC 1.0 at
    the URL given (as a bare endpoint). The credentials go with every call but the card's.

    When there is no card and the URL does not answer as an endpoint either, the error says
    that no card was found where one was looked for: that is what the user has to fix.
    """
    async with cli_http_client() as http:
        missing: str | None = None
        try:
            card = await CardCache(http).get(card_url(url))
        except CardFetchError:
            missing = card_url(url)
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
        headers = {**compose_headers(args), **credentials(args, card)}
        client = A2AClient(
            card,
            http=http,
            agent_name=url,
            timeouts=timeouts,
            headers=headers,
            tls=urlsplit(url).scheme == "https",
            binding=args.binding,
        )
        try:
            yield client
        except (RemoteRpcError, InvalidAgentResponseError) as exc:
            if missing is None:
                raise
            raise CardFetchError(
                f"no A2A agent card at {missing}, and {url} does not answer A2A JSON-RPC "
                "either; check the URL (give the agent's base URL, or its card's URL)"
            ) from exc
        finally:
            await client.aclose()


async def print_card(url: str) -> int:
    """Print the agent card served at `url` (a base URL, or the card's own), as JSON."""
    async with cli_http_client() as http:
        card = await CardCache(http).get(card_url(url))
    print(json.dumps(json.loads(card.to_json()), indent=2))
    return OK


def _state(text: str) -> TaskState:
    """A state as the CLI prints it (`input-required`) or as the wire names it."""
    names: dict[str, TaskState] = {
        state_name(state): state for state in TaskState if state is not TaskState.UNSPECIFIED
    }
    wire = {state.value: state for state in names.values()}
    found = names.get(text.lower()) or wire.get(text.upper())
    if found is None:
        raise UsageError(f"unknown --state {text!r} (known: {', '.join(names)})")
    return found


def _print_result(result: Task | Message, *, as_json: bool, answer_with: str) -> int:
    """Print a task or reply; returns the exit status of the task's state."""
    if isinstance(result, Message):
        print(result.to_json().decode() if as_json else describe(result))
        return OK
    status = status_of(result.status.state)
    if as_json:
        print(result.to_json().decode())
        return status
    print(describe(result))
    if status == NEEDS_INPUT:
        print(answer_hint(answer_with, result.id))
    return status


async def send(args: argparse.Namespace, running: Running) -> int:
    """`a2a-hub send --url URL TEXT`: one message to any A2A agent; returns the exit status."""
    if args.url is None:
        raise UsageError("send needs the agent's URL: --url URL (or URL before TEXT)")
    message, metadata = compose_message(args), compose_metadata(args)
    timeouts = Timeouts(connect=10.0, read=None if args.stream else 300.0)
    running.url = args.url
    answer_with = f"a2a-hub send {args.url}"
    try:
        with anyio.fail_after(args.timeout):
            async with _client(args.url, timeouts, args) as client:
                if args.stream:
                    async with client.stream(message, metadata=metadata) as events:
                        return await print_events(
                            events, running, style=stream_style(args), answer_with=answer_with
                        )
                result = await client.send(message, metadata=metadata)
                return _print_result(result, as_json=args.json, answer_with=answer_with)
    except TimeoutError:
        left = f"; task {running.task_id} may still run" if running.task_id else ""
        raise AgentTimeoutError(
            f"no answer from {args.url} within --timeout {args.timeout:g}s{left}"
        ) from None


async def _until_waiting(events: AsyncIterator[StreamResponse]) -> AsyncIterator[StreamResponse]:
    """The events of `tasks subscribe`, ending at a first snapshot that waits for input: the
    task will not move until someone answers it, so the command prints the question and the
    way to answer and exits 3 rather than wait with nothing to show."""
    first = True
    async for event in events:
        yield event
        if first and event.task is not None and event.task.status.state.is_interrupted:
            return
        first = False


async def tasks(args: argparse.Namespace, running: Running) -> int:
    """`a2a-hub tasks list|get|cancel|subscribe`; returns the exit status."""
    if args.action != "list" and not args.task_id:
        raise UsageError(f"tasks {args.action} needs a TASK_ID")
    if args.agent is not None:
        if args.url is not None:
            raise UsageError("--agent and --url name two agents; give one of them")
        if args.binding is not None:
            raise UsageError(
                "--binding is for --url; a partner's binding is its agents.yaml protocol.binding"
            )
        # Imported here: only a partner named in agents.yaml needs the registry and tools.
        from hub.cli.agents import partner_client, registry_options

        running.agent, running.registry_options = args.agent, registry_options(args)
        async with partner_client(args, args.agent) as client:
            return await _task_action(args, client, running)
    if args.url is None:
        # Imported here: with --url, the settings models and YAML are never needed.
        from hub.cli.settings import command_settings

        url = command_settings(args).server.base_url()
    else:
        url = args.url
    running.url, running.url_from_settings = url, args.url is None
    async with _client(url, Timeouts(connect=10.0, read=30.0), args) as client:
        return await _task_action(args, client, running)


async def _task_action(args: argparse.Namespace, client: A2AClient, running: Running) -> int:
    """The `tasks` action on the agent `client` calls; returns the exit status."""
    answer_with = f"a2a-hub call {args.agent}" if args.agent else f"a2a-hub send {running.url}"
    if args.action == "list":
        request = ListTasksRequest(
            context_id=args.context_id,
            status=_state(args.state) if args.state else None,
            page_size=args.page_size,
            page_token=args.page_token,
        )
        page = await client.list_tasks(request)
        if args.json:
            print(page.to_json().decode())
            return OK
        for task in page.tasks:
            print(task_row(task))
        print(f"({len(page.tasks)} of {page.total_size})")
        if page.next_page_token:
            print(f"next page: --page-token {page.next_page_token}")
        return OK
    if args.action == "subscribe":
        return await _follow(args, client, running, answer_with)
    if args.action == "get":
        task = await client.get_task(args.task_id)
        return _print_result(task, as_json=args.json, answer_with=answer_with)
    task = await client.cancel(args.task_id)
    _print_result(task, as_json=args.json, answer_with=answer_with)
    return OK  # the task is canceled, as asked


async def _follow(
    args: argparse.Namespace, client: A2AClient, running: Running, answer_with: str
) -> int:
    """`tasks subscribe`: the task's events until it ends. A task that ended before it could
    be followed (the agent refuses to subscribe to it) is read instead: its artifacts and
    end state are printed, and the exit status is that state's, as if it had been followed."""
    running.task_id = args.task_id
    style = stream_style(args)
    seen = False

    async def noted(events: AsyncIterator[StreamResponse]) -> AsyncIterator[StreamResponse]:
        nonlocal seen
        async for event in events:
            seen = True
            yield event

    try:
        async with client.subscribe(args.task_id) as events:
            return await print_events(
                _until_waiting(noted(events)), running, style=style, answer_with=answer_with
            )
    except RemoteRpcError as exc:
        if seen or exc.code != UnsupportedOperationError.code:
            raise
    task = await client.get_task(args.task_id)
    running.task_id = None
    if style == "json":
        print(StreamResponse(task=task).to_json().decode())
        return status_of(task.status.state)
    return _print_result(task, as_json=False, answer_with=answer_with)
