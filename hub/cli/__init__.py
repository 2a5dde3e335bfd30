"""`a2a-hub`: serve the hub, inspect its card, skills and partners, and talk to any A2A agent.

Every command ends through `main`, which turns what happened into one exit status (see
`hub.cli.outcome`) and one line on stderr: no traceback reaches the user, whether the agent
failed, the settings are wrong, Ctrl-C was pressed or the output was closed early.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio

from hub.cli.agents import agents, call, route, swarm
from hub.cli.direct import send, tasks
from hub.cli.outcome import (
    CLOSED_PIPE,
    FAILED,
    INTERRUPTED,
    OK,
    USAGE,
    Running,
    UsageError,
)
from hub.cli.parser import build_parser
from hub.cli.serve import serve
from hub.config import Settings, load_settings, settle_default_skill
from hub.errors import (
    AgentUnreachableError,
    ClientError,
    ConfigError,
    HubError,
    ProtocolError,
    RemoteRpcError,
    UnauthenticatedError,
)
from hub.runtime import configured_skills
from hub.server.card import CardDocument, build_card

__all__ = ["main"]

DEBUG_ENV = "A2A_HUB_DEBUG"

_CREDENTIAL_HINT = "; pass --api-key (or set A2A_HUB_API_KEY) or --token (or set A2A_HUB_TOKEN)"


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


def _print_card(settings: Settings) -> int:
    skills = configured_skills(settings)
    settings = settle_default_skill(settings, list(skills))
    card = build_card(settings, [skill.card for skill in skills.values()])
    print(json.dumps(json.loads(CardDocument.render(card).hybrid.body), indent=2))
    return OK


def _print_skills(settings: Settings, *, as_json: bool) -> int:
    skills = configured_skills(settings)
    settings = settle_default_skill(settings, list(skills))
    loaded = skills.values()
    if as_json:
        listed = [
            {
                "id": skill.skill_id,
                "name": skill.card.name,
                "description": skill.card.description,
                "tags": list(skill.card.tags),
                "default": skill.skill_id == settings.default_skill,
            }
            for skill in loaded
        ]
        print(json.dumps(listed, indent=2))
        return OK
    for skill in loaded:
        tags = ", ".join(skill.card.tags) or "-"
        default = "  (default)" if skill.skill_id == settings.default_skill else ""
        print(f"{skill.skill_id}{default}\n  {skill.card.description}\n  tags: {tags}")
    return OK


def _run(args: argparse.Namespace, running: Running) -> int:
    settings = _settings(args) if args.command != "send" else Settings()
    if args.command == "serve":
        serve(settings, explicit=args.config is not None or "HUB_CONFIG" in os.environ)
        return OK
    if args.command == "db":
        from hub.cli.db import db

        return anyio.run(db, args, settings)
    if args.command == "mcp":
        from hub.cli.mcp import serve_mcp

        return serve_mcp(settings)
    if args.command == "card":
        return _print_card(settings)
    if args.command == "skills":
        return _print_skills(settings, as_json=args.json)
    if args.command == "send":
        return anyio.run(send, args, running)
    if args.command == "tasks":
        return anyio.run(tasks, args, settings, running)
    if args.command == "agents":
        return anyio.run(agents, args, settings, running)
    if args.command == "status":
        from hub.cli.status import status

        return anyio.run(status, args, settings, running)
    if args.command == "route":
        return anyio.run(route, args, settings)
    if args.command == "swarm":
        return anyio.run(swarm, args, settings, running)
    return anyio.run(call, args, settings, running)


def _leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception of a task group's group: the one that stopped the command."""
    first = group.exceptions[0]
    return _leaf(first) if isinstance(first, BaseExceptionGroup) else first


def _run_unwrapped(args: argparse.Namespace, running: Running) -> int:
    try:
        return _run(args, running)
    except BaseExceptionGroup as group:
        raise _leaf(group) from None


def _unreachable(exc: BaseException | None) -> bool:
    """No connection could be made: the error itself, or the cause of a card read's error."""
    while exc is not None:
        if isinstance(exc, AgentUnreachableError):
            return True
        exc = exc.__cause__
    return False


def explain(exc: HubError, running: Running) -> str:
    """What went wrong and what to do about it, in one message without transport internals."""
    if running.agent and _unreachable(exc):
        # The message names the partner; its URL is in agents.yaml, where a fix would go.
        return f"{exc}; check that it is running and that its url in agents.yaml is right"
    if running.url and _unreachable(exc):
        return (
            f"cannot reach {running.url}; check that the agent is running and that the URL is right"
        )
    message = str(exc)
    unauthenticated = isinstance(exc, UnauthenticatedError) or (
        isinstance(exc, RemoteRpcError) and exc.code in (401, UnauthenticatedError.code)
    )
    if unauthenticated and "--api-key" not in message:
        message += _CREDENTIAL_HINT
    return message


def _closed_pipe() -> int:
    """The reader went away (`a2a-hub ... | head`): stop quietly. Whatever is still buffered
    goes to /dev/null, so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return CLOSED_PIPE


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `a2a-hub` command."""
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    running = Running(what=f"`a2a-hub {args.command}`")
    try:
        status = _run_unwrapped(args, running)
        sys.stdout.flush()
    except KeyboardInterrupt:
        print(running.interrupted(), file=sys.stderr)
        status = INTERRUPTED
    except BrokenPipeError:
        status = _closed_pipe()
    except UsageError as exc:
        commands[args.command].error(str(exc))
    except ConfigError as exc:
        print(f"a2a-hub: configuration error:\n{exc}", file=sys.stderr)
        status = USAGE
    except (ClientError, ProtocolError, HubError) as exc:
        print(f"a2a-hub: {explain(exc, running)}", file=sys.stderr)
        status = FAILED
    except Exception as exc:
        # A bug of ours: one line for the user, the traceback for whoever reports it.
        if os.environ.get(DEBUG_ENV):
            raise
        print(
            f"a2a-hub: internal error ({type(exc).__name__}: {exc}); set {DEBUG_ENV}=1 to see "
            "where, and please report it",
            file=sys.stderr,
        )
        status = FAILED
    raise SystemExit(status)
