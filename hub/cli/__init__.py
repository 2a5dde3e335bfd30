"""`a2a-hub`: serve the hub, inspect its card and skills, and talk to any A2A agent."""

from __future__ import annotations

import argparse
import json
import logging
import socket
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import httpx

from hub.client import A2AClient, CardCache, Timeouts, build_http_client, card_url, user_message
from hub.config import Settings, load_settings
from hub.errors import CardFetchError, ClientError, ConfigError, HubError, ProtocolError
from hub.protocol import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    ListTasksRequest,
    Message,
    StreamResponse,
    Task,
    TaskState,
)
from hub.server import create_app
from hub.server.card import CardDocument, build_card
from hub.skills import load_skills
from hub.store import build_store

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="a2a-hub", description=__doc__)
    configured = argparse.ArgumentParser(add_help=False)
    configured.add_argument("--config", help="settings file (default: config/hub.yaml)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the hub", parents=[configured])
    serve.add_argument("--host", help="address to listen on")
    serve.add_argument("--port", type=int, help="port to listen on")
    serve.add_argument("--store", help="SQLite file, or 'memory'")
    serve.add_argument("--agents", help="partner registry (agents.yaml)")
    serve.add_argument(
        "--log-level", choices=["debug", "info", "warning", "error"], help="log verbosity"
    )

    commands.add_parser("card", help="print the hub's agent card", parents=[configured])
    commands.add_parser("skills", help="list the local skills", parents=[configured])

    send = commands.add_parser("send", help="send a message to any A2A agent")
    send.add_argument("url", help="the agent's base URL")
    send.add_argument("text", help="the message text")
    send.add_argument("--stream", action="store_true", help="print events as they arrive")
    send.add_argument("--skill", help="ask for a skill (metadata.skill)")
    send.add_argument("--context-id", help="continue a conversation")
    send.add_argument("--task-id", help="answer a task that asked for input")
    send.add_argument("--json", action="store_true", help="print raw JSON")

    tasks = commands.add_parser(
        "tasks", help="list, get or cancel tasks of a running hub", parents=[configured]
    )
    tasks.add_argument("action", choices=["list", "get", "cancel"])
    tasks.add_argument("task_id", nargs="?", help="the task (get, cancel)")
    tasks.add_argument("--url", help="the hub's URL (default: server.public_url)")
    tasks.add_argument("--context-id", help="list: only this context")
    tasks.add_argument("--state", help="list: only this state, e.g. TASK_STATE_COMPLETED")
    tasks.add_argument("--page-size", type=int, help="list: tasks per page")
    tasks.add_argument("--json", action="store_true", help="print raw JSON")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "host", None):
        overrides["server.host"] = args.host
    if getattr(args, "port", None) is not None:
        overrides["server.port"] = args.port
    if getattr(args, "store", None):
        if args.store == "memory":
            overrides["store.kind"] = "memory"
        else:
            overrides["store.kind"] = "sqlite"
            overrides["store.path"] = args.store
    if getattr(args, "agents", None):
        overrides["agents"] = args.agents
    if getattr(args, "log_level", None):
        overrides["server.log_level"] = args.log_level
    return load_settings(args.config, overrides=overrides)


def _serve(settings: Settings) -> None:
    import uvicorn

    logging.basicConfig(
        level=settings.server.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    store = build_store(settings.store.kind, settings.store.path)
    skills = load_skills(settings.skills)
    # Bind here, so the real port is known (also with --port 0) before the server starts.
    family = socket.AF_INET6 if ":" in settings.server.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.server.host, settings.server.port))
        # Listening now means connections queue from the moment the address is logged.
        sock.listen(2048)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {settings.server.host}:{settings.server.port} ({exc.strerror}); "
            "choose another --port or stop what is using it"
        ) from None
    port = sock.getsockname()[1]
    # With --port 0 the card must advertise the port really bound, not 0.
    settings = settings.model_copy(
        update={"server": settings.server.model_copy(update={"port": port})}
    )
    try:
        app = create_app(settings, store=store, skills=skills)
    except BaseException:
        sock.close()
        raise
    store_name = settings.store.path if settings.store.kind == "sqlite" else "memory"
    # Printed, not logged: the address must show whatever the log level (tests read it too).
    print(
        f"a2a-hub listening on http://{settings.server.host}:{port} (store: {store_name})",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        app,
        log_level=settings.server.log_level,
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run(sockets=[sock])


def _print_card(settings: Settings) -> None:
    skills = load_skills(settings.skills)
    card = build_card(settings, [skill.card for skill in skills.values()])
    print(json.dumps(json.loads(CardDocument.render(card).body), indent=2))


def _print_skills(settings: Settings) -> None:
    for skill in load_skills(settings.skills).values():
        tags = ", ".join(skill.card.tags) or "-"
        default = "  (default)" if skill.skill_id == settings.default_skill else ""
        print(f"{skill.skill_id}{default}\n  {skill.card.description}\n  tags: {tags}")


def _describe(result: Task | Message) -> str:
    if isinstance(result, Message):
        return f"message: {result.text()}"
    lines = [f"task {result.id} (context {result.context_id}): {result.status.state.value}"]
    if result.status.message is not None:
        lines.append(f"  status: {result.status.message.text()}")
    for artifact in result.artifacts or []:
        texts = [part.text for part in artifact.parts if part.text is not None]
        data = [json.dumps(part.data) for part in artifact.parts if part.data is not None]
        lines.append(
            f"  artifact {artifact.name or artifact.artifact_id}: {' '.join(texts + data)}"
        )
    return "\n".join(lines)


def _describe_event(event: StreamResponse) -> str:
    if event.task is not None:
        return f"[task] {event.task.id} {event.task.status.state.value}"
    if event.message is not None:
        return f"[message] {event.message.text()}"
    if event.status_update is not None:
        status = event.status_update.status
        text = f" {status.message.text()}" if status.message else ""
        return f"[status] {status.state.value}{text}"
    assert event.artifact_update is not None
    artifact = event.artifact_update.artifact
    texts = " ".join(part.text for part in artifact.parts if part.text is not None)
    return f"[artifact] {artifact.name or artifact.artifact_id}: {texts}"


async def _client(url: str, http: httpx.AsyncClient, timeouts: Timeouts) -> A2AClient:
    """A client from the agent's card; an agent without a card is spoken to as JSON-RPC 1.0 at
    the URL given (as a bare endpoint)."""
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
    return A2AClient(card, http=http, agent_name=url, timeouts=timeouts)


async def _send(args: argparse.Namespace) -> None:
    message = user_message(args.text, context_id=args.context_id, task_id=args.task_id)
    metadata = {"skill": args.skill} if args.skill else None
    timeouts = Timeouts(connect=10.0, read=None if args.stream else 300.0)
    async with build_http_client() as http:
        client = await _client(args.url, http, timeouts)
        if args.stream:
            async with client.stream(message, metadata=metadata) as events:
                async for event in events:
                    print(event.to_json().decode() if args.json else _describe_event(event))
            return
        result = await client.send(message, metadata=metadata)
        print(result.to_json().decode() if args.json else _describe(result))


async def _tasks(args: argparse.Namespace, settings: Settings) -> None:
    url = args.url or settings.server.base_url()
    async with build_http_client() as http:
        client = await _client(url, http, Timeouts(connect=10.0, read=30.0))
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
        print(task.to_json().decode() if args.json else _describe(task))


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `a2a-hub` command."""
    args = _parser().parse_args(argv)
    try:
        settings = _settings(args) if args.command != "send" else Settings()
        if args.command == "serve":
            _serve(settings)
        elif args.command == "card":
            _print_card(settings)
        elif args.command == "skills":
            _print_skills(settings)
        elif args.command == "send":
            anyio.run(_send, args)
        else:
            anyio.run(_tasks, args, settings)
    except ConfigError as exc:
        print(f"a2a-hub: configuration error:\n{exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except (ClientError, ProtocolError) as exc:
        print(f"a2a-hub: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except HubError as exc:
        print(f"a2a-hub: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
