"""`a2a-hub`: serve the hub, inspect its card, skills and partners, and talk to any A2A agent."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import anyio

from hub.cli.agents import agents, call, route, swarm
from hub.cli.direct import send, tasks
from hub.cli.serve import serve
from hub.config import Settings, load_settings
from hub.errors import ClientError, ConfigError, HubError, ProtocolError
from hub.server.card import CardDocument, build_card
from hub.skills import load_skills
from hub.swarm import STRATEGIES

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

    # Options only: positionals of a parent would come before the command's own.
    message = argparse.ArgumentParser(add_help=False)
    message.add_argument("--stream", action="store_true", help="print events as they arrive")
    message.add_argument("--skill", help="ask for one of the agent's skills (metadata.skill)")
    message.add_argument("--context-id", help="continue a conversation")
    message.add_argument("--task-id", help="answer a task that asked for input")
    message.add_argument("--json", action="store_true", help="print JSON")

    # Secrets are read from the environment by default: a flag's value shows in `ps`.
    credential = argparse.ArgumentParser(add_help=False)
    credential.add_argument(
        "--api-key", help="send this API key (default: $A2A_HUB_API_KEY; never printed)"
    )
    credential.add_argument(
        "--token", help="send this bearer token (default: $A2A_HUB_TOKEN; never printed)"
    )

    send = commands.add_parser(
        "send", help="send a message to any A2A agent", parents=[message, credential]
    )
    send.add_argument("url", help="the agent's base URL")
    send.add_argument("text", help="the message text")

    tasks = commands.add_parser(
        "tasks",
        help="list, get or cancel tasks of a running hub",
        parents=[configured, credential],
    )
    tasks.add_argument("action", choices=["list", "get", "cancel"])
    tasks.add_argument("task_id", nargs="?", help="the task (get, cancel)")
    tasks.add_argument("--url", help="the hub's URL (default: server.public_url)")
    tasks.add_argument("--context-id", help="list: only this context")
    tasks.add_argument("--state", help="list: only this state, e.g. TASK_STATE_COMPLETED")
    tasks.add_argument("--page-size", type=int, help="list: tasks per page")
    tasks.add_argument("--json", action="store_true", help="print raw JSON")

    registry = argparse.ArgumentParser(add_help=False, parents=[configured])
    registry.add_argument(
        "--agents", help="partner registry (default: the file named in the settings)"
    )
    partners = commands.add_parser(
        "agents", help="list, show, check or refresh partner agents", parents=[registry]
    )
    partners.add_argument("action", choices=["list", "show", "check", "refresh"])
    partners.add_argument("names", nargs="*", metavar="NAME", help="partner name(s)")
    partners.add_argument("--json", action="store_true", help="print JSON")

    call = commands.add_parser(
        "call", help="call a partner agent by name", parents=[registry, message]
    )
    call.add_argument("name", help="the partner's name in agents.yaml")
    call.add_argument("text", help="the message text")
    call.add_argument("--data", help="JSON sent as a data part")

    route = commands.add_parser(
        "route", help="rank partners and local skills for a request (a dry run)", parents=[registry]
    )
    route.add_argument("text", help="the request's text")
    route.add_argument("--tag", action="append", help="a tag the candidate must have (repeat)")
    route.add_argument("--agent", help="only this partner")
    route.add_argument("--skill", help="a skill id the candidate must offer")
    route.add_argument("--json", action="store_true", help="print JSON")

    swarm = commands.add_parser(
        "swarm", help="send a message to several partners at once", parents=[registry]
    )
    swarm.add_argument("text", help="the message text")
    swarm.add_argument("--strategy", default="broadcast", choices=STRATEGIES)
    swarm.add_argument("--tag", action="append", help="use partners with this tag (repeat)")
    swarm.add_argument("--agent", action="append", help="use this partner (repeat; in order)")
    swarm.add_argument("--skill", help="a skill id the partners must offer")
    swarm.add_argument("--limit", type=int, help="at most this many partners")
    swarm.add_argument("--quorum", type=int, help="vote: how many must agree")
    swarm.add_argument("--judge", help="best_of: the partner that picks the best answer")
    swarm.add_argument("--items", help="map: a JSON list of items")
    swarm.add_argument("--concurrency", type=int, default=8, help="branches at once")
    swarm.add_argument("--branch-deadline", type=float, help="seconds per branch")
    swarm.add_argument("--deadline", type=float, help="seconds for the whole swarm")
    swarm.add_argument("--json", action="store_true", help="print JSON")
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


def _print_card(settings: Settings) -> None:
    skills = load_skills(settings.skills)
    card = build_card(settings, [skill.card for skill in skills.values()])
    print(json.dumps(json.loads(CardDocument.render(card).hybrid.body), indent=2))


def _print_skills(settings: Settings) -> None:
    for skill in load_skills(settings.skills).values():
        tags = ", ".join(skill.card.tags) or "-"
        default = "  (default)" if skill.skill_id == settings.default_skill else ""
        print(f"{skill.skill_id}{default}\n  {skill.card.description}\n  tags: {tags}")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `a2a-hub` command."""
    args = _parser().parse_args(argv)
    status = 0
    try:
        settings = _settings(args) if args.command != "send" else Settings()
        if args.command == "serve":
            serve(settings)
        elif args.command == "card":
            _print_card(settings)
        elif args.command == "skills":
            _print_skills(settings)
        elif args.command == "send":
            anyio.run(send, args)
        elif args.command == "tasks":
            anyio.run(tasks, args, settings)
        elif args.command == "agents":
            status = anyio.run(agents, args, settings)
        elif args.command == "route":
            status = anyio.run(route, args, settings)
        elif args.command == "swarm":
            status = anyio.run(swarm, args, settings)
        else:
            status = anyio.run(call, args, settings)
    except ConfigError as exc:
        print(f"a2a-hub: configuration error:\n{exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except (ClientError, ProtocolError, HubError) as exc:
        print(f"a2a-hub: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    if status:
        raise SystemExit(status)
