"""A real a2a-sdk 1.3 partner agent, run as its own process for the end-to-end tests.

    python -m tests.e2e.sdk_partner --behaviour slow --delay 30 --port 0 [--protocol 0.3]

The socket is bound first (`--port 0` takes a free one), then the address is printed on
stderr, `sdk partner listening on http://127.0.0.1:PORT`, so a test reads it instead of
guessing a port.

Behaviours (every one answers with one artifact named `answer`):

- `fast`: answers `--answer` (default "yes") at once;
- `dissent`: answers `--answer` (default "no") at once, to disagree with `fast` in a vote;
- `echo`: answers the message's text;
- `upper`: answers the message's text uppercased, followed by `--suffix`, so a chain or a
  map shows which partner did what and in which order;
- `slow`: works (a WORKING status "working") for `--delay` seconds, then answers `--answer`;
  a cancel ends the task `TASK_STATE_CANCELED` at once;
- `failing`: works, then fails the task with the status message "scripted failure";
- `ask`: asks "which colour?" (input-required), and answers the reply, `you said: <reply>`,
  on the same task;
- `steps`: reports three WORKING statuses, "step 1" to "step 3", then answers `--answer`.

The SDK's `InMemoryTaskStore` keeps every task, so a test can read their final states
afterwards with the partner's own GetTask / ListTasks (`tasks/get` on a 0.3 partner).
"""

from __future__ import annotations

import argparse
import socket
import sys

import anyio
import uvicorn
from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
)
from starlette.applications import Starlette

from tests.sdk_agents import open_task

BEHAVIOURS = ("fast", "dissent", "echo", "upper", "slow", "failing", "ask", "steps")
DEFAULT_ANSWERS = {"fast": "yes", "dissent": "no", "slow": "late", "steps": "done"}
QUESTION = "which colour?"
FAILURE = "scripted failure"


class ScriptedExecutor(AgentExecutor):
    """Does what `behaviour` says (see the module docstring) for every message."""

    def __init__(self, behaviour: str, *, answer: str, suffix: str, delay: float) -> None:
        self.behaviour = behaviour
        self.answer = answer
        self.suffix = suffix
        self.delay = delay

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater, text = await open_task(context, event_queue)
        if self.behaviour == "ask" and context.current_task is None:
            await updater.requires_input(updater.new_agent_message([new_text_part(QUESTION)]))
            return
        if self.behaviour == "steps":
            for step in (1, 2, 3):
                await updater.start_work(updater.new_agent_message([new_text_part(f"step {step}")]))
        if self.behaviour in ("slow", "failing"):
            await updater.start_work(updater.new_agent_message([new_text_part("working")]))
        if self.behaviour == "slow":
            # The SDK cancels this coroutine when the task is canceled.
            await anyio.sleep(self.delay)
        if self.behaviour == "failing":
            await updater.failed(updater.new_agent_message([new_text_part(FAILURE)]))
            return
        await updater.add_artifact(
            [new_text_part(self._answer(text))], name="answer", last_chunk=True
        )
        await updater.complete()

    def _answer(self, text: str) -> str:
        if self.behaviour == "echo":
            return text
        if self.behaviour == "ask":
            return f"you said: {text}"
        if self.behaviour == "upper":
            return text.upper() + self.suffix
        return self.answer

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def build_app(
    url: str,
    *,
    name: str,
    behaviour: str,
    protocol: str = "1.0",
    answer: str | None = None,
    suffix: str = "",
    delay: float = 30.0,
) -> Starlette:
    """The partner served at `url`: its card and JSON-RPC at `/` (the 0.3 compat layer too
    when `protocol` is "0.3", and only a 0.3 interface on the card)."""
    card = AgentCard(
        name=name,
        description=f"a2a-sdk partner '{name}' for the end-to-end tests",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url + "/", protocol_binding="JSONRPC", protocol_version=protocol)
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id=behaviour, name=behaviour, description=f"{behaviour} answers", tags=["e2e"]
            )
        ],
    )
    executor = ScriptedExecutor(
        behaviour,
        answer=answer if answer is not None else DEFAULT_ANSWERS.get(behaviour, ""),
        suffix=suffix,
        delay=delay,
    )
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=protocol == "0.3"),
    ]
    return Starlette(routes=routes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.sdk_partner")
    parser.add_argument("--behaviour", choices=BEHAVIOURS, required=True)
    parser.add_argument("--name", default=None, help="the card's name (default: the behaviour)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--protocol", choices=("1.0", "0.3"), default="1.0")
    parser.add_argument("--answer", default=None, help="what fast, dissent and slow answer")
    parser.add_argument("--suffix", default="", help="what upper adds after the text")
    parser.add_argument("--delay", type=float, default=30.0, help="seconds slow works")
    args = parser.parse_args(argv)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = build_app(
        url,
        name=args.name or args.behaviour,
        behaviour=args.behaviour,
        protocol=args.protocol,
        answer=args.answer,
        suffix=args.suffix,
        delay=args.delay,
    )
    print(f"sdk partner listening on {url}", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
