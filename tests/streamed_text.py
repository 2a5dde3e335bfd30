"""Agents that stream their answer as appended text chunks, the way a partner relaying a
language model's tokens does: a hub skill and a partner on the official a2a-sdk."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types.a2a_pb2 import AgentSkill
from litestar import Litestar
from starlette.applications import Starlette

from hub.testing import ScriptedAgent, stream
from tests.sdk_agents import open_task, sdk_agent

__all__ = ["CHUNKS", "REPEATS", "WHOLE", "hub_tokens", "sdk_tokens", "tokens", "tokens_agent"]

CHUNKS = ("Hel", "lo", ", wor", "ld!")
"""The chunks every agent here streams, in order, each appended to the one artifact."""

WHOLE = "".join(CHUNKS)

REPEATS = ("ha", "ha", "\n", "\n", "ha")
"""Chunks that repeat, as tokens do: streamed for the message `repeat`."""


def _chunks(text: str) -> Sequence[str]:
    return REPEATS if text == "repeat" else CHUNKS


def tokens_agent() -> ScriptedAgent:
    """The hub's scripted agent that streams its answer."""
    return ScriptedAgent(
        "tokens",
        skill_id="tokens",
        description="streams its answer in chunks",
        reply=stream(*CHUNKS),
        replies={"repeat": stream(*REPEATS)},
    )


tokens = tokens_agent().as_skill()
"""Its one skill, for hubs that serve it beside others."""


def hub_tokens(url: str) -> Litestar:
    """A hub whose one skill is `tokens`, tasks in memory."""
    return tokens_agent().app(url)


class TokenExecutor(AgentExecutor):
    """Answers with one artifact, `answer`, streamed as appended chunks (`CHUNKS`, or
    `REPEATS` for `repeat`); the SDK stores one part per chunk."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater, _ = await open_task(context, event_queue)
        await updater.start_work()
        text = context.get_user_input()
        chunks = _chunks(text)
        for number, chunk in enumerate(chunks):
            await updater.add_artifact(
                [new_text_part(chunk)],
                artifact_id="answer",
                name="answer",
                append=number > 0,
                last_chunk=number == len(chunks) - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def sdk_tokens(*, streaming: bool = True) -> Callable[[str], Starlette]:
    """A builder of the a2a-sdk partner that streams its answer (its card says whether it
    streams: a partner that does not is sent the message and answers with its stored task)."""

    def build(url: str) -> Starlette:
        return sdk_agent(
            url,
            TokenExecutor(),
            name="tokens",
            description="streams its answer in chunks",
            skill=AgentSkill(id="tokens", name="Tokens", description="tokens", tags=["tokens"]),
            streaming=streaming,
        )

    return build
