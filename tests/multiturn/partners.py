"""Partners that ask a question and take the answer, each opening a follow-up stream its own
way, built on the official a2a-sdk 1.3 server.

A first message gets a task that asks `QUESTION` (input-required). The answer `AGAIN` makes
the partner ask once more (`QUESTION_AGAIN`); any other answer completes the task with an
artifact `greeting` holding `greet(answer)`. What differs is the first event of a follow-up
stream:

- `status`: a status update (WORKING), no Task first, as the a2a-sdk 1.3 server does by
  default, and (with `protocol="0.3"`) as the official 0.3 SDKs (JS 0.3.13, a2a-sdk 0.3.26)
  do on the 0.3 wire;
- `snapshot`: the stored Task, still INPUT_REQUIRED, then WORKING, artifacts and the new
  state, as the JS SDK 1.3.0 server does.

Run as its own process (for the CLI tests, which need the partner outside the test's loop
only when the test itself blocks):

    python -m tests.multiturn.partners --opening snapshot --protocol 1.0 --port 0
"""

from __future__ import annotations

from collections.abc import Callable

from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentSkill,
)
from starlette.applications import Starlette

from tests.sdk_agents import open_task, sdk_agent

QUESTION = "What is your name?"
QUESTION_AGAIN = "Once more, please: what is your name?"
AGAIN = "again"
OPENINGS = ("status", "snapshot")


def greet(name: str) -> str:
    """The partner's answer to `name`."""
    return f"Hello, {name}!"


class AskingExecutor(AgentExecutor):
    """Asks, takes the answer (asking again on `AGAIN`), opening follow-ups as `opening` says."""

    def __init__(self, opening: str) -> None:
        self.opening = opening

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        current = context.current_task
        updater, text = await open_task(context, event_queue)
        if current is None:
            await updater.requires_input(updater.new_agent_message([new_text_part(QUESTION)]))
            return
        if self.opening == "snapshot":
            await event_queue.enqueue_event(current)
        await updater.start_work()
        if text == AGAIN:
            await updater.requires_input(updater.new_agent_message([new_text_part(QUESTION_AGAIN)]))
            return
        await updater.add_artifact([new_text_part(greet(text))], name="greeting", last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def asking_partner(
    *, opening: str, protocol: str = "1.0", binding: str = "JSONRPC"
) -> Callable[[str], Starlette]:
    """A builder (URL → app) of the partner that opens follow-ups with `opening`, speaking
    `protocol` over `binding` ("JSONRPC" or "HTTP+JSON", the latter 1.0 only)."""

    def build(url: str) -> Starlette:
        return sdk_agent(
            url,
            AskingExecutor(opening),
            name=f"asker-{opening}-{protocol}-{binding.lower()}",
            description="asks for a name, then greets it",
            skill=AgentSkill(id="greet", name="Greet", description="greets", tags=["greet"]),
            binding=binding,
            version=protocol,
        )

    return build
