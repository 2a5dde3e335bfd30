"""A scripted partner agent: a real A2A agent, served by the hub's own code, whose answers a
test chooses (text, streamed chunks, a question, a failure, a delay)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import KW_ONLY, dataclass, field

import anyio
from litestar import Litestar

from hub.app import create_app
from hub.config import CardSettings, ServerSettings, Settings, StoreSettings
from hub.protocol import Message
from hub.skills import Skill, SkillContext, skill
from hub.store import MemoryTaskStore
from hub.testing.loopback import serve_on_loopback

__all__ = ["Reply", "ScriptedAgent", "answer", "ask", "fail", "stream"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """What a scripted agent does with one message, in this order: report `progress` (a
    WORKING status), wait `delay` seconds (`math.inf`: until the task is canceled), ask
    `question` and play `then` on the answer, or fail with `failure`, or answer `chunks`
    (one artifact, each chunk appended to it). `{text}` in the chunks and the failure is
    replaced by the message's text. Made by `answer`, `stream`, `ask` and `fail`."""

    chunks: tuple[str, ...] = ()
    failure: str | None = None
    question: str | None = None
    then: Reply | None = None
    progress: str | None = None
    delay: float = 0.0

    async def play(self, ctx: SkillContext, text: str, seen: list[Message]) -> AsyncIterator[str]:
        """The chunks of the answer to `text`; the messages answered to a question are
        added to `seen`."""
        if self.progress is not None:
            await ctx.progress(self.progress)
        if self.delay > 0:
            await anyio.sleep(self.delay)
        if self.question is not None:
            reply = await ctx.ask(self.question)
            seen.append(reply)
            then = self.then or answer("{text}")
            async for chunk in then.play(ctx, reply.text(), seen):
                yield chunk
            return
        if self.failure is not None:
            raise ctx.fail(self.failure.replace("{text}", text))
        for chunk in self.chunks:
            yield chunk.replace("{text}", text)


def answer(text: str, *, delay: float = 0.0, progress: str | None = None) -> Reply:
    """Answer `text` (`{text}`: the message's text) after `delay` seconds, having reported
    `progress` first when given."""
    return Reply(chunks=(text,), delay=delay, progress=progress)


def stream(*chunks: str, delay: float = 0.0, progress: str | None = None) -> Reply:
    """Answer one artifact streamed as `chunks`, each appended to the one before."""
    return Reply(chunks=chunks, delay=delay, progress=progress)


def ask(question: str, *, then: Reply | None = None) -> Reply:
    """Ask `question` (the task waits in input-required), then play `then` on the answer
    (its `{text}` is the answer's text; by default the answer is echoed)."""
    return Reply(question=question, then=then)


def fail(message: str = "scripted failure", *, delay: float = 0.0) -> Reply:
    """Fail the task with `message` as its status message, after `delay` seconds."""
    return Reply(failure=message, delay=delay)


@dataclass(eq=False)
class ScriptedAgent:
    """An A2A agent whose answers the test scripts: the hub's own server with one skill,
    tasks in memory. It speaks A2A 1.0 and 0.3 over JSON-RPC and HTTP+JSON, streams, and
    cancels, as any hub does.

    `replies` maps a message's whole text to its reply; any other message gets `reply`
    (by default the message's text echoed). `messages` records every message the agent
    was sent, answers to its questions included.

    Example:
        async with ScriptedAgent("billing", reply=answer("paid")).serve() as url:
            ...
    """

    name: str = "scripted"
    _: KW_ONLY
    reply: Reply = field(default_factory=lambda: answer("{text}"))
    replies: Mapping[str, Reply] = field(default_factory=dict)
    description: str = "a scripted agent"
    """The card's description, and its skill's."""
    skill_id: str = "scripted"
    tags: Sequence[str] = ()
    """The skill's tags, which a router reads from the card."""
    streaming: bool = True
    """What the card says: False makes a hub send it SendMessage, never a stream."""
    messages: list[Message] = field(default_factory=list, init=False)

    def as_skill(self) -> Skill:
        """The one skill the agent serves."""

        @skill(id=self.skill_id, description=self.description, tags=list(self.tags))
        async def scripted(ctx: SkillContext) -> AsyncIterator[str]:
            self.messages.append(ctx.message)
            text = ctx.text
            async for chunk in self.replies.get(text, self.reply).play(ctx, text, self.messages):
                yield chunk

        return scripted

    def app(self, url: str) -> Litestar:
        """The agent's ASGI app, its card naming `url`."""
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            card=CardSettings(
                name=self.name, description=self.description, streaming=self.streaming
            ),
            default_skill=self.skill_id,
        )
        return create_app(
            settings, store=MemoryTaskStore(), skills={self.skill_id: self.as_skill()}
        )

    def serve(self) -> AbstractAsyncContextManager[str]:
        """Serve the agent on a loopback socket (`serve_on_loopback`); yields its URL."""
        return serve_on_loopback(self.app)
