"""`a2a-hub`: serve the hub, inspect its card, skills and partners, and talk to any A2A agent.

Every command ends through `main`, which turns what happened into one exit status (see
`hub.cli.outcome`) and one line on stderr: no traceback reaches the user, whether the agent
failed, the settings are wrong, Ctrl-C was pressed or the output was closed early.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
from collections.abc import Sequence

from hub.cli.outcome import (
    CLOSED_PIPE,
    FAILED,
    INTERRUPTED,
    USAGE,
    Running,
    UsageError,
)
from hub.cli.parser import build_parser
from hub.errors import (
    AgentUnreachableError,
    ClientError,
    ConfigError,
    HubError,
    ProtocolError,
    RemoteRpcError,
    UnauthenticatedError,
    UnknownAgentError,
)

__all__ = ["main"]

DEBUG_ENV = "A2A_HUB_DEBUG"

_CREDENTIAL_HINT = "; pass --api-key (or set A2A_HUB_API_KEY) or --token (or set A2A_HUB_TOKEN)"


def _run(args: argparse.Namespace, running: Running) -> int:
    """Import the command's module only now (see `build_parser`): `--help` and the client
    commands do not load the server, and the server does not load the client commands."""
    module, _, name = args.run.partition(":")
    command = getattr(importlib.import_module(module), name)
    if inspect.iscoroutinefunction(command):
        import anyio

        status: int = anyio.run(command, args, running)
        return status
    status = command(args, running)
    return status


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
    if running.url and _unreachable(exc) and running.url_from_settings:
        return (
            f"cannot reach {running.url}, the hub these settings describe (server.public_url, "
            "or server.host and server.port); check that it is running, or pass --url"
        )
    if running.url and _unreachable(exc):
        return (
            f"cannot reach {running.url}; check that the agent is running and that the URL is right"
        )
    # The person at the terminal called this agent: its own words about its trouble help
    # them ("retry shortly"), where a hub's caller gets only the kind of fault.
    message = exc.told if isinstance(exc, RemoteRpcError) else str(exc)
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
    running = Running(what="`a2a-hub`")
    # httpx imports its own command line (rich, click, pygments: a tenth of a second) whenever
    # those are installed, and Litestar installs them; this process never runs httpx's command
    # line, so its module is marked absent (None in sys.modules: the import system's own way
    # to say so, which typeshed's type for sys.modules leaves out) and httpx uses its stub.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    # grpc's core writes its INFO lines to stderr (a failed TLS handshake, before the hub's
    # own message says the agent cannot be reached); its documented default is ERROR, which
    # is set here unless the user set another, before anything imports grpc.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    try:
        # Inside the try: Ctrl-C while the command line is read is one line too.
        parser, commands = build_parser()
        args = parser.parse_args(argv)
        running.what = f"`a2a-hub {args.command}`"
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
    except UnknownAgentError as exc:
        # A name the command line gave that agents.yaml does not know: nothing was sent.
        print(f"a2a-hub: {exc}", file=sys.stderr)
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
