"""The `a2a-hub` command line: its commands, their options and the checks on their values.

Every value the parser can check is checked here, so a wrong one is an argparse-style error
against the command's own usage (exit 2) before anything is read or sent.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from hub.cli.arguments import (
    HUB_URL_HELP,
    PAGE_SIZE,
    PORT,
    POSITIVE,
    SECONDS,
    agent_url,
    header,
    key_value,
    url_word,
)
from hub.protocol.requests import MAX_PAGE_SIZE
from hub.swarm.strategy import STRATEGIES

__all__ = ["build_parser", "distribution_version"]

DISTRIBUTION = "a2a-hub"

DESCRIPTION = """\
Serve the hub, inspect its card, skills and partners, and talk to any A2A agent.

exit status: 0 the task completed (or the command succeeded); 1 the task failed, was canceled
or rejected, or an agent failed; 2 a usage or configuration error; 3 the task waits for input;
130 interrupted."""

SERVE_EPILOG = """\
environment variables (a flag wins over the variable, the variable over the file):
  HUB_CONFIG       the settings file (default: config/hub.yaml; built-in defaults if absent)
  HUB_HOST, HUB_PORT, HUB_PUBLIC_URL, HUB_LOG_LEVEL
  HUB_STORE        the SQLite file; HUB_STORE_KIND  sqlite, postgres or memory
  HUB_STORE__DSN   the PostgreSQL URI (run `a2a-hub db migrate` before the first serve)
  HUB_AGENTS       the partner registry (agents.yaml)
  HUB_SECTION__KEY any other setting, e.g. HUB_LIMITS__MAX_BODY=2000000
  ${NAME} in a settings file is replaced by the environment variable NAME."""


def distribution_version() -> str:
    """`a2a-hub 0.1.0`: the distribution's name and version, so a user can tell this `hub`
    package from another one of the same import name."""
    # Imported here: reading the installed metadata costs more than `--help` itself.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{DISTRIBUTION} {version(DISTRIBUTION)}"
    except PackageNotFoundError:
        return f"{DISTRIBUTION} (not installed: run from a source tree)"


class _VersionAction(argparse.Action):
    """`--version`: the version is read from the installed metadata when it is asked for,
    not whenever the parser is built."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        # As argparse's own version action: a reader that went away (`| head -0`) is no error.
        with contextlib.suppress(OSError):
            sys.stdout.write(distribution_version() + "\n")
        parser.exit()


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser: an unknown option is reported against this command's usage
    (not the top-level one), with the closest known option when there is one.

    A command whose first positional may be left out (`send [URL] TEXT`, the URL given with
    --url instead) reads its options first and its positionals after (`intermixed`): read
    in order, `send URL --stream TEXT` would give URL to TEXT, as argparse fills an optional
    positional as soon as it meets one word.
    """

    intermixed = False
    _reading_parts = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._reading_parts:  # one of the two passes of an intermixed read
            return super().parse_known_args(args, namespace)
        if self.intermixed:
            self._reading_parts = True
            try:
                parsed, extras = super().parse_known_intermixed_args(args, namespace)
            finally:
                self._reading_parts = False
        else:
            parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.unknown(extras)
        return parsed, extras

    def unknown(self, extras: list[str]) -> NoReturn:
        known = [option for action in self._actions for option in action.option_strings]
        close = difflib.get_close_matches(extras[0].split("=", 1)[0], known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and each command's own parser by name."""
    parser = argparse.ArgumentParser(
        prog="a2a-hub", description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--version", action=_VersionAction, help="show program's version number and exit"
    )
    configured = argparse.ArgumentParser(add_help=False)
    configured.add_argument("--config", help="settings file (default: config/hub.yaml)")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=CommandParser
    )
    by_name: dict[str, argparse.ArgumentParser] = {}

    def command(
        name: str, run: str, summary: str, description: str, **kwargs: Any
    ) -> CommandParser:
        """A command `name`, run by the function `run` names ("module:function", imported
        only when the command runs): `(args, running) -> exit status`, sync or async."""
        made: CommandParser = commands.add_parser(
            name,
            help=summary,
            description=description,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kwargs,
        )
        made.set_defaults(run=run)
        by_name[name] = made
        return made

    serve = command(
        "serve",
        "hub.cli.serve:serve",
        "run the hub",
        "Run the hub on uvicorn until Ctrl-C. Without --config and with no config/hub.yaml in "
        "this directory it serves the built-in defaults (127.0.0.1:8000, the echo skill).",
        parents=[configured],
        epilog=SERVE_EPILOG,
    )
    serve.add_argument("--host", help="address to listen on")
    serve.add_argument("--port", type=PORT, help="port to listen on (0 picks a free one)")
    serve.add_argument("--store", help="SQLite file, or 'memory'")
    serve.add_argument("--agents", help="partner registry (agents.yaml)")
    serve.add_argument(
        "--log-level", choices=["debug", "info", "warning", "error"], help="log verbosity"
    )

    mcp = command(
        "mcp",
        "hub.cli.mcp:serve_mcp",
        "serve the hub's tools over MCP on stdio",
        "Speak MCP on stdin/stdout (for clients that launch their servers, such as Claude\n"
        "Desktop): every partner of agents.yaml and every local skill as a tool, wherever it\n"
        "is started (the delegate and swarm skills are served even when the settings leave\n"
        "them out).\n\n"
        "Tasks are kept in memory unless --store names a file: the settings' SQLite file is\n"
        "`a2a-hub serve`'s, and one SQLite store serves one process. A PostgreSQL store is\n"
        "used as the settings say. Logs go to stderr, warnings only unless --log-level says\n"
        "otherwise. See docs/mcp.md.",
        parents=[configured],
    )
    mcp.add_argument("--agents", help="partner registry (agents.yaml)")
    mcp.add_argument(
        "--store",
        help="SQLite file of this process's own, or 'memory' (the default unless the settings "
        "name PostgreSQL)",
    )
    mcp.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        help="log verbosity on stderr (default: warning)",
    )

    database = command(
        "db",
        "hub.cli.db:db",
        "check or migrate the task store's schema",
        "check: say whether the task store's schema is the one this a2a-hub needs (exit 1 if "
        "not). migrate: bring it up to date; run it once before starting hubs on a new or "
        "upgraded PostgreSQL database (serve refuses one whose schema is not current).",
        parents=[configured],
    )
    database.add_argument("action", choices=["check", "migrate"])

    card = command(
        "card",
        "hub.cli.local:card",
        "print the agent card these settings would serve, or a running hub's",
        "Print, as JSON, the agent card the hub would serve with these settings (read "
        "without a server: a running hub is not asked), or with --url the card the hub or "
        "agent running at URL serves.",
        parents=[configured],
    )
    card.add_argument(
        "--url", type=agent_url, help="read the card the hub (or any A2A agent) at URL serves"
    )
    skills = command(
        "skills",
        "hub.cli.local:skills",
        "list the local skills",
        "List the skills these settings load, marking the default one.",
        parents=[configured],
    )
    skills.add_argument("--json", action="store_true", help="print JSON")

    # Options only: positionals of a parent would come before the command's own.
    message = argparse.ArgumentParser(add_help=False)
    message.add_argument("--stream", action="store_true", help="print events as they arrive")
    message.add_argument("--skill", help="ask for one of the agent's skills (metadata.skill)")
    message.add_argument("--context-id", help="continue a conversation")
    message.add_argument("--task-id", help="answer a task that asked for input")
    message.add_argument("--json", action="store_true", help="print JSON")
    message.add_argument(
        "--raw", action="store_true", help="--stream: one line per event, not the text"
    )

    # Secrets are read from the environment by default: a flag's value shows in `ps`.
    credential = argparse.ArgumentParser(add_help=False)
    credential.add_argument(
        "--api-key", help="send this API key (default: $A2A_HUB_API_KEY; never printed)"
    )
    credential.add_argument(
        "--token", help="send this bearer token (default: $A2A_HUB_TOKEN; never printed)"
    )

    # An agent whose card offers several bindings is spoken to in the first one the client
    # speaks; --binding asks for another (a hub's gRPC door, say).
    interface = argparse.ArgumentParser(add_help=False)
    interface.add_argument(
        "--binding",
        choices=("jsonrpc", "http+json", "grpc"),
        help="speak this binding of the agent's card (default: the first one it lists)",
    )

    send = command(
        "send",
        "hub.cli.direct:send",
        "send a message to any A2A agent",
        "Send TEXT to the A2A agent at --url URL (its card is read from "
        "URL/.well-known/agent-card.json) and print the task or reply. `send URL TEXT` is "
        "the same as `send --url URL TEXT`.",
        parents=[message, credential, interface],
    )
    send.intermixed = True
    send.add_argument(
        "--url", type=agent_url, help="the agent's base URL, e.g. http://127.0.0.1:8000"
    )
    url_word(send, "the same as --url, given before TEXT")
    send.add_argument("text", help="the message text")
    send.add_argument(
        "--metadata",
        type=key_value,
        action="append",
        metavar="KEY=VALUE",
        help="request metadata (repeat; a VALUE that reads as JSON is sent as JSON)",
    )
    send.add_argument("--agent", help="the partner the hub's delegate skill hands over to")
    send.add_argument("--strategy", choices=STRATEGIES, help="the hub's swarm skill's strategy")
    send.add_argument("--data", metavar="JSON|@FILE", help="a data part: JSON, or @file of JSON")
    send.add_argument("--file", action="append", metavar="PATH", help="a file part (repeat)")
    send.add_argument(
        "--header",
        type=header,
        action="append",
        metavar="'NAME: VALUE'",
        help="an extra HTTP header on every request (repeat)",
    )
    send.add_argument("--timeout", type=SECONDS, help="give up after this many seconds (exit 1)")

    tasks = command(
        "tasks",
        "hub.cli.direct:tasks",
        "list, get, cancel or follow tasks of a running hub",
        "Read, cancel or follow the tasks of a running hub, of any A2A agent (--url), or of a "
        "partner of agents.yaml (--agent NAME). Following a task that has ended prints it.",
        parents=[configured, credential, interface],
    )
    tasks.add_argument("action", choices=["list", "get", "cancel", "subscribe"])
    tasks.add_argument("task_id", nargs="?", help="the task (get, cancel, subscribe)")
    tasks.add_argument("--url", type=agent_url, help=f"{HUB_URL_HELP}, or any A2A agent's")
    tasks.add_argument(
        "--agent",
        metavar="NAME",
        help="a task of partner NAME of agents.yaml, reached as `call` reaches it (with its "
        "credentials), instead of the hub's",
    )
    tasks.add_argument(
        "--agents", help="--agent: the partner registry (default: the file named in the settings)"
    )
    tasks.add_argument("--context-id", help="list: only this context")
    tasks.add_argument("--state", help="list: only this state, e.g. completed, input-required")
    tasks.add_argument("--page-token", help="list: the page after the one that printed it")
    tasks.add_argument(
        "--page-size", type=PAGE_SIZE, help=f"list: tasks per page (1 to {MAX_PAGE_SIZE})"
    )
    tasks.add_argument("--json", action="store_true", help="print raw JSON")
    tasks.add_argument(
        "--raw", action="store_true", help="subscribe: one line per event, not the text"
    )

    registry = argparse.ArgumentParser(add_help=False, parents=[configured])
    registry.add_argument(
        "--agents", help="partner registry (default: the file named in the settings)"
    )
    partners = command(
        "agents",
        "hub.cli.agents:agents",
        "list, show, check or refresh partner agents",
        "The partner agents of agents.yaml: list them, show or refresh a card, check health.",
        parents=[registry, credential],
    )
    partners.add_argument("action", choices=["list", "show", "check", "refresh"])
    partners.add_argument("names", nargs="*", metavar="NAME", help="partner name(s)")
    partners.add_argument("--json", action="store_true", help="print JSON")
    partners.add_argument(
        "--url",
        "--hub",
        dest="hub",
        type=agent_url,
        metavar="URL",
        help="check: the breakers and figures of the hub running at URL, as it sees its "
        "partners (--hub is the same)",
    )

    status = command(
        "status",
        "hub.cli.status:status",
        "show a running hub's partners, breakers, tasks and load",
        "Read a running hub's GET /status: its load, live tasks and open streams, and each "
        "partner's breaker, recent latency and error rate. `status URL` is the same as "
        "`status --url URL`.",
        parents=[configured, credential],
    )
    status.intermixed = True
    status.add_argument("--url", type=agent_url, help=HUB_URL_HELP)
    url_word(status, "the same as --url")
    status.add_argument("--json", action="store_true", help="print JSON")

    killing = command(
        "kill",
        "hub.cli.kill:kill",
        "cancel every task of a context or a caller on a running hub",
        "The kill switch of a running hub (POST /admin/kill, an operator's credential with "
        "auth on): every task of the context or the caller that is not terminal is canceled "
        "at once, with the partner tasks they started (and, for a caller, the partner tasks it "
        "started through the gateway); the hub writes an audit line naming who did it. "
        "`kill URL` is the same as `kill --url URL`.",
        parents=[configured, credential],
    )
    killing.intermixed = True
    target = killing.add_mutually_exclusive_group(required=True)
    target.add_argument("--context", metavar="ID", help="the context id whose tasks end")
    target.add_argument("--caller", metavar="NAME", help="the credential whose tasks end")
    killing.add_argument("--url", type=agent_url, help=HUB_URL_HELP)
    url_word(killing, "the same as --url")
    killing.add_argument("--json", action="store_true", help="print JSON")

    call = command(
        "call",
        "hub.cli.agents:call",
        "call a partner agent by name",
        "Send TEXT to the partner NAME of agents.yaml and print its answer.",
        parents=[registry, message],
    )
    call.add_argument("name", help="the partner's name in agents.yaml")
    call.add_argument("text", help="the message text")
    call.add_argument("--data", metavar="JSON|@FILE", help="a data part: JSON, or @file of JSON")

    route = command(
        "route",
        "hub.cli.agents:route",
        "rank partners and local skills for a request (a dry run)",
        "Rank the partners and local skills that could take TEXT, with the reasons; nothing "
        "is sent but card reads.",
        parents=[registry],
    )
    route.add_argument("text", help="the request's text")
    route.add_argument("--tag", action="append", help="a tag the candidate must have (repeat)")
    route.add_argument("--agent", help="only this partner")
    route.add_argument("--skill", help="a skill id the candidate must offer")
    route.add_argument("--json", action="store_true", help="print JSON")

    swarm = command(
        "swarm",
        "hub.cli.agents:swarm",
        "send a message to several partners at once",
        "Send TEXT to several partners at once and combine their answers with a strategy.",
        parents=[registry],
    )
    swarm.add_argument("text", help="the message text")
    swarm.add_argument(
        "--strategy",
        default="broadcast",
        choices=STRATEGIES,
        help="how the partners' answers are combined (default: broadcast, every answer): "
        "race takes the first, vote the one --quorum agree on (default: a majority), best_of "
        "the one --judge picks, map splits --items across the partners, chain gives each "
        "partner (in --agent order) the answer before",
    )
    swarm.add_argument("--tag", action="append", help="use partners with this tag (repeat)")
    swarm.add_argument("--agent", action="append", help="use this partner (repeat; in order)")
    swarm.add_argument("--skill", help="a skill id the partners must offer")
    swarm.add_argument("--limit", type=POSITIVE, help="at most this many partners")
    swarm.add_argument("--quorum", type=POSITIVE, help="vote: how many must agree")
    swarm.add_argument(
        "--judge",
        help="best_of: the partner that picks the best answer, as a2a_NAME (the name the swarm "
        "skill's judge metadata takes) or NAME",
    )
    swarm.add_argument("--items", metavar="JSON|@FILE", help="map: a JSON list of items")
    swarm.add_argument("--concurrency", type=POSITIVE, default=8, help="branches at once")
    swarm.add_argument("--branch-deadline", type=SECONDS, help="seconds per branch")
    swarm.add_argument("--deadline", type=SECONDS, help="seconds for the whole swarm")
    swarm.add_argument("--json", action="store_true", help="print JSON")
    return parser, by_name
