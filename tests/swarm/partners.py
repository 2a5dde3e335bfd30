"""Scripted partners for the swarm tests: hubs whose one skill answers a fixed text after a
delay, or fails, served on real loopback sockets."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
from litestar import Litestar

from hub.config import ServerSettings, Settings, StoreSettings
from hub.registry import Registry, load_registry
from hub.server import create_app
from hub.skills import SkillContext, skill
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback


def scripted(
    answer: str | None, *, delay: float = 0.0, tags: tuple[str, ...] = ()
) -> Callable[[str], Litestar]:
    """A partner that answers `answer` after `delay` seconds (None: fails); `{text}` in the
    answer is replaced by the message's text."""

    @skill(id="work", description="answers after a delay", tags=list(tags))
    async def work(ctx: SkillContext) -> str:
        await anyio.sleep(delay)
        if answer is None:
            raise ctx.fail("scripted failure")
        return answer.replace("{text}", ctx.text)

    def build(url: str) -> Litestar:
        settings = Settings(
            server=ServerSettings(public_url=url),
            store=StoreSettings(kind="memory"),
            default_skill="work",
        )
        return create_app(settings, store=MemoryTaskStore(), skills={"work": work})

    return build


@asynccontextmanager
async def partner_registry(
    tmp_path: Path, partners: dict[str, tuple[Callable[[str], Litestar], tuple[str, ...]]]
) -> AsyncIterator[tuple[Registry, dict[str, str]]]:
    """Serve each partner and write an agents.yaml naming them (with their tags)."""
    async with AsyncExitStack() as stack:
        urls = {
            name: await stack.enter_async_context(serve_on_loopback(build))
            for name, (build, _) in partners.items()
        }
        lines = ["version: 1", "agents:"]
        for name, (_, tags) in partners.items():
            lines += [f"  - name: {name}", f"    url: {urls[name]}"]
            if tags:
                lines.append(f"    tags: [{', '.join(tags)}]")
        path = tmp_path / "agents.yaml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        yield load_registry(path), urls
